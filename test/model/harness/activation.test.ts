/**
 * Activation through the real agent CLIs: the triggers env's rollouts run the real `claude`,
 * `codex` and `copilot` against fake model servers on 127.0.0.1 whose scripted model opens a
 * skill only when the user's message shares words with that skill's description as the CLI listed it. So the
 * description the agent saw decides, a better one raises recall, an overbroad one costs
 * precision, and eight rollouts in parallel each measure their own skill.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TriggersEnv, TriggersOptionsSchema } from '../../../src/envs/triggers/env.ts';
import { activationMetrics } from '../../../src/envs/triggers/metrics.ts';
import type { TriggerQuery } from '../../../src/envs/triggers/trigger-set.ts';
import type { Trajectory } from '../../../src/envs/types.ts';
import { ClaudeCodeHarness } from '../../../src/model/harness/claude-code.ts';
import { CodexHarness } from '../../../src/model/harness/codex.ts';
import { CopilotHarness } from '../../../src/model/harness/copilot.ts';
import { HarnessChatModel, type HarnessModelOptions } from '../../../src/model/harness/harness-model.ts';
import type { ChatModel } from '../../../src/model/types.ts';
import { cliPath, harnessSettings, missingCli } from '../../helpers/agent-cli.ts';
import { fakeAgentServers, type ScriptReply, type Turn } from '../../helpers/fake-agent-server.ts';

const serve = fakeAgentServers();

const skill = (name: string, description: string) =>
  `---\nname: ${name}\ndescription: ${JSON.stringify(description)}\n---\n\n# ${name}\n\nBODY-${name}: build the chart on its own sheet.\n`;

const VAGUE = skill('workbook-charts', 'Helps with data.');
const GOOD = skill(
  'workbook-charts',
  'Build line, bar and pie charts inside Excel workbooks (xlsx). Use when the user wants a chart or plot of sales, revenue, signups or other spreadsheet data.',
);
const BROAD = skill(
  'workbook-charts',
  'Use for any request at all: write a short commit message for staged changes, resize photos for a website, build charts, fill forms.',
);

const QUERIES: TriggerQuery[] = [
  { id: 'q1', query: 'add a line chart of revenue to sales.xlsx', should_trigger: true },
  { id: 'q2', query: 'plot the signups per week as a chart', should_trigger: true },
  { id: 'q3', query: 'write a short commit message for my staged changes', should_trigger: false },
  { id: 'q4', query: 'resize these photos for the website', should_trigger: false },
].map((q) => ({ ...q, type: q.should_trigger ? 'should_trigger' : 'should_not_trigger' }));

const WORDS = (text: string) => new Set(text.toLowerCase().match(/[a-z]{4,}/g) ?? []);

/** The user's message in this turn: the query the test sent. */
const queryOf = (t: Turn) => QUERIES.find((q) => t.text.includes(q.query))!;

/**
 * Each listed skill's description, as the CLI showed it: `- name: description` lines (Claude Code,
 * Codex), inside the request's JSON, where a line break is the two characters `\n`.
 */
function listed(t: Turn): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of t.text.matchAll(/(?:^|\\n|\n)\s*- ([a-z0-9-]+): (.+?)(?=\\n|\n|$)/g))
    if (!out.has(m[1]!)) out.set(m[1]!, m[2]!);
  // Copilot's shape: <name>…</name> then <description>…</description>.
  for (const m of t.text.matchAll(/<name>([a-z0-9-]+)<\/name>(?:\\n|\s)*<description>(.*?)<\/description>/g))
    if (!out.has(m[1]!)) out.set(m[1]!, m[2]!);
  return out;
}

/** The skill the scripted model opens: the listed one sharing the most words with the query, if any. */
function chosen(t: Turn): string | undefined {
  const words = WORDS(queryOf(t).query);
  let best: [string, number] | undefined;
  for (const [name, description] of listed(t)) {
    const shared = [...WORDS(description)].filter((w) => words.has(w)).length;
    if (shared > 0 && (!best || shared > best[1])) best = [name, shared];
  }
  return best?.[0];
}

