/**
 * Imported first by the benches that train: their runs keep the response cache and the test
 * seals in a temporary directory of their own, so a bench neither reads the machine's (a cached
 * answer would skip the latency it measures, a seal the test split it scores) nor adds to them.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skillopt-bench-cache-'));
process.env.XDG_CACHE_HOME = dir;
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));

/** The override that gives a run its own seal directory: each bench run scores its test split, whatever ran before it. */
export function ownSeals(runDir: string): string {
  return `evaluation.audit.seal_dir=${runDir}.seals`;
}
