import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ScoreCache } from '../../src/engine/scoring/score-cache.ts';
import { buildRoleModels } from '../../src/model/stack.ts';
import { jsonLines } from '../../src/run/atomic.ts';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { configWith } from '../helpers/model-config.ts';
import { ROOT } from '../helpers/cli.ts';
import { readText, trainSim } from '../helpers/train.ts';
import { tmpDir } from '../helpers/tmp.ts';

const SMALL = ['train.num_epochs=1', 'env.n_train=20', 'env.n_val=10', 'env.n_test=10', 'train.batch_size=10'];

const providerCalls = (out: string) =>
  readText(path.join(out, 'calls.jsonl'))
    .split('\n')
    .filter((l) => l.includes('"from":"provider"')).length;

describe('journals that scale', () => {
  it('scores.jsonl holds each skill once (in blobs/), not once per rollout, and a rerun reads it all back', async () => {
    // A long skill: the seed skill and reference notes the simulated target does not act on.
    const notes = Array.from(
      { length: 60 },
      (_, i) => `- Reference note ${i}: site records are kept in the ledger room, shelf ${i}.`,
    ).join('\n');
    const skill = `${readText(path.join(ROOT, 'configs/sim/seed_skill.md'))}\n## Reference\n\n${notes}\n`;
    const skillFile = path.join(tmpDir(), 'long_skill.md');
    fs.writeFileSync(skillFile, skill);
    const run = await trainSim([...SMALL, `env.skill_init=${skillFile}`]);
    const scores = readText(path.join(run.out, 'scores.jsonl'));
    const lines = scores.trim().split('\n');
    assert.ok(lines.length >= 30, `${lines.length} rollouts recorded`);
    assert.ok(!scores.includes('Reference note 59'), 'no line repeats the skill');
    assert.ok(scores.length < lines.length * 1500, `${scores.length} bytes for ${lines.length} lines`);
    const blobs = fs.readdirSync(path.join(run.out, 'blobs'));
    assert.ok(
      blobs.length > 0 && blobs.length < lines.length / 5,
      `${blobs.length} blobs for ${lines.length} rollouts`,
    );
    assert.ok(blobs.some((b) => readText(path.join(run.out, 'blobs', b)).includes('Reference note 59')));
    for (const b of blobs) assert.match(b, /^[0-9a-f]{64}$/);

    const calls = providerCalls(run.out);
    const again = await trainSim([...SMALL, `env.skill_init=${skillFile}`], run.out);
    assert.equal(providerCalls(run.out), calls, 'every rollout and call was read back: nothing paid again');
    assert.deepEqual(again.summary.test_hard, run.summary.test_hard);
  });

  it('a trajectory read back from the journal is the one that was written', () => {
    const dir = tmpDir();
    const file = path.join(dir, 'scores.jsonl');
    const system = `${'a long skill line / with ~ tildes and slashes\n'.repeat(100)}---\nReply inside <answer></answer> tags.`;
    const trajectory = {
      id: 'val-0001',
      hard: 0,
      soft: 0.5,
      task: 'How tall?',
      expected: { 'a/b': 'x'.repeat(2000), '~k': [1, 'y'.repeat(1500)] },
      conversation: [
        { role: 'user' as const, content: 'How tall?' },
        { role: 'assistant' as const, content: `reasoning… ${'é'.repeat(3000)} <answer>3 m</answer>` },
      ],
      systemPrompt: system,
      usage: { input: 1, output: 2, cached: 0, reasoning: 0 },
    };
    const cache = new ScoreCache(file);
    cache.set('h1', 'val-0001', 'sim:sim-1', 0, trajectory, 42);
    cache.set('h1', 'val-0002', 'sim:sim-1', 0, { ...trajectory, id: 'val-0002' }, 42);
    assert.deepEqual(cache.get('h1', 'val-0001', 'sim:sim-1', 0, 42), trajectory);
    cache.close();
    const reopened = new ScoreCache(file);
    assert.deepEqual(reopened.get('h1', 'val-0001', 'sim:sim-1', 0, 42), trajectory);
    assert.deepEqual(reopened.get('h1', 'val-0002', 'sim:sim-1', 0, 42), { ...trajectory, id: 'val-0002' });
    assert.ok(!readText(file).includes('a long skill line'));
    // The system prompt, the long reply and the two long expected strings: four blobs, each once.
    assert.equal(fs.readdirSync(path.join(dir, 'blobs')).length, 4);
  });

  it("an agent target's traces go back and forth whole; a long one is one blob, a short one stays in the line", () => {
    const dir = tmpDir();
    const file = path.join(dir, 'scores.jsonl');
    const step = (i: number) => ({
      tool: 'Bash',
      input: `grep -n "row ${i}" documents/table.txt`,
      ok: i !== 3,
      ...(i === 3 ? { output: 'exit code 1' } : {}),
    });
    const long = {
      agent: 'claude-code',
      sessionId: 's-1',
      steps: Array.from({ length: 30 }, (_, i) => step(i)),
      files: ['documents/table.txt'],
      errors: [],
      durationMs: 4000,
      exitCode: 0,
    };
    const short = { agent: 'codex', steps: [step(0)], files: [], errors: ['429'], durationMs: 10, exitCode: 1 };
    const cache = new ScoreCache(file);
    cache.set('h1', 'a', 'codex_exec:x', 0, { id: 'a', hard: 1, soft: 1, traces: [long, short] }, 0);
    cache.set('h1', 'b', 'codex_exec:x', 0, { id: 'b', hard: 0, soft: 0, traces: [short] }, 0);
    cache.close();
    const [a, b] = readText(file)
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.match(a.blobs['/trajectory/traces'], /^json:/);
    assert.deepEqual(b.trajectory.traces, [short]);
    const reopened = new ScoreCache(file);
    assert.deepEqual(reopened.get('h1', 'a', 'codex_exec:x', 0, 0)!.traces, [long, short]);
    assert.deepEqual(reopened.get('h1', 'b', 'codex_exec:x', 0, 0)!.traces, [short]);
  });

  it('memory holds where each entry is in scores.jsonl, not its line: a hit reads the line back', () => {
    const file = path.join(tmpDir(), 'scores.jsonl');
    const cache = new ScoreCache(file);
    cache.set('h1', 'i1', 't', 0, { id: 'i1', hard: 0, soft: 0.25, predicted: 'first' }, 0);
    cache.set('h1', 'i2', 't', 0, { id: 'i2', hard: 1, soft: 1, predicted: 'second' }, 0);
    // The same bytes changed on disk (same length): what the next hit returns shows where it reads from.
    fs.writeFileSync(file, readText(file).replace('"predicted":"first"', '"predicted":"FIRST"'));
    assert.equal(cache.get('h1', 'i1', 't', 0, 0)!.predicted, 'FIRST');
    assert.equal(cache.get('h1', 'i2', 't', 0, 0)!.predicted, 'second');
    cache.close();
  });

  it('a rollout whose blob is gone is run again rather than read half', () => {
    const dir = tmpDir();
    const file = path.join(dir, 'scores.jsonl');
    const cache = new ScoreCache(file);
    cache.set('h1', 'i1', 't', 0, { id: 'i1', hard: 1, soft: 1, systemPrompt: 's'.repeat(5000) }, 0);
    cache.close();
    for (const b of fs.readdirSync(path.join(dir, 'blobs'))) fs.rmSync(path.join(dir, 'blobs', b));
    assert.equal(new ScoreCache(file).get('h1', 'i1', 't', 0, 0), undefined);
  });
});

