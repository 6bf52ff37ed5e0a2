/**
 * Loaded with `node --import` into a child process: kills the process (SIGKILL, so nothing of it
 * runs after) just before its Nth change to the file system under a folder, as a power cut or a
 * `kill -9` would. `SKILLOPT_TEST_CRASH_ROOT` is the folder, `SKILLOPT_TEST_CRASH_AT` the N;
 * `SKILLOPT_TEST_CRASH_COUNT=file` instead writes the number of changes the run made to that
 * file when it exits, so a test knows how many points there are to crash at.
 *
 * A change is a call that changes what the folder holds: creating a file (opening it to write),
 * writing a whole file, renaming, linking, removing a file or a folder, making a folder, changing
 * a mode. Writes and flushes through a descriptor are not counted apart: until the file they
 * fill is renamed into place, a crash among them leaves what a crash before the rename leaves.
 */
import fs from 'node:fs';
import path from 'node:path';

const root = process.env.SKILLOPT_TEST_CRASH_ROOT;
const at = Number(process.env.SKILLOPT_TEST_CRASH_AT || 0);
const countFile = process.env.SKILLOPT_TEST_CRASH_COUNT;
const realWriteFileSync = fs.writeFileSync;

if (root) {
  let count = 0;
  const under = (p) => {
    if (p === undefined || p === null || typeof p === 'number') return false;
    const abs = path.resolve(String(p instanceof URL ? p.pathname : p));
    return abs === root || abs.startsWith(`${root}${path.sep}`);
  };
  const step = () => {
    count++;
    if (count === at) process.kill(process.pid, 'SIGKILL');
  };
  const writes = (flags) =>
    flags !== undefined && flags !== 'r' && flags !== 'rs' && !(typeof flags === 'number' && (flags & 3) === 0);
  const wrapPath = (name, nPaths = 1) => {
    const real = fs[name];
    fs[name] = function (...args) {
      if (args.slice(0, nPaths).some(under)) step();
      return real.apply(this, args);
    };
  };
  for (const name of [
    'writeFileSync',
    'appendFileSync',
    'mkdirSync',
    'rmSync',
    'rmdirSync',
    'unlinkSync',
    'chmodSync',
    'symlinkSync',
  ])
    wrapPath(name);
  for (const name of ['renameSync', 'linkSync', 'copyFileSync']) wrapPath(name, 2);
  const realOpen = fs.openSync;
  fs.openSync = function (p, flags, mode) {
    if (under(p) && writes(flags)) step();
    return realOpen.call(this, p, flags, mode);
  };
  if (countFile) process.on('exit', () => realWriteFileSync(countFile, String(count)));
}
