/**
 * A staged night made directly (no model): a state folder with one night whose manifest pins
 * the given live documents, as `skillopt sleep run` writes it, for the adoption tests.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readDocument } from '../../src/sleep/documents/documents.ts';
import { reserveNightDir, writeManifest } from '../../src/sleep/staging/staging.ts';
import { tmpDir } from '../helpers/tmp.ts';

export interface StagedDoc {
  name: string;
  kind: 'skill' | 'memory';
  /** Relative to the test's root. */
  file: string;
  /** The live bytes (undefined: the file does not exist). */
  live?: string;
  proposed: string;
  mode?: number;
}

export function stagedNight(
  docs: StagedDoc[],
  root = fs.realpathSync(tmpDir('skillopt-adopt-')),
): { root: string; stateDir: string; night: string; paths: string[] } {
  const stateDir = path.join(root, 'state');
  const paths = docs.map((d) => path.join(root, d.file));
  docs.forEach((d, i) => {
    if (d.live === undefined) return;
    fs.mkdirSync(path.dirname(paths[i]!), { recursive: true });
    fs.writeFileSync(paths[i]!, d.live, { mode: d.mode ?? 0o644 });
    fs.chmodSync(paths[i]!, d.mode ?? 0o644);
  });
  const night = reserveNightDir(stateDir, new Date('2026-11-30T19:00:00'));
  const proposals = docs.map((d, i) => {
    const live = readDocument(paths[i]!, d.kind, d.name);
    return {
      name: d.name,
      kind: d.kind,
      livePath: live.path,
      liveRealpath: live.realpath,
      liveSha256: live.sha256,
      text: d.proposed,
      action: 'accept_new_best',
      baseline: 0.25,
      candidate: 0.75,
    };
  });
  writeManifest(
    night,
    { night: 1, project: root, created_at: '2026-11-30T19:00:00.000Z', backend: 'sim:sim-1' },
    proposals,
  );
  return { root, stateDir, night, paths };
}

/** The bytes and mode of each file (null when absent). */
export function snapshot(paths: string[]): ({ text: string; mode: number } | null)[] {
  return paths.map((p) =>
    fs.existsSync(p) ? { text: fs.readFileSync(p, 'utf8'), mode: fs.statSync(p).mode & 0o777 } : null,
  );
}
