/**
 * Run before the test suite: the programs it needs beside Node.js are checked first, and what is
 * missing is said in one line with the command that installs it, instead of failing test by test.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { findPython } from '../src/envs/python.ts';

const missing: string[] = [];
const chromium = process.env.SKILLOPT_CHROMIUM ?? '/usr/bin/chromium';
if (!fs.existsSync(chromium)) missing.push('chromium');
if (spawnSync('redis-server', ['--version']).error) missing.push('redis-server');
try {
  findPython('', { who: 'the tests', modules: ['openpyxl', 'pandas'], install: '', optionKey: 'env.python' });
} catch {
  missing.push('python3-openpyxl', 'python3-pandas');
}
if (missing.length > 0) {
  process.stderr.write(
    `The test suite needs ${missing.join(', ')}: install them with scripts/system-deps.sh (Debian: apt-get install ${missing.join(' ')}), then run npm test again.\n`,
  );
  process.exit(1);
}
