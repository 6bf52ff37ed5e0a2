import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import {
  HttpError,
  isFileInside,
  listInside,
  openInside,
  openedPath,
  readInside,
} from '../../src/web/files/safe-path.ts';
import { tmpDir } from '../helpers/tmp.ts';

describe('opening a file of a run', () => {
  const base = fs.realpathSync(tmpDir('skillopt-safe-'));
  const outside = fs.realpathSync(tmpDir('skillopt-safe-outside-'));
  fs.writeFileSync(path.join(base, 'ok.json'), '{"a":1}');
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'secret');
  fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(base, 'link.txt'));
  fs.symlinkSync(path.join(base, 'ok.json'), path.join(base, 'inner-link.json'));
  fs.symlinkSync(outside, path.join(base, 'linked-dir'));
  fs.mkdirSync(path.join(base, 'dir'));
  execFileSync('mkfifo', [path.join(base, 'pipe')]);

  const refusal = (file: string) => {
    try {
      openInside(base, path.join(base, file));
    } catch (err) {
      assert.ok(err instanceof HttpError);
      assert.equal(err.status, 403);
      return err.message;
    }
    assert.fail(`${file} was opened`);
  };

  it('reads a regular file, and a link that stays inside', () => {
    assert.equal(readInside(base, path.join(base, 'ok.json'), 100)?.data.toString(), '{"a":1}');
    assert.equal(readInside(base, path.join(base, 'inner-link.json'), 3)?.data.toString(), '{"a');
    assert.equal(readInside(base, path.join(base, 'missing.json'), 100), undefined);
  });

  it('refuses links out of the base, through a file or a directory, and whatever is not a regular file', () => {
    assert.match(refusal('link.txt'), /^link\.txt resolves outside the run directory/);
    assert.match(refusal('linked-dir/secret.txt'), /^linked-dir\/secret\.txt resolves outside the run directory/);
    assert.match(refusal('pipe'), /^pipe is a named pipe, not a regular file/);
    assert.match(refusal('dir'), /^dir is a directory, not a regular file/);
    assert.deepEqual(
      [
        isFileInside(base, path.join(base, 'link.txt')),
        isFileInside(base, path.join(base, 'pipe')),
        isFileInside(base, path.join(base, 'ok.json')),
      ],
      [false, false, true],
    );
    assert.deepEqual(listInside(base, path.join(base, 'linked-dir')), [], 'a directory outside is not listed');
  });

  it('knows where an open file is even after a writer replaced it (an atomic rename)', () => {
    const file = path.join(base, 'history.json');
    fs.writeFileSync(file, '[]');
    const open = openInside(base, file)!;
    try {
      fs.writeFileSync(`${file}.tmp`, '[1]');
      fs.renameSync(`${file}.tmp`, file);
      const where = openedPath(open.fd);
      if (where !== undefined) assert.equal(where, file);
    } finally {
      fs.closeSync(open.fd);
    }
  });
});
