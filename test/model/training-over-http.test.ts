import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { stringify } from 'yaml';
import { loadConfig } from '../../src/config/load.ts';
import { runTraining } from '../../src/app/train.ts';
import { UserError } from '../../src/errors.ts';
import { SimEnv, SimEnvOptions } from '../../src/envs/sim/env.ts';
import { readJsonLines } from '../../src/run/atomic.ts';
import type { CallRecord } from '../../src/model/ledger.ts';
import { ROOT } from '../helpers/cli.ts';
import { startFakeProvider, type Fault, type FakeProvider } from '../helpers/fake-provider.ts';
import { skillRunResponder } from '../helpers/fake-skillopt-responder.ts';
import { tmpDir } from '../helpers/tmp.ts';

const ENV = { n_train: 16, n_val: 12, n_test: 12 };

const FAULTS: Fault[] = [
  { status: 429, headers: { 'retry-after-ms': '30' } },
  { status: 429 },
  { status: 500 },
  { status: 503 },
  { kind: 'reset' },
  { kind: 'malformed' },
  { kind: 'empty' },
  { kind: 'hang' },
];

/** 20% of distinct requests fail on their first attempt (one in four of those on the second too); the kind cycles. */
function faultPlan(): (r: { body: unknown }) => Fault | undefined {
  const attempts = new Map<string, number>();
  return (r) => {
    const h = createHash('sha256').update(JSON.stringify(r.body)).digest();
    const key = h.toString('hex');
    const n = attempts.get(key) ?? 0;
    attempts.set(key, n + 1);
    const roll = h.readUInt32BE(0) / 2 ** 32;
    if (roll >= 0.2) return undefined;
    const failures = roll < 0.05 ? 2 : 1;
    return n < failures ? FAULTS[h[4]! % FAULTS.length] : undefined;
  };
}

interface TrainResult {
  outcome: Awaited<ReturnType<typeof runTraining>>;
  skill: string;
  calls: CallRecord[];
  history: unknown[];
  outRoot: string;
}

async function trainOver(
  fake: FakeProvider,
  dir: string,
  extra: { budget?: Record<string, number | boolean>; model?: string } = {},
): Promise<TrainResult> {
  const role = {
    backend: 'openai_compatible',
    model: extra.model ?? 'fake-model',
    base_url: `${fake.url}/v1`,
    concurrency: 6,
    max_retries: 4,
    backoff_s: 0.01,
    backoff_max_s: 0.05,
    timeout_s: 1,
  };
  const file = path.join(dir, 'config.yaml');
  fs.writeFileSync(
    file,
    stringify({
      model: { backend: 'openai_compatible', target: role, optimizer: role, reasoning_effort: '' },
      train: { num_epochs: 2, batch_size: 8, seed: 3 },
      gradient: { minibatch_size: 4, merge_batch_size: 4, analyst_workers: 4 },
      optimizer: { learning_rate: 2, min_learning_rate: 1, slow_update_samples: 4 },
      evaluation: { eval_test: true },
      env: { name: 'sim', skill_init: path.join(ROOT, 'configs/sim/seed_skill.md'), workers: 6, ...ENV },
      cache: { mode: 'off' },
      ...(extra.budget ? { budget: extra.budget } : {}),
    }),
  );
  const outRoot = path.join(dir, 'run');
  const loaded = loadConfig(file, { environment: {}, cwd: dir });
  const outcome = await runTraining({ loaded, outRoot, configFile: file, console: false, environment: {} });
  const best = path.join(outRoot, 'best_skill.md');
  return {
    outcome,
    outRoot,
    skill: fs.existsSync(best) ? fs.readFileSync(best, 'utf8') : '',
    calls: readJsonLines<CallRecord>(path.join(outRoot, 'calls.jsonl')),
    history: fs.existsSync(path.join(outRoot, 'history.json'))
      ? (JSON.parse(fs.readFileSync(path.join(outRoot, 'history.json'), 'utf8')) as unknown[])
      : [],
  };
}

