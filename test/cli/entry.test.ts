/**
 * Which code `skillopt` runs: the build when it is complete and no source changed since it
 * started, else (in a checkout) the sources; an installed package (no sources) runs its build.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { BUILD_STAMP, entryOf } from '../../bin/entry.js';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';

const at = (file: string, seconds: number) => fs.utimesSync(file, seconds, seconds);

function checkout(): string {
  const root = tmpDir('skillopt-entry-');
  writeFiles(root, { 'src/cli/main.ts': '', 'src/web/static/app.js': '', 'dist/bundle/main.js': '' });
  at(path.join(root, 'src/cli/main.ts'), 1000);
  at(path.join(root, 'src/web/static/app.js'), 1000);
  return root;
}

const build = (root: string, startedAt: number) => {
  writeFiles(root, { [BUILD_STAMP]: '' });
  at(path.join(root, BUILD_STAMP), startedAt);
};

describe('the entry point', () => {
  it('runs the sources of a checkout never built', () => {
    const root = checkout();
    assert.deepEqual(entryOf(root), { url: `file://${path.join(root, 'src/cli/main.ts')}`, compiled: false });
  });

  it('runs the build when no source changed since it started', () => {
    const root = checkout();
    build(root, 2000);
    assert.deepEqual(entryOf(root), { url: `file://${path.join(root, 'dist/bundle/main.js')}`, compiled: true });
  });

  it('runs the sources once any file under src/ is newer than the build, however deep', () => {
    const root = checkout();
    build(root, 2000);
    at(path.join(root, 'src/web/static/app.js'), 3000);
    assert.equal(entryOf(root).compiled, false);
  });

  it('runs the build of an installed package (no sources), and says what is wrong when it has none', () => {
    const root = checkout();
    fs.rmSync(path.join(root, 'src'), { recursive: true });
    assert.throws(() => entryOf(root), /holds no complete build and there are no sources: reinstall the package/);
    build(root, 2000);
    assert.equal(entryOf(root).compiled, true);
  });
});
