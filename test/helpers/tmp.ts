import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A fresh temporary directory, removed when the process exits. */
export function tmpDir(prefix = 'skillopt-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Writes files (relative path → text) under `dir`. */
export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    const file = path.join(dir, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
  }
}
