/**
 * A staged night whose skill is a package (made directly, no model): the live package pinned
 * file by file as a night pins it, the proposed package, and a project memory file beside it,
 * for the adoption tests of packages.
 */
import fs from 'node:fs';
import path from 'node:path';
import { livePackagePins } from '../../src/sleep/adoption/package.ts';
import { readDocument } from '../../src/sleep/documents/documents.ts';
import { reserveNightDir, writeManifest } from '../../src/sleep/staging/staging.ts';
import { fileFromBytes, type PackageFile } from '../../src/skill/package/package.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { type Tree, writeTree } from '../deploy/package-fixture.ts';

export const MEMORY = { live: '# Notes\n', proposed: '# Notes\nlearned\n' };

export function stagedPackageNight(
  live: Tree,
  proposed: Tree,
  root = fs.realpathSync(tmpDir('skillopt-adopt-pkg-')),
): { root: string; stateDir: string; night: string; liveDir: string; memory: string } {
  const stateDir = path.join(root, 'state');
  const liveDir = path.join(root, 'skills', 'pdf-forms');
  const memory = path.join(root, 'project', 'CLAUDE.md');
  writeTree(liveDir, live);
  fs.mkdirSync(path.dirname(memory), { recursive: true });
  fs.writeFileSync(memory, MEMORY.live);
  const night = reserveNightDir(stateDir, new Date('2026-11-30T19:00:00'));
  const files = new Map<string, PackageFile>();
  let skill = '';
  for (const [rel, value] of Object.entries(proposed)) {
    const { data, mode } = typeof value === 'string' || Buffer.isBuffer(value) ? { data: value, mode: 0o644 } : value;
    const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data, 'utf8');
    if (rel === 'SKILL.md') skill = bytes.toString('utf8');
    else files.set(rel, fileFromBytes(bytes, mode));
  }
  const skillDoc = readDocument(path.join(liveDir, 'SKILL.md'), 'skill', 'pdf-forms');
  const memoryDoc = readDocument(memory, 'memory', 'CLAUDE.md');
  const scores = { action: 'accept_new_best', baseline: 0.25, candidate: 0.75 };
  writeManifest(night, { night: 1, project: root, created_at: '2026-11-30T19:00:00.000Z', backend: 'sim:sim-1' }, [
    {
      name: 'pdf-forms',
      kind: 'skill',
      livePath: skillDoc.path,
      liveRealpath: skillDoc.realpath,
      liveSha256: skillDoc.sha256,
      text: skill,
      ...scores,
      package: { liveDir, liveFiles: livePackagePins(liveDir), files },
    },
    {
      name: 'CLAUDE.md',
      kind: 'memory',
      livePath: memoryDoc.path,
      liveRealpath: memoryDoc.realpath,
      liveSha256: memoryDoc.sha256,
      text: MEMORY.proposed,
      ...scores,
    },
  ]);
  return { root, stateDir, night, liveDir, memory };
}
