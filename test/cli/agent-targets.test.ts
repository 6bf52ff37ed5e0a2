/**
 * `skillopt train`, `eval` and `deploy` with an agent CLI as the target, end to end, as a user
 * runs them: the real program, the real CLIs from npm (Codex, Claude Code, Copilot; Cursor's
 * stand-in) pointed at a fake model server on 127.0.0.1 that scripts the agent, and the offline
 * simulated optimizer. The agent reads its skill from the file where its CLI finds skills, and
 * answers dates the way the skill says: so a trained skill that states the convention raises
 * the score.
 */
import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { stringify } from 'yaml';
import { materialize } from '../../src/envs/materialize.ts';
import { recognise } from '../../src/model/sim/world.ts';
import { cliPath, missingCli } from '../helpers/agent-cli.ts';
import { ROOT, runCliAsync } from '../helpers/cli.ts';
import { fakeAgentServers, type ScriptReply, type Turn } from '../helpers/fake-agent-server.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';

const FAKE_CURSOR = path.join(ROOT, 'test', 'helpers', 'fake-cursor-agent.mjs');
const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const PLACES = [
  'Harbor Lane bakery',
  'Maple Street depot',
  'North Pier museum',
  'Old Mill library',
  'Cedar Court clinic',
  'Riverside school',
];
const FACTS = PLACES.map((place, i) => ({ place, y: 2001 + i, m: ((i * 5) % 12) + 1, d: 3 + i * 3 }));
const iso = (f: (typeof FACTS)[number]) => `${f.y}-${String(f.m).padStart(2, '0')}-${String(f.d).padStart(2, '0')}`;
const question = (f: (typeof FACTS)[number]) => `On what date did the ${f.place} open?`;

/** The agent's answer to the question in this turn: ISO dates only when the skill it read says so. */
function answer(turn: Turn, skillText: string): ScriptReply {
  const fact = FACTS.find((f) => turn.text.includes(question(f)));
  if (!fact) return { text: '<answer>no question found</answer>' };
  const dated = recognise(skillText).conventions.has('date_iso')
    ? iso(fact)
    : `${MONTHS[fact.m - 1]} ${fact.d}, ${fact.y}`;
  return { text: `<answer>${dated}</answer>` };
}

/** An agent that first reads its skill with `read`, then answers from what it read. */
const readsSkillFirst = (read: ScriptReply) => (turn: Turn) =>
  turn.toolOutputs.length === 0 ? read : answer(turn, turn.toolOutputs.join('\n'));

const serve = fakeAgentServers();

/** A clean home (the user's own CLI settings never touched) and the CLIs' shared package cache. */
function environment(dir: string): Record<string, string> {
  const cache = path.join(os.tmpdir(), 'skillopt-test-cli-cache');
  fs.mkdirSync(cache, { recursive: true });
  return { HOME: path.join(dir, 'home'), XDG_CACHE_HOME: cache, NO_COLOR: '1', FAKE_ANTHROPIC_KEY: 'sk-ant-test' };
}

/** The dates task: the data, a seed skill without the convention, and a config with this target. */
function datesProject(dir: string, target: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  fs.mkdirSync(path.join(dir, 'home'), { recursive: true });
  writeFiles(dir, {
    'dates.jsonl': `${FACTS.map((f, i) => JSON.stringify({ id: `d${i}`, question: question(f), answer: iso(f) })).join('\n')}\n`,
    'seed_skill.md': 'Answer with the date only.\n',
    'config.yaml': stringify({
      model: {
        target: { concurrency: 4, ...target },
        optimizer: { backend: 'sim', model: 'sim-1', options: { vague: 0, harmful: 0, irrelevant: 0 } },
        reasoning_effort: '',
      },
      // An infallible simulated optimizer (its wording never vague, never harmful): the run tests the agent, not the analyst's luck.
      // One step on four items, one selection item, one test item: a handful of agent runs.
      train: { num_epochs: 1, batch_size: 4, seed: 3 },
      gradient: { minibatch_size: 2, merge_batch_size: 2, analyst_workers: 2 },
      optimizer: { learning_rate: 2, min_learning_rate: 1, use_slow_update: false, use_meta_skill: false },
      cache: { mode: 'off' },
      env: {
        name: 'tasks',
        data_path: 'dates.jsonl',
        split_ratio: '4:1:1',
        fields: { input: 'question' },
        skill_init: 'seed_skill.md',
        workers: 4,
      },
      ...extra,
    }),
  });
  return path.join(dir, 'config.yaml');
}

const readLines = (file: string) =>
  fs
    .readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