describe('a run directory of the previous version (replies and skills inline in the journals)', () => {
  it('resumes, replays its journals, and ends as an uninterrupted run', async () => {
    // Written by the previous version: stopped by budget.max_calls=70 after step 3 of 4.
    const fixture = path.join(ROOT, 'test/fixtures/inline-journals-run');
    const options = ['train.num_epochs=2', 'env.n_train=20', 'env.n_val=10', 'env.n_test=10', 'train.batch_size=10'];
    const out = path.join(tmpDir(), 'run');
    fs.cpSync(fixture, out, { recursive: true });
    const paidBefore = providerCalls(out);
    // That version merged patches the staged way: a resume must say so, as for any training setting.
    await assert.rejects(trainSim(options, out), /gradient\.merge_strategy: "staged" -> "combined"/);
    // Nor did it audit its candidates.
    await assert.rejects(
      trainSim(options, out),
      /evaluation\.audit\.checks: \[\] -> \["leak","scorer_gaming","second_scorer","probes","sealed_test"\]/,
    );
    options.push('gradient.merge_strategy=staged', 'evaluation.audit.checks=[]');
    const resumed = await trainSim(options, out);
    assert.equal(resumed.outcome.status, 'finished');
    const reference = await trainSim(options);
    const withoutPay = (h: typeof reference.history) => h.map(({ tokens: _t, gate: _g, ...r }) => r);
    assert.deepEqual(withoutPay(resumed.history), withoutPay(reference.history));
    assert.equal(readText(path.join(out, 'best_skill.md')), readText(path.join(reference.out, 'best_skill.md')));
    assert.deepEqual(resumed.summary.test_hard, reference.summary.test_hard);
    // The finished steps' rollouts and calls were read back, not paid again.
    assert.ok(
      providerCalls(out) <= providerCalls(reference.out),
      `${providerCalls(out)} calls (${paidBefore} before the resume) vs ${providerCalls(reference.out)} uninterrupted`,
    );
  });
});

