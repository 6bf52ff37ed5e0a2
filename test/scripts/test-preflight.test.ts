/** The check before the suite: what is missing is said in one line, with the command that installs it. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { it } from 'node:test';
import { ROOT, TS_IMPORT } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';

const preflight = (env: Record<string, string>) =>
  spawnSync(process.execPath, [...TS_IMPORT, path.join(ROOT, 'scripts/test-preflight.ts')], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });

it('names every missing program in one line, with the script that installs them', () => {
  const r = preflight({ SKILLOPT_CHROMIUM: path.join(tmpDir(), 'no-chromium'), PATH: tmpDir() });
  assert.equal(r.status, 1);
  assert.equal(
    r.stderr,
    'The test suite needs chromium, redis-server: install them with scripts/system-deps.sh (Debian: apt-get install chromium redis-server), then run npm test again.\n',
  );
});

it('says nothing when all is there', () => {
  const r = preflight({});
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, '');
});
