/**
 * The simulated target reads the skill's token count only when its answer depends on it: the
 * demo's first rollouts run before the tokenizer's tables are loaded, and a long skill still
 * gets its exact count.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { TS_IMPORT } from '../../helpers/cli.ts';

const SRC = path.resolve(import.meta.dirname, '../../../src');
const url = (file: string) => JSON.stringify(pathToFileURL(path.join(SRC, file)).href);

/** Rolls out the sim's first `n` test items under `skill` in a new process; whether the tokenizer was loaded after. */
function tokenizerLoadedBy(skill: string, n: number): boolean {
  const probe = [
    "import Module from 'node:module';",
    `const { SimEnv } = await import(${url('envs/sim/env.ts')});`,
    `const { SimModel } = await import(${url('model/sim/backend.ts')});`,
    'const env = new SimEnv({ n_train: 10, n_val: 10, n_test: 16, noise: 0, data_seed: 0 });',
    "const target = new SimModel('sim-1', 42, 0, { harmful: 0.3, irrelevant: 0.35, vague: 0.15, blame: 0.35 });",
    'const { test } = await env.load();',
    `for (const item of test.slice(0, ${n})) await env.rollout(item, ${JSON.stringify(skill)}, { target, seed: 1 });`,
    "console.log(Object.keys(Module._cache).some((k) => k.includes('/gpt-tokenizer/')));",
  ].join('\n');
  const r = spawnSync(process.execPath, [...TS_IMPORT, '--input-type=module', '-e', probe], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as boolean;
}

describe("the sim's token count", () => {
  it("is not needed for the demo's first rollouts (a skill has at most as many tokens as bytes: the draws clear that bound)", () => {
    const seed =
      '# Answering questions about our sites\n\nAnswer each question with the fact asked for, and nothing else.\n\n- Write every date as YYYY-MM-DD.\n';
    assert.equal(tokenizerLoadedBy(seed, 8), false);
  });

  it('is counted exactly for a skill long enough for its length to matter', () => {
    const long = `- Write every date as YYYY-MM-DD.\n${'- Keep the answer short and check it twice before replying.\n'.repeat(40)}`;
    assert.equal(tokenizerLoadedBy(long, 8), true);
  });
});
