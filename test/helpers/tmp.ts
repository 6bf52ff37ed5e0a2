import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const made: string[] = [];

/** A fresh temporary directory, removed when the process exits. */
export function tmpDir(prefix = 'skillopt-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  // One exit listener for all of them.
  if (made.length === 0)
    process.on('exit', () => {
      for (const d of made) fs.rmSync(d, { recursive: true, force: true });
    });
  made.push(dir);
  return dir;
}

/**
 * Each test process that makes temporary folders (every one that trains or evaluates does) has a
 * SKILLOPT_HOME of its own: the activity markers of the runs a test starts, in this process or in
 * a `skillopt` program it starts, stay out of the user's `~/.skillopt`, where the user's nights
 * would see them and a real run's markers would make a test's night skip.
 */
process.env.SKILLOPT_HOME = tmpDir('skillopt-home-');

/** Writes files (relative path → text) under `dir`. */
export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    const file = path.join(dir, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
  }
}
