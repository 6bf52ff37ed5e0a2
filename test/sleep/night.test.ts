/**
 * Whole nights through the `skillopt sleep` commands, on the simulator: the user's Claude Code
 * sessions (`test/fixtures/sleep-night/`, developer corrections of the agent's formats) harvested,
 * mined, replayed, consolidated into two skills (the managed one and one the sessions invoked),
 * gated, staged, adopted and rolled back; a night stopped by its budget; a handoff night.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { readState } from '../../src/sleep/state/state.ts';
import { REPLAY_PROMPT_MARKER } from '../../src/sleep/replay/marker.ts';
import { runCli } from '../helpers/cli.ts';
import { contents, treeFingerprint } from './fixture-home.ts';
import { DEPOT_SKILL, PROJECT, simNightHome } from './sim-night.ts';

const home = simNightHome;

test('a night on the simulator: dry-run, run, status, adopt, rollback; two skills changed with a backup, then restored byte for byte', () => {
  const { home: h, sleep } = home('mine:\n  seed: 3\ndocuments:\n  fanout: true\n');
  const claude = path.join(h, '.claude');
  const original = contents(claude);

  const dry = sleep('dry-run', '--project', PROJECT, '--since', '2026-11-01', '--backend', 'sim');
  assert.equal(dry.status, 0, dry.stderr);
  assert.match(dry.stdout, /Claude Code\s+14\s/);
  assert.match(dry.stdout, /Tasks it would learn from \(14;/);
  assert.match(dry.stdout, /When did Maple Street Depot open\?/);
  assert.match(dry.stdout, /What a night would cost \(no model is called now\):\n[\s\S]*total\s+\d+/);
  assert.ok(!fs.existsSync(path.join(h, '.skillopt-sleep')), 'a dry run writes nothing');

  const run = sleep('run', '--project', PROJECT, '--since', '2026-11-01', '--backend', 'sim');
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stderr, /night 1: 14 sessions -> 14 tasks/);
  assert.match(
    run.stdout,
    /skill skillopt-sleep-learned: accept_new_best \(val 0\.000 → 0\.\d+\), waiting for adoption/,
  );
  assert.match(run.stdout, /skill depot-records: accept_new_best \(val 0\.000 → 0\.\d+\), waiting for adoption/);
  assert.deepEqual(contents(claude), original, 'a night changes nothing live');
  const nights = path.join(h, '.skillopt-sleep/nights');
  const [name] = fs.readdirSync(nights);
  const night = path.join(nights, name!);
  for (const f of [
    'manifest.json',
    'report.md',
    'report.json',
    'diff.patch',
    'evidence.jsonl',
    'tasks.json',
    'calls.jsonl',
  ])
    assert.ok(fs.existsSync(path.join(night, f)), f);
  const diff = fs.readFileSync(path.join(night, 'diff.patch'), 'utf8');
  assert.match(diff, /\+- Write every date as YYYY-MM-DD\./);
  const manifest = JSON.parse(fs.readFileSync(path.join(night, 'manifest.json'), 'utf8'));
  const proposed = Object.fromEntries(
    manifest.documents.map((d: { name: string; proposed_file: string }) => [
      d.name,
      fs.readFileSync(path.join(night, d.proposed_file)),
    ]),
  );
  assert.deepEqual(Object.keys(proposed).sort(), ['depot-records', 'skillopt-sleep-learned']);
  // Only the learned block is new in the hand-written skill.
  assert.ok(
    proposed['depot-records'].toString().startsWith(DEPOT_SKILL),
    'the hand-written text is kept byte for byte',
  );
  assert.match(
    proposed['depot-records'].toString(),
    /<!-- SKILLOPT-SLEEP:LEARNED START -->[\s\S]*<!-- SKILLOPT-SLEEP:LEARNED END -->\n$/,
  );

  const status = sleep('status', '--project', PROJECT);
  assert.equal(status.status, 0, status.stderr);
  assert.match(status.stdout, /waiting for adoption: skill skillopt-sleep-learned/);
  assert.match(status.stdout, /waiting for adoption: skill depot-records/);

  const adopted = sleep('adopt', '--project', PROJECT);
  assert.equal(adopted.status, 0, adopted.stderr);
  assert.match(
    adopted.stdout,
    /adopted skillopt-sleep-learned: ~\/\.claude\/skills\/skillopt-sleep-learned\/SKILL\.md \(new file\)/,
  );
  assert.match(
    adopted.stdout,
    /adopted depot-records: ~\/\.claude\/skills\/depot-records\/SKILL\.md \(backup: ~\/\.skillopt-sleep\/nights\/[\d-]+\/backup\/skill-depot-records\.md\)/,
  );
  assert.deepEqual(fs.readFileSync(path.join(claude, 'skills/depot-records/SKILL.md')), proposed['depot-records']);
  assert.deepEqual(
    fs.readFileSync(path.join(claude, 'skills/skillopt-sleep-learned/SKILL.md')),
    proposed['skillopt-sleep-learned'],
  );
  assert.equal(fs.readFileSync(path.join(night, 'backup/skill-depot-records.md'), 'utf8'), DEPOT_SKILL);
  assert.match(sleep('status', '--project', PROJECT).stdout, /adopted: depot-records/);
  assert.notEqual(sleep('adopt', '--project', PROJECT).status, 0, 'a night is adopted once');

  const back = sleep('rollback');
  assert.equal(back.status, 0, back.stderr);
  assert.match(back.stdout, /removed skillopt-sleep-learned/);
  assert.match(back.stdout, /restored depot-records/);
  assert.deepEqual(
    contents(claude),
    original,
    'every file as it was, byte for byte and mode; the created skill folder gone',
  );

  const history = sleep('history');
  assert.match(
    history.stdout,
    /1\s+2026-\S+ \S+\s+\/home\/dev\/depot\s+staged\s+14\s+14\s+skillopt-sleep-learned: accept_new_best/,
  );
  // The next night starts where this one ended: nothing new to learn from.
  const next = sleep('run', '--project', PROJECT, '--backend', 'sim');
  assert.equal(next.status, 0, next.stderr);
  assert.match(next.stdout, /no task to learn from in 0 session\(s\); nothing staged/);
});

test('a night that reaches its budget stops: exit 1 saying which limit, nothing staged, the next night harvests the same sessions', () => {
  const { home: h, sleep } = home('mine:\n  seed: 3\n');
  const run = sleep('run', '--project', PROJECT, '--since', '2026-11-01', '--backend', 'sim', '--budget-calls', '5');
  assert.equal(run.status, 1, run.stderr);
  assert.match(
    run.stderr,
    /skillopt: the night's budget is reached: \d+ model calls made.*limit budget\.max_calls=5 \(raise it with --budget-calls\)\. Nothing was staged, and the next night harvests the same sessions again\.\n$/,
  );
  const stateDir = path.join(h, '.skillopt-sleep');
  const nights = fs.readdirSync(path.join(stateDir, 'nights'));
  assert.ok(
    nights.every((n) => !fs.existsSync(path.join(stateDir, 'nights', n, 'manifest.json'))),
    'no night is offered for adoption',
  );
  const state = readState(stateDir);
  assert.equal(state.last_harvest[PROJECT], undefined, 'the harvest window is not advanced');
  assert.equal(state.history.at(-1)?.outcome, 'stopped');
  const calls = fs
    .readFileSync(path.join(stateDir, 'nights', nights[0]!, 'calls.jsonl'), 'utf8')
    .trim()
    .split('\n');
  assert.ok(calls.length <= 5, `the ledger holds ${calls.length} calls`);
  assert.notEqual(sleep('adopt', '--project', PROJECT).status, 0);
});

test('a dollar cap with a model of unknown price is refused before any call, naming the roles and the fix; no night is left behind', () => {
  const { home: h, env } = home(
    "model:\n  target: {base_url: 'http://127.0.0.1:9/v1'}\n  optimizer: {base_url: 'http://127.0.0.1:9/v1'}\n",
  );
  const run = runCli(
    [
      'sleep',
      'run',
      '--project',
      PROJECT,
      '--since',
      '2026-11-01',
      '--backend',
      'openai_compatible:my-model',
      '--budget-usd',
      '1',
    ],
    { env: { ...env, OPENAI_API_KEY: 'test-key' }, cwd: h },
  );
  assert.equal(run.status, 2, run.stderr);
  assert.match(
    run.stderr,
    /budget\.max_usd=1 is set, but the price of model\.target \(openai_compatible:my-model\)[\s\S]*model\.target\.price: \{input: 0\.5, output: 1\.5\}/,
  );
  const nights = path.join(h, '.skillopt-sleep/nights');
  assert.deepEqual(fs.existsSync(nights) ? fs.readdirSync(nights) : [], []);
});

test('a night without its API key is refused as bad input (exit 2), naming the variable to set; no night is left behind', () => {
  const { home: h, env } = home('');
  const run = runCli(['sleep', 'run', '--project', PROJECT, '--since', '2026-11-01', '--backend', 'openai_chat'], {
    env: { ...env, OPENAI_API_KEY: '', TARGET_OPENAI_API_KEY: '', OPTIMIZER_OPENAI_API_KEY: '' },
    cwd: h,
  });
  assert.equal(run.status, 2, run.stderr);
  assert.match(
    run.stderr,
    /^skillopt: model\.target: the OpenAI key is missing: set the environment variable OPENAI_API_KEY /,
  );
  const nights = path.join(h, '.skillopt-sleep/nights');
  assert.deepEqual(fs.existsSync(nights) ? fs.readdirSync(nights) : [], []);
});

test('a handoff night needs no key: it writes the prompts (marked as replays, secrets redacted), exits 3, and goes on once they are answered', () => {
  const { home: h, sleep } = home('mine:\n  seed: 3\n');
  // A secret in one session must not reach a prompt.
  const file = path.join(
    h,
    '.claude/projects/-home-dev-depot',
    fs.readdirSync(path.join(h, '.claude/projects/-home-dev-depot'))[0]!,
  );
  const secret = 'sk-proj-Zq3vT8mN2pL5xR7wK9yB4cD6fH1jA0sE';
  fs.writeFileSync(
    file,
    fs.readFileSync(file, 'utf8').replace(/"content":"([^"]+\?)"/, `"content":"$1 (my key is ${secret})"`),
  );
  const before = treeFingerprint(path.join(h, '.claude'));

  const first = sleep('run', '--project', PROJECT, '--since', '2026-11-01', '--backend', 'handoff');
  assert.equal(first.status, 3, first.stderr);
  const dir = path.join(h, '.skillopt-sleep/handoff/home-dev-depot');
  assert.match(
    first.stdout,
    /(\d+) prompt\(s\) wait for answers: read ~\/\.skillopt-sleep\/handoff\/home-dev-depot\/PROMPTS\.md/,
  );
  const pending = JSON.parse(fs.readFileSync(path.join(dir, 'pending.json'), 'utf8')).pending as {
    id: string;
    prompt_file: string;
    answer_file: string;
    purpose: string;
  }[];
  assert.equal(pending.length, 14, 'one mining prompt per session');
  const prompts = pending.map((p) => fs.readFileSync(p.prompt_file, 'utf8'));
  assert.ok(
    prompts.every((p) => p.startsWith(REPLAY_PROMPT_MARKER)),
    'each prompt carries the replay marker',
  );
  assert.ok(!fs.readFileSync(path.join(dir, 'PROMPTS.md'), 'utf8').includes(secret), 'the secret is redacted');
  assert.ok(!prompts.some((p) => p.includes(secret)));
  assert.match(
    fs.readFileSync(path.join(dir, 'PROMPTS.md'), 'utf8'),
    /skillopt sleep run --project \/home\/dev\/depot --since 2026-11-01 --backend handoff/,
  );
  assert.match(sleep('status', '--project', PROJECT).stdout, /Handoff: 14 prompt\(s\) wait for answers/);

  // Unanswered, the same prompts again.
  const again = sleep('run', '--project', PROJECT, '--since', '2026-11-01', '--backend', 'handoff');
  assert.equal(again.status, 3, again.stderr);
  assert.deepEqual(
    JSON.parse(fs.readFileSync(path.join(dir, 'pending.json'), 'utf8')).pending.map((p: { id: string }) => p.id),
    pending.map((p) => p.id),
  );

  // The user's agent answers the mining prompts: each session's question becomes a task.
  for (const [i, p] of pending.entries()) {
    const question = /(?:When|What|How|On what|By what)[^?\n]*\?/.exec(prompts[i]!)![0];
    fs.writeFileSync(
      p.answer_file,
      JSON.stringify({
        tasks: [{ intent: question, rubric: null, checks: [{ op: 'regex', arg: '\\d' }], satisfied: false }],
      }),
    );
  }
  const second = sleep('run', '--project', PROJECT, '--since', '2026-11-01', '--backend', 'handoff');
  assert.equal(second.status, 3, second.stderr);
  assert.match(second.stderr, /night 1: 14 sessions -> 14 tasks/);
  const next = JSON.parse(fs.readFileSync(path.join(dir, 'pending.json'), 'utf8')).pending as {
    id: string;
    prompt_file: string;
  }[];
  assert.ok(
    next.length > 0 && next.every((p) => !pending.some((q) => q.id === p.id)),
    'the next stage asks new prompts',
  );
  assert.ok(next.every((p) => fs.readFileSync(p.prompt_file, 'utf8').startsWith(REPLAY_PROMPT_MARKER)));
  assert.equal(treeFingerprint(path.join(h, '.claude')), before, 'nothing live changed');
});
