/**
 * Prompt caching bench: what the rollouts of a skill of the paper's length (about 1,500 tokens)
 * are billed for their input, with `prompt_cache` on and off, through the whole model stack over
 * real HTTP against the fake providers on 127.0.0.1, which emulate each provider's cache as it
 * documents it (`test/helpers/fake-prompt-cache.ts`: Anthropic's breakpoints and minimum prefix,
 * OpenAI's automatic prefix cache; a prefix is readable once the request that wrote it is
 * answered). The workload is a gate's: two candidate skills, each on the same 80 items, 8 calls in
 * flight, 100 ms a reply. The answers must be the same with and without caching.
 *
 *   npm run bench:cache [-- --items 80 --concurrency 8]
 */
import './isolated-cache.ts';
import '../src/builtins.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { loadConfig } from '../src/config/load.ts';
import { priceOf } from '../src/model/prices.ts';
import { buildRoleModels } from '../src/model/stack.ts';
import type { ChatRequest, Usage } from '../src/model/types.ts';
import { startFakeProvider } from '../test/helpers/fake-provider.ts';

const { values: args } = parseArgs({
  options: { items: { type: 'string', default: '80' }, concurrency: { type: 'string', default: '8' } },
});
const ITEMS = Number(args.items);
const CONCURRENCY = Number(args.concurrency);
const KEYS = { OPENAI_API_KEY: 'sk-bench', ANTHROPIC_API_KEY: 'sk-ant-bench' };

const seed = fs.readFileSync(path.resolve(import.meta.dirname, '../configs/sim/seed_skill.md'), 'utf8');
const rules = Array.from(
  { length: 110 },
  (_, i) =>
    `- Rule ${i + 1}: when a question gives a quantity in a unit other than the one asked for, convert it first.`,
);
const SKILLS = [`${seed}\n${rules.join('\n')}\n`, `${seed}\n${rules.join('\n')}\n- Rule 111: state the unit.\n`];

const request = (skill: string, i: number): ChatRequest => ({
  purpose: 'rollout',
  system: `Answer the question.\n\n## Skill\n\n${skill}\n\nPut the final answer in <answer></answer>.`,
  skill,
  messages: [{ role: 'user', content: `Question ${i}: how many grams are in ${i + 1} kilograms?` }],
});

/** USD billed for the input: plain input, cache reads and cache writes at their rates. */
function inputCost(u: Usage, model: string): number {
  const p = priceOf(model, undefined)!;
  const written = u.cacheWrite ?? 0;
  const plain = u.input - u.cached - written;
  return (plain * p.input + u.cached * (p.cached_input ?? p.input) + written * (p.cache_write ?? p.input)) / 1e6;
}

async function run(backend: 'anthropic' | 'openai_chat', model: string, promptCache: boolean) {
  const fake = await startFakeProvider({
    caching: true,
    latencyMs: 100,
    respond: () => ({ text: '<answer>ok</answer>', usage: { input: 0, output: 12 } }),
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skillopt-bench-cache-'));
  const file = path.join(dir, 'config.yaml');
  fs.writeFileSync(
    file,
    stringify({
      model: {
        target: {
          backend,
          model,
          base_url: backend === 'anthropic' ? fake.url : `${fake.url}/v1`,
          concurrency: CONCURRENCY,
          prompt_cache: promptCache,
          ...(backend === 'openai_chat' ? { options: { provider: 'openai' } } : {}),
        },
      },
      cache: { mode: 'off' },
    }),
  );
  const loaded = loadConfig(file, { environment: KEYS, cwd: dir });
  const models = await buildRoleModels(loaded.config, { environment: KEYS });
  const usages: Usage[] = [];
  const answers: string[] = [];
  try {
    for (const skill of SKILLS) {
      const replies = await Promise.all(
        Array.from({ length: ITEMS }, (_, i) => models.target.complete(request(skill, i))),
      );
      for (const r of replies) {
        usages.push(r.usage);
        answers.push(r.text);
      }
    }
  } finally {
    models.close();
    await fake.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const cost = usages.reduce((s, u) => s + inputCost(u, model), 0);
  const input = usages.reduce((s, u) => s + u.input, 0);
  const cached = usages.reduce((s, u) => s + u.cached, 0);
  return { cost, cachedShare: cached / input, answers };
}

console.log(
  `Prompt caching: ${SKILLS.length} skills × ${ITEMS} rollouts, ${CONCURRENCY} in flight, 100 ms a reply, over HTTP against the caching fakes.\n`,
);
console.log('| provider, model | billed input, caching on | off | ratio | cached share on | goal |');
console.log('| --- | --- | --- | --- | --- | --- |');
for (const [backend, model] of [
  ['anthropic', 'claude-sonnet-4-5'],
  ['openai_chat', 'gpt-5.4'],
] as const) {
  const on = await run(backend, model, true);
  const off = await run(backend, model, false);
  if (on.answers.join('\n') !== off.answers.join('\n')) throw new Error(`${backend}: the answers differ with caching`);
  const ratio = on.cost / off.cost;
  console.log(
    `| ${backend}, ${model} | $${on.cost.toFixed(4)} | $${off.cost.toFixed(4)} | ${ratio.toFixed(2)}x | ${(on.cachedShare * 100).toFixed(0)}% | ${backend === 'anthropic' ? '≤ 0.5x' : ''} |`,
  );
}
console.log(
  '\nOpenAI caches a long prompt whether or not it is asked: `prompt_cache: false` only leaves out the key, so its two columns measure the layout (the skill before the item), not the setting.',
);