const OPTIONS = TriggersOptionsSchema.parse({});
const env = new TriggersEnv({ data_path: 'unused', split_seed: 1, limit: 0 } as never, OPTIONS, {
  configDir: '.',
  resolvePath: (_k, v) => v,
});

const MODEL: Omit<HarnessModelOptions, 'backend'> = {
  model: '',
  skillInstall: 'skill',
  skillName: 'skillopt-target',
  skillDescription: 'unused: the skill has its own',
  timeoutMs: 90_000,
};

/** The real Claude Code against the fake server at `url`. */
const claudeTarget = (url: string) =>
  new HarnessChatModel(
    new ClaudeCodeHarness(
      harnessSettings({
        path: cliPath('claude'),
        baseUrl: url,
        model: 'claude-sonnet-4-5',
        env: { ANTHROPIC_API_KEY: 'sk-ant-test' },
      }),
    ),
    { ...MODEL, backend: 'claude_code_exec', model: 'claude-sonnet-4-5' },
  );

async function measure(target: ChatModel, skillText: string, queries = QUERIES): Promise<Trajectory[]> {
  return Promise.all(queries.map((q, i) => env.rollout(q, skillText, { target, seed: 1, sample: i })));
}

describe('activation rollouts through the real CLIs', () => {
  test('Claude Code: the Skill tool loads the skill only when its listed description fits; no pointer to it in the prompt', {
    skip: missingCli('claude'),
  }, async () => {
    const server = await serve((t): ScriptReply => {
      if (t.toolOutputs.length > 0) return { text: 'Done.' };
      const name = chosen(t);
      return name ? { tool: 'Skill', input: { skill: name } } : { text: 'Here is how to do it.' };
    });
    const target = claudeTarget(server.url);
    const vague = activationMetrics(await measure(target, VAGUE))!;
    const good = activationMetrics(await measure(target, GOOD))!;
    assert.deepEqual([vague.tp, vague.fn, vague.fp], [0, 2, 0], 'a vague description is never chosen');
    assert.deepEqual([good.tp, good.fn, good.fp, good.tn], [2, 0, 0, 2], 'a description that names the work is');
    const first = server.turns[0]!;
    assert.match(first.text, /- workbook-charts: /, 'the skill is listed by its own name and description');
    assert.match(first.text, /- commit-messages: /, 'among the shipped distractors');
    assert.doesNotMatch(first.text, /BODY-workbook-charts/, 'its body is not in the first request');
    assert.doesNotMatch(first.text, /task\.md|Open it and read all of it/, 'and nothing points to it');
  });

  test('Codex: reading SKILL.md through the shell is the activation; an overbroad description costs precision', {
    skip: missingCli('codex'),
  }, async () => {
    const server = await serve((t): ScriptReply => {
      if (t.toolOutputs.length > 0) return { text: 'Done.' };
      const name = chosen(t);
      return name ? { tool: 'exec_command', input: { cmd: `cat .agents/skills/${name}/SKILL.md` } } : { text: 'Sure.' };
    });
    const target = new HarnessChatModel(
      new CodexHarness(harnessSettings({ path: cliPath('codex'), baseUrl: `${server.url}/v1` })),
      { ...MODEL, backend: 'codex_exec' },
    );
    // Codex starts slowly: one should- and one should-not-trigger query for the good description, the two near misses for the broad one.
    const good = activationMetrics(await measure(target, GOOD, [QUERIES[0]!, QUERIES[2]!]))!;
    const broad = activationMetrics(await measure(target, BROAD, QUERIES.slice(2)))!;
    assert.deepEqual([good.tp, good.fp, good.tn], [1, 0, 1]);
    assert.deepEqual([broad.fp, broad.tn], [2, 0], 'the overbroad description loads for the near misses');
    assert.match(server.turns[0]!.text, /workbook-charts/);
  });

  test('Copilot: its listing decides too, and reading SKILL.md through bash is the activation', {
    skip: missingCli('copilot'),
  }, async () => {
    const server = await serve((t): ScriptReply => {
      if (t.toolOutputs.length > 0) return { text: 'Done.' };
      const name = chosen(t);
      return name
        ? { tool: 'bash', input: { command: `cat .github/skills/${name}/SKILL.md`, description: 'Read the skill' } }
        : { text: 'Sure.' };
    });
    const target = new HarnessChatModel(
      new CopilotHarness(harnessSettings({ path: cliPath('copilot'), baseUrl: `${server.url}/v1` })),
      { ...MODEL, backend: 'copilot_exec', model: 'gpt-5.5' },
    );
    const good = activationMetrics(await measure(target, GOOD, [QUERIES[0]!, QUERIES[2]!]))!;
    const vague = activationMetrics(await measure(target, VAGUE, [QUERIES[0]!]))!;
    assert.deepEqual([good.tp, good.fp, good.tn], [1, 0, 1]);
    assert.deepEqual([vague.tp, vague.fn], [0, 1]);
    assert.match(server.turns[0]!.text, /<name>workbook-charts<\/name>/);
  });

  test('eight activation rollouts at once each see only their own candidate description', {
    skip: missingCli('claude'),
  }, async () => {
    const server = await serve((t): ScriptReply => {
      if (t.toolOutputs.length > 0) return { text: 'Done.' };
      const name = chosen(t);
      return name ? { tool: 'Skill', input: { skill: name } } : { text: 'No skill needed.' };
    });
    const target = claudeTarget(server.url);
    // Four candidates that name the work and four that do not, all on the same should-trigger query.
    const candidates = Array.from({ length: 8 }, (_, i) =>
      (i % 2 ? VAGUE : GOOD).replace('# workbook-charts', `# v${i}`),
    );
    const results = await Promise.all(
      candidates.map((c, i) => env.rollout(QUERIES[0]!, c, { target, seed: 1, sample: 100 + i })),
    );
    assert.deepEqual(
      results.map((r) => r.activation!.loaded),
      candidates.map((c) => !c.includes('Helps with data')),
      'each rollout measured its own skill: no candidate saw another one',
    );
    for (const t of server.turns.filter((t) => t.toolOutputs.length === 0))
      assert.equal([...t.text.matchAll(/- workbook-charts: /g)].length, 1, 'one workbook-charts in each listing');
  });

  test('a run ends once its skill loads: the agent never waits for its next reply, and the cost left unreported is unknown, not free', {
    skip: missingCli('claude') || missingCli('codex'),
  }, async () => {
    // After the skill loads, the scripted model never answers: a run that waited for it would time out.
    const server = await serve((t): ScriptReply | Promise<ScriptReply> => {
      if (t.toolOutputs.length > 0) return new Promise<ScriptReply>(() => {});
      return t.wire === 'anthropic'
        ? { tool: 'Skill', input: { skill: 'workbook-charts' } }
        : { tool: 'exec_command', input: { cmd: 'cat .agents/skills/workbook-charts/SKILL.md' } };
    });
    const quick = { ...MODEL, timeoutMs: 40_000 };
    const claude = new HarnessChatModel(
      new ClaudeCodeHarness(
        harnessSettings({ path: cliPath('claude'), baseUrl: server.url, env: { ANTHROPIC_API_KEY: 'sk-ant-test' } }),
      ),
      { ...quick, backend: 'claude_code_exec', price: { input: 3, output: 15 } },
    );
    const codex = new HarnessChatModel(
      new CodexHarness(harnessSettings({ path: cliPath('codex'), baseUrl: `${server.url}/v1` })),
      { ...quick, backend: 'codex_exec', price: { input: 1, output: 10 } },
    );
    const [c, x] = await Promise.all([
      env.rollout(QUERIES[0]!, GOOD, { target: claude, seed: 1, sample: 0 }),
      env.rollout(QUERIES[0]!, GOOD, { target: codex, seed: 1, sample: 0 }),
    ]);
    for (const r of [c, x]) {
      assert.equal(r.activation!.loaded, true);
      assert.equal(r.traces![0]!.stopped, 'skill_loaded');
    }
    assert.ok(c.usage!.input > 0, "Claude Code reports each reply's input as it streams: counted");
    assert.equal(x.usage!.input, 0, 'Codex reports tokens only when its turn completes');
    const direct = (m: HarnessChatModel) =>
      m.complete({
        purpose: 'rollout',
        messages: [{ role: 'user', content: QUERIES[0]!.query }],
        skill: GOOD,
        activation: { others: [] },
      });
    const [cc, xc] = await Promise.all([direct(claude), direct(codex)]);
    assert.ok(typeof cc.costUsd === 'number' && cc.costUsd > 0, 'a lower bound from the tokens seen');
    assert.equal(xc.costUsd, null, 'no tokens reported: the cost is unknown, so the ledger does not count it as free');
  });

  test('with the task scored too, the run goes on to its answer after the skill loads, and the reply is scored', {
    skip: missingCli('claude'),
  }, async () => {
    const server = await serve((t): ScriptReply => {
      if (t.toolOutputs.length === 0) return { tool: 'Skill', input: { skill: 'workbook-charts' } };
      return { text: queryOf(t).id === 'q1' ? 'Chart added on its own sheet.' : 'I could not find the data.' };
    });
    const target = claudeTarget(server.url);
    const scored = (q: TriggerQuery): TriggerQuery => ({ ...q, answer: ['own sheet'] });
    const [right, wrong] = await Promise.all([
      env.rollout(scored(QUERIES[0]!), GOOD, { target, seed: 1, sample: 0 }),
      env.rollout(scored(QUERIES[1]!), GOOD, { target, seed: 1, sample: 0 }),
    ]);
    assert.deepEqual(right.activation, { should: true, loaded: true, task: 1 });
    assert.equal(right.hard, 1);
    assert.equal(right.traces![0]!.stopped, undefined, 'not stopped at the load');
    assert.match(right.predicted ?? '', /Chart added on its own sheet/);
    assert.deepEqual(wrong.activation, { should: true, loaded: true, task: 0 });
    assert.equal(wrong.hard, 0);
    assert.ok(
      server.turns.some((t) => t.toolOutputs.some((o) => o.includes('Launching skill'))),
      'the agent ran on after the load',
    );
  });

  test('Claude Code lists when_to_use after the description, so it decides loading there; Codex does not list it', {
    skip: missingCli('claude') || missingCli('codex'),
  }, async () => {
    const when = 'Use when the user wants a chart or plot of revenue, sales or signups.';
    const withWhen = VAGUE.replace(
      'description: "Helps with data."\n',
      `description: "Helps with data."\nwhen_to_use: "${when}"\n`,
    );
    assert.notEqual(withWhen, VAGUE);
    const server = await serve((t): ScriptReply => {
      if (t.toolOutputs.length > 0) return { text: 'Done.' };
      const name = chosen(t);
      if (!name) return { text: 'Sure.' };
      return t.wire === 'anthropic'
        ? { tool: 'Skill', input: { skill: name } }
        : { tool: 'exec_command', input: { cmd: `cat .agents/skills/${name}/SKILL.md` } };
    });
    const codex = new HarnessChatModel(
      new CodexHarness(harnessSettings({ path: cliPath('codex'), baseUrl: `${server.url}/v1` })),
      { ...MODEL, backend: 'codex_exec' },
    );
    const [claudeRun, codexRun] = await Promise.all([
      measure(claudeTarget(server.url), withWhen, [QUERIES[0]!]),
      measure(codex, withWhen, [QUERIES[0]!]),
    ]);
    assert.equal(claudeRun[0]!.activation!.loaded, true, 'Claude Code showed the when_to_use, which names the work');
    assert.equal(codexRun[0]!.activation!.loaded, false, 'Codex showed only the vague description');
    const first = (wire: Turn['wire']) => server.turns.find((t) => t.wire === wire)!.text;
    assert.ok(first('anthropic').includes(`- workbook-charts: Helps with data. - ${when}`));
    assert.ok(!first('responses').includes(when));
  });
});