describe('agent CLIs as the target, end to end', {
  concurrency: 3,
  skip: missingCli('codex') || missingCli('claude') || missingCli('copilot'),
}, () => {
  it('skillopt train with Codex as the target learns a skill the agent reads from .agents/skills; skillopt deploy installs it', async () => {
    const server = await serve(
      readsSkillFirst({ tool: 'exec_command', input: { cmd: 'cat .agents/skills/skillopt-target/SKILL.md' } }),
    );
    const dir = tmpDir();
    const config = datesProject(dir, {
      backend: 'codex_exec',
      model: 'gpt-5.5',
      base_url: `${server.url}/v1`,
      options: { path: cliPath('codex') },
    });
    const out = path.join(dir, 'run');
    const r = await runCliAsync(['train', '--config', config, '--out', out], { cwd: dir, env: environment(dir) });
    assert.equal(r.status, 0, `${r.stderr}\n${r.stdout.slice(-2000)}`);

    const summary = JSON.parse(fs.readFileSync(path.join(out, 'summary.json'), 'utf8'));
    assert.equal(summary.baseline_test_hard, 0, 'the seed skill states no date convention');
    assert.equal(summary.test_hard, 1, 'the trained skill does, and the agent read it');
    assert.match(fs.readFileSync(path.join(out, 'best_skill.md'), 'utf8'), /YYYY-MM-DD|ISO[- ]?8601|year-month-day/i);
    // The agent got the skill by reading the file its CLI lists, not in its prompt.
    const first = server.turns.find((t) => t.toolOutputs.length === 0)!;
    assert.match(first.text, /skillopt-target: How to do the task in this folder well/);
    assert.doesNotMatch(first.text, /Answer with the date only/);
    // Each rollout keeps the agent's trace; calls are priced (gpt-5.5 is in the price table).
    const results = readLines(path.join(out, 'test_eval', 'results.jsonl'));
    assert.equal(results.length, 1);
    for (const res of results) {
      assert.equal(res.hard, 1);
      assert.deepEqual(res.traces[0].steps[0], {
        tool: 'shell',
        input: 'cat .agents/skills/skillopt-target/SKILL.md',
        ok: true,
      });
      assert.deepEqual(res.traces[0].files, ['.agents/skills/skillopt-target/SKILL.md']);
    }
    const rollouts = readLines(path.join(out, 'calls.jsonl')).filter((c) => c.purpose === 'rollout');
    assert.ok(
      rollouts.length >= 6 &&
        rollouts.every((c) => c.model === 'codex_exec:gpt-5.5' && c.cost_usd > 0 && c.usage.input > 0),
      JSON.stringify(rollouts[0]),
    );
    assert.ok(readLines(path.join(out, 'calls.jsonl')).some((c) => c.purpose === 'analyst'));

    const project = path.join(dir, 'project');
    fs.mkdirSync(project);
    const deployed = await runCliAsync(['deploy', out, '--to', 'codex', '--description', 'Dates of local places.'], {
      cwd: project,
      env: environment(dir),
    });
    assert.equal(deployed.status, 0, deployed.stderr);
    const skillFile = path.join(project, '.agents/skills/skillopt-target/SKILL.md');
    assert.equal(
      fs.readFileSync(skillFile, 'utf8'),
      `---\nname: skillopt-target\ndescription: "Dates of local places."\n---\n\n${fs.readFileSync(path.join(out, 'best_skill.md'), 'utf8').trim()}\n`,
    );
    assert.match(deployed.stdout, /^\+.*(YYYY-MM-DD|ISO 8601)/m, 'the diff is shown');
    const undone = await runCliAsync(['deploy', '--rollback', '--to', 'codex'], {
      cwd: project,
      env: environment(dir),
    });
    assert.equal(undone.status, 0, undone.stderr);
    assert.deepEqual(fs.readdirSync(project), [], 'the rollback removes what the deployment created');
  });

  const agents: {
    name: string;
    target: (url: string) => Record<string, unknown>;
    read?: ScriptReply;
    skillFile: string;
  }[] = [
    {
      name: 'codex_exec',
      target: (url) => ({
        backend: 'codex_exec',
        model: 'gpt-5.5',
        base_url: `${url}/v1`,
        options: { path: cliPath('codex') },
      }),
      read: { tool: 'exec_command', input: { cmd: 'cat .agents/skills/skillopt-target/SKILL.md' } },
      skillFile: '.agents/skills/skillopt-target/SKILL.md',
    },
    {
      name: 'claude_code_exec',
      target: (url) => ({
        backend: 'claude_code_exec',
        model: 'claude-sonnet-4-5',
        base_url: url,
        api_key_env: 'FAKE_ANTHROPIC_KEY',
        options: { path: cliPath('claude') },
      }),
      read: { tool: 'Read', input: { file_path: '.claude/skills/skillopt-target/SKILL.md' } },
      skillFile: '.claude/skills/skillopt-target/SKILL.md',
    },
    {
      name: 'copilot_exec',
      target: (url) => ({
        backend: 'copilot_exec',
        model: 'gpt-5.5',
        base_url: `${url}/v1`,
        options: { path: cliPath('copilot') },
      }),
      read: {
        tool: 'bash',
        input: { command: 'cat .github/skills/skillopt-target/SKILL.md', description: 'Read the skill' },
      },
      skillFile: '.github/skills/skillopt-target/SKILL.md',
    },
    {
      name: 'cursor_exec',
      target: () => ({ backend: 'cursor_exec', options: { path: FAKE_CURSOR } }),
      skillFile: '.cursor/skills/skillopt-target/SKILL.md',
    },
  ];
  for (const agent of agents) {
    it(`skillopt eval with ${agent.name} as the target: the skill read from ${agent.skillFile}, the answers scored, the traces kept`, async () => {
      const server = await serve(readsSkillFirst(agent.read ?? { text: '' }));
      const dir = tmpDir();
      const config = datesProject(dir, agent.target(server.url));
      // The Cursor stand-in answers with the last line of the skill it read: the skill holds the answer of one item.
      const skill = path.join(dir, 'iso_skill.md');
      fs.writeFileSync(
        skill,
        `Write every date as YYYY-MM-DD.\n${agent.name === 'cursor_exec' ? 'CURSOR-READ-THIS' : ''}\n`,
      );
      const out = path.join(dir, 'eval');
      const r = await runCliAsync(
        ['eval', '--config', config, '--skill', 'seed_skill.md', '--skill', skill, '--out', out],
        { cwd: dir, env: environment(dir) },
      );
      assert.equal(r.status, 0, `${r.stderr}\n${r.stdout.slice(-2000)}`);
      const summary = JSON.parse(fs.readFileSync(path.join(out, 'eval_summary.json'), 'utf8'));
      assert.equal(summary.cells.length, 2);
      const dirs = fs.readdirSync(path.join(out, 'rollouts'));
      assert.equal(dirs.length, 1);
      const lines = (label: string) =>
        readLines(path.join(out, 'rollouts', dirs[0]!, label, 'repeat_00', 'results.jsonl'));
      for (const res of [...lines('seed_skill'), ...lines('iso_skill')]) {
        assert.equal(res.error, undefined, JSON.stringify(res.error));
        assert.ok(res.traces[0].files.includes(agent.skillFile), JSON.stringify(res.traces));
      }
      if (agent.name === 'cursor_exec') {
        assert.ok(lines('iso_skill').every((res) => res.predicted_answer === 'CURSOR-READ-THIS'));
        return;
      }
      assert.deepEqual(
        summary.cells.map((c: { hard: number }) => c.hard),
        [0, 1],
        'the ISO skill, read from its file, changes the answers',
      );
      // The skill's text reached the model only through the agent's read of the file.
      assert.ok(server.turns.some((t) => t.toolOutputs.some((o) => o.includes('Write every date as YYYY-MM-DD.'))));
      assert.ok(
        !server.turns.some((t) => t.toolOutputs.length === 0 && t.text.includes('Write every date as YYYY-MM-DD.')),
      );
    });
  }

  it("skillopt eval of OfficeQA with Codex: the item's bulletins are in the workspace and the agent greps them itself", async () => {
    const dir = tmpDir();
    fs.mkdirSync(path.join(dir, 'home'));
    const FIX = path.join(ROOT, 'test/fixtures/officeqa');
    await materialize({
      benchmark: 'officeqa',
      raw: path.join(FIX, 'raw/officeqa_full.csv'),
      manifest: path.join(FIX, 'manifest'),
      out: path.join(dir, 'splits'),
    });
    const server = await serve((turn) => {
      if (turn.toolOutputs.length === 0)
        return { tool: 'exec_command', input: { cmd: 'grep -rn "December 1943" documents/' } };
      const debt = /December 1943\s+([\d,]+)/.exec(turn.toolOutputs[0]!)?.[1];
      return { text: `<answer>${debt ?? 'not found'}</answer>` };
    });
    writeFiles(dir, {
      'c.yaml': stringify({
        _base_: path.join(ROOT, 'configs/officeqa/default.yaml'),
        model: {
          target: {
            backend: 'codex_exec',
            model: 'gpt-5.5',
            base_url: `${server.url}/v1`,
            options: { path: cliPath('codex') },
          },
          optimizer: { backend: 'sim' },
          reasoning_effort: '',
        },
        cache: { mode: 'off' },
        evaluation: { test_env_num: 1 },
        env: { split_dir: path.join(dir, 'splits'), data_dirs: [path.join(FIX, 'docs')] },
      }),
      'skill.md': 'Search the bulletins with grep.\n',
    });
    const out = path.join(dir, 'eval');
    const r = await runCliAsync(['eval', '--config', 'c.yaml', '--skill', 'skill.md', '--out', out], {
      cwd: dir,
      env: environment(dir),
    });
    assert.equal(r.status, 0, `${r.stderr}\n${r.stdout.slice(-2000)}`);
    const [rollouts] = fs.readdirSync(path.join(out, 'rollouts'));
    const [res] = readLines(path.join(out, 'rollouts', rollouts!, 'skill', 'repeat_00', 'results.jsonl'));
    // The first test item: the gross public debt at the end of December 1943.
    assert.equal(res.id, 'oq-004');
    assert.equal(res.hard, 1, JSON.stringify(res));
    assert.deepEqual(res.traces[0].steps[0], { tool: 'shell', input: 'grep -rn "December 1943" documents/', ok: true });
    assert.match(server.turns[0]!.text, /documents\/treasury_bulletin_1944_01\.txt/);
    // No tool loop of ours: Codex's own tools only.
    assert.ok(!server.turns.some((t) => /"name":"grep","description":"Find the lines/.test(t.text)));
  });
});