describe('a whole training run over HTTP', () => {
  it('ends with the same skill when 20% of calls fail: faults cost retries, never results', async () => {
    const splits = await new SimEnv(SimEnvOptions.parse(ENV)).load();
    const items = [...splits.train, ...splits.val, ...splits.test];

    const clean = await startFakeProvider({ respond: skillRunResponder(items) });
    const faulty = await startFakeProvider({ respond: skillRunResponder(items), fault: faultPlan() });
    try {
      const a = await trainOver(clean, tmpDir());
      const b = await trainOver(faulty, tmpDir());
      assert.equal(a.outcome.status, 'finished');
      assert.equal(b.outcome.status, 'finished');

      // The run learned something, so that sameness means something.
      assert.notEqual(a.skill, fs.readFileSync(path.join(ROOT, 'configs/sim/seed_skill.md'), 'utf8'));
      assert.equal(b.skill, a.skill);
      // Step by step the same records, but for time and the token counts of retried calls.
      const strip = (h: unknown[]) =>
        JSON.stringify(
          h.map((r) => ({ ...(r as object), timing: undefined, wall_time_s: undefined, tokens: undefined })),
        );
      assert.equal(strip(b.history), strip(a.history));

      // Faults really happened, were retried, and none reached the results.
      const injected = faulty.requests.length - b.calls.length;
      assert.ok(injected / faulty.requests.length >= 0.15, `${injected} of ${faulty.requests.length} requests faulted`);
      assert.ok(b.calls.some((c) => c.retries > 0));
      assert.deepEqual(
        b.calls.filter((c) => c.error).map((c) => c.error),
        [],
        'no call of the faulty run failed for good',
      );
      assert.equal(b.calls.length, a.calls.length, 'the same calls were recorded');
      // Both kinds of call went over HTTP.
      assert.ok(b.calls.some((c) => c.role === 'target') && b.calls.some((c) => c.role === 'optimizer'));
    } finally {
      await clean.close();
      await faulty.close();
    }
  });

  it('an item whose target calls keep failing is recorded as an infrastructure error, kept out of the score', async () => {
    const splits = await new SimEnv(SimEnvOptions.parse(ENV)).load();
    const items = [...splits.train, ...splits.val, ...splits.test];
    const doomed = String(splits.val[0]!.question);
    const fake = await startFakeProvider({
      respond: skillRunResponder(items),
      fault: (r) =>
        (r.body as { messages: { content: unknown }[] }).messages.at(-1)!.content === doomed
          ? { status: 503 }
          : undefined,
    });
    try {
      const run = await trainOver(fake, tmpDir());
      assert.equal(run.outcome.status, 'finished');
      const baseline = readJsonLines<{ id: string; hard: number; error?: { kind: string; message: string } }>(
        path.join(run.outRoot, 'selection_eval_baseline', 'results.jsonl'),
      );
      const failed = baseline.find((r) => r.id === splits.val[0]!.id)!;
      assert.equal(failed.error?.kind, 'server');
      assert.match(failed.error!.message, /after 5 attempts/);
      assert.ok(run.calls.some((c) => c.error && /InfraError/.test(c.error)));
    } finally {
      await fake.close();
    }
  });

  it('a USD cap with a model of unknown price is refused before any call, saying how to set the price; allowed, it warns', async () => {
    const fake = await startFakeProvider();
    try {
      const dir = tmpDir();
      await assert.rejects(
        trainOver(fake, dir, { budget: { max_usd: 0.01 } }),
        (e) =>
          e instanceof UserError &&
          // The judge is named too: it is the audit's second scorer of the sim env's exact-match rule.
          /budget\.max_usd=0\.01 .*price of model\.target \(openai_compatible:fake-model\) and model\.judge \(openai_compatible:fake-model\) and model\.optimizer \(openai_compatible:fake-model\) is unknown/.test(
            e.message,
          ) &&
          /model\.target\.price: \{input: /.test(e.message) &&
          /budget\.allow_unpriced: true/.test(e.message),
      );
      assert.equal(fake.requests.length, 0, 'no call made');
      const allowed = await trainOver(fake, tmpDir(), {
        budget: { max_usd: 0.01, allow_unpriced: true, max_calls: 3 },
      });
      assert.equal(allowed.outcome.status, 'stopped');
      const events = readJsonLines<{ type: string; level?: string; message?: string }>(
        path.join(allowed.outRoot, 'events.jsonl'),
      );
      assert.ok(
        events.some(
          (e) =>
            e.type === 'log' &&
            e.level === 'warn' &&
            /counts only calls of known price: the price of model\.target/.test(e.message!),
        ),
      );
    } finally {
      await fake.close();
    }
  });

  it('the budget stops a run at a step boundary; raised, the run resumes and pays for nothing twice', async () => {
    const splits = await new SimEnv(SimEnvOptions.parse(ENV)).load();
    const items = [...splits.train, ...splits.val, ...splits.test];
    const fake = await startFakeProvider({ respond: skillRunResponder(items) });
    try {
      // gpt-4o-mini has a price in the table, so the USD budget applies.
      const whole = await trainOver(fake, tmpDir(), { model: 'gpt-4o-mini' });
      const wholeRequests = fake.requests.length;
      // A cap at two thirds of what the whole run spends, so that it falls within some step whatever that step's calls cost.
      const cost = (calls: CallRecord[]) =>
        calls.filter((c) => c.from === 'provider').reduce((s, c) => s + (c.cost_usd ?? 0), 0);
      const cap = Number(((cost(whole.calls) * 2) / 3).toFixed(6));
      const dir = tmpDir();
      const stopped = await trainOver(fake, dir, { model: 'gpt-4o-mini', budget: { max_usd: cap } });
      assert.equal(stopped.outcome.status, 'stopped');
      assert.match((stopped.outcome as { reason: string }).reason, /max_usd/);
      const spent = cost(stopped.calls);
      assert.ok(spent >= cap, `spent $${spent} of $${cap}`);
      const resumed = await trainOver(fake, dir, { model: 'gpt-4o-mini', budget: { max_usd: 0 } });
      assert.equal(resumed.outcome.status, 'finished');
      assert.equal(resumed.skill, whole.skill);
      // Nothing asked by the stopped process is asked again after the resume (unless one whole run asks it twice too).
      const bodies = (from: number, to: number) => fake.requests.slice(from, to).map((r) => JSON.stringify(r.body));
      const inWhole = new Map<string, number>();
      for (const b of bodies(0, wholeRequests)) inWhole.set(b, (inWhole.get(b) ?? 0) + 1);
      const stoppedCount = stopped.calls.filter((c) => c.from === 'provider').length;
      const first = new Set(bodies(wholeRequests, wholeRequests + stoppedCount));
      const again = bodies(wholeRequests + stoppedCount, fake.requests.length).filter(
        (b) => first.has(b) && (inWhole.get(b) ?? 0) < 2,
      );
      assert.deepEqual(again, []);
      // Together they asked no more than one uninterrupted run asks (the journal may even answer a
      // request that an uninterrupted run, with the response cache off, sends twice).
      assert.ok(
        fake.requests.length - wholeRequests <= wholeRequests,
        `${fake.requests.length - wholeRequests} requests, ${wholeRequests} in one run`,
      );
      assert.ok(resumed.calls.some((c) => c.from === 'journal'));
    } finally {
      await fake.close();
    }
  });
});