describe('the call ledger with long replies', () => {
  let fake: FakeProvider;
  const reply = (n: number) =>
    `<think>${`step ${n} of a long chain of thought. `.repeat(2000)}</think><answer>${n}</answer>`;
  before(async () => {
    fake = await startFakeProvider({
      respond: (r) => ({
        text: reply(Number(/\d+/.exec(JSON.stringify(r.body.messages))?.[0] ?? 0)),
        usage: { input: 10, output: 20000 },
      }),
    });
  });
  after(() => fake.close());

  async function models(ledgerFile: string) {
    const role = { backend: 'openai_compatible', model: 'my-local-model', base_url: `${fake.url}/v1` };
    const { config } = configWith({ model: { target: role, optimizer: role }, cache: { mode: 'off' } });
    return buildRoleModels(config, { environment: {}, ledgerFile });
  }

  it('stores each long reply once in blobs/ and replays it in full on resume', async () => {
    const dir = tmpDir();
    const ledgerFile = path.join(dir, 'calls.jsonl');
    const first = await models(ledgerFile);
    const asks = [1, 2, 3, 1].map((n) => ({
      purpose: 'rollout',
      messages: [{ role: 'user' as const, content: `question ${n}` }],
    }));
    const answers = [];
    for (const a of asks) answers.push((await first.target.complete(a)).text);
    first.ledger.close();
    assert.deepEqual(answers, [reply(1), reply(2), reply(3), reply(1)]);
    const journal = readText(ledgerFile);
    assert.ok(
      journal.length < 4 * 1000,
      `calls.jsonl is ${journal.length} bytes for four replies of ${reply(1).length}`,
    );
    assert.equal(fs.readdirSync(path.join(dir, 'blobs')).length, 3, 'the repeated reply is stored once');
    for (const { value } of jsonLines<{ usage: { output: number }; from: string }>(ledgerFile))
      assert.equal(value.usage.output, 20000);

    const requests = fake.requests.length;
    const second = await models(ledgerFile);
    const replayed = [];
    for (const a of asks) replayed.push(await second.target.complete(a));
    assert.deepEqual(
      replayed.map((r) => r.text),
      answers,
    );
    assert.ok(replayed.every((r) => r.from === 'journal'));
    assert.equal(fake.requests.length, requests, 'nothing asked again');
    assert.equal(second.ledger.totals().calls, 4, 'the calls of the first process still count');
    second.ledger.close();
  });
});
