/**
 * The fast lane's guard (scripts/no-child-processes.js): in a process that runs a test file, any
 * way of starting a program fails at once, naming the program and where the test belongs; the
 * runner's own process (no NODE_TEST_CONTEXT) is left alone, since it starts the test files.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';

const ROOT = path.resolve(import.meta.dirname, '../..');
const probe = (how: string, context: string | undefined) => {
  const code = `import * as cp from 'node:child_process'; import d from 'node:child_process';
try { ${how}; console.log('started'); } catch (e) { console.log(e.message); }`;
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  if (context) env.NODE_TEST_CONTEXT = context;
  const r = spawnSync(
    process.execPath,
    ['--import', './scripts/no-child-processes.js', '--input-type=module', '-e', code],
    {
      cwd: ROOT,
      env,
      encoding: 'utf8',
    },
  );
  return r.stdout.trim();
};

test('in a test process, every way of starting a program is refused with the reason', () => {
  for (const how of [
    "cp.spawnSync('true')",
    "cp.spawn('true')",
    "cp.execFileSync('true')",
    "d.execSync('true')",
    "d.fork('x.js')",
  ]) {
    const out = probe(how, 'child');
    assert.match(
      out,
      /^the fast lane starts no program, and this test started "(true|x\.js)" through child_process\.\w+/,
      how,
    );
    assert.match(out, /scripts\/test\.js \(SLOW\)/);
  }
});

test('the runner, which starts the test files, may start programs', () => {
  assert.equal(probe("cp.spawnSync('true')", undefined), 'started');
});
