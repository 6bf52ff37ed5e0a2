import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ROOT, TS_IMPORT } from '../helpers/cli.ts';
import { screenshotPath } from './browser.ts';

describe('the browser tests', () => {
  it('are counted as skipped by the test runner when chromium is missing', () => {
    // Without NODE_TEST_CONTEXT, which this runner sets: the child reports as a user's run would.
    const { NODE_TEST_CONTEXT: _, ...env } = process.env;
    const res = spawnSync(process.execPath, [...TS_IMPORT, '--test', path.join(ROOT, 'test/web/browser.test.ts')], {
      cwd: ROOT,
      env: { ...env, SKILLOPT_CHROMIUM: path.join(os.tmpdir(), 'no-such-chromium') },
      encoding: 'utf8',
    });
    assert.equal(res.status, 0, res.stdout + res.stderr);
    const count = (name: string) => Number(new RegExp(`^# ${name} (\\d+)$`, 'm').exec(res.stdout)?.[1]);
    assert.ok(count('tests') > 0, res.stdout);
    assert.equal(count('skipped'), count('tests'), res.stdout);
    assert.match(res.stdout, /# SKIP .*no-such-chromium is not installed/);
  });

  it('write their screenshots under the system temporary directory, not into the checkout', () => {
    const file = path.resolve(screenshotPath('x.png'));
    assert.ok(file.startsWith(path.join(os.tmpdir(), path.sep)), file);
    assert.ok(!file.startsWith(ROOT + path.sep), file);
  });
});
