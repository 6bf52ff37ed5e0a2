// Where the test suite keeps its temporary files (scripts/test.js, bench/test-cpu.ts).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/**
 * A temporary directory in memory (Linux's /dev/shm) for the files of the tests, when it can hold
 * programs that run: a training flushes each file it writes to the disk (fsync), which costs a
 * sixth of a training's CPU time on a disk and most of its wall time, and nothing in memory.
 * Undefined when there is none, or when TMPDIR names one already.
 */
export function memoryTempDir() {
  if (process.env.TMPDIR || !fs.existsSync('/dev/shm')) return undefined;
  let dir;
  try {
    dir = fs.mkdtempSync('/dev/shm/skillopt-test-');
    const probe = path.join(dir, 'probe.sh');
    fs.writeFileSync(probe, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    if (spawnSync(probe).status === 0) {
      fs.rmSync(probe);
      return dir;
    }
  } catch {}
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  return undefined;
}
