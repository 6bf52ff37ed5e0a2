/**
 * A provider that hangs or is down never costs minutes of silence: a call without a reply for
 * long is said on the console (and again while it lasts); Ctrl-C or SIGTERM stops the run within
 * its short grace, the calls still in flight abandoned and made again on resume, those that
 * finished never paid twice; a server that refuses every connection stops the run within a few
 * seconds, resumably, naming its URL, instead of climbing every call's backoff ladder.
 */
import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, it } from 'node:test';
import { stringify } from 'yaml';
import { SimEnv, SimEnvOptions } from '../../src/envs/sim/env.ts';
import { readJsonLines } from '../../src/run/atomic.ts';
import { shellSplit } from '../../src/run/resume-command.ts';
import type { CallRecord } from '../../src/model/ledger.ts';
import { buildRoleModels, type ModelEvent } from '../../src/model/stack.ts';
import { BIN, ROOT, runCliAsync } from '../helpers/cli.ts';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { skillRunResponder } from '../helpers/fake-skillopt-responder.ts';
import { configWith } from '../helpers/model-config.ts';
import { tmpDir } from '../helpers/tmp.ts';

const ENV = { n_train: 8, n_val: 6, n_test: 6 };

/** A sim training run whose roles call `baseUrl`, with these `run` settings and role settings. */
function configOver(dir: string, baseUrl: string, run: Record<string, unknown>, role: Record<string, unknown> = {}) {
  const r = { backend: 'openai_compatible', model: 'fake-model', base_url: baseUrl, concurrency: 4, ...role };
  const file = path.join(dir, 'config.yaml');
  fs.writeFileSync(
    file,
    stringify({
      model: { backend: 'openai_compatible', target: r, optimizer: r, reasoning_effort: '' },
      train: { num_epochs: 1, batch_size: 4, seed: 5 },
      gradient: { minibatch_size: 4, merge_batch_size: 4, analyst_workers: 2 },
      env: { name: 'sim', skill_init: path.join(ROOT, 'configs/sim/seed_skill.md'), workers: 4, ...ENV },
      cache: { mode: 'off' },
      run,
    }),
  );
  return file;
}

async function simItems() {
  const splits = await new SimEnv(SimEnvOptions.parse(ENV)).load();
  return [...splits.train, ...splits.val, ...splits.test];
}

/** A port nothing listens on. */
async function deadPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('a provider that does not answer', () => {
  it('a call without a reply for long is said on the console: role, calls, how long, the timeout; and again while it lasts', {
    timeout: 30_000,
  }, async () => {
    const fake = await startFakeProvider({ fault: () => ({ kind: 'hang' }) });
    try {
      const role = { backend: 'openai_compatible', model: 'fake-model', base_url: `${fake.url}/v1`, timeout_s: 300 };
      const { config } = configWith({
        model: { target: role, optimizer: role },
        cache: { mode: 'off' },
        run: { slow_call_s: 0.3, slow_call_every_s: 0.4 },
      });
      const notices: string[] = [];
      let enough: () => void;
      const twice = new Promise<void>((resolve) => (enough = resolve));
      const m = await buildRoleModels(config, {
        environment: {},
        onEvent: (e: ModelEvent) => {
          if (e.type !== 'log') return;
          notices.push(e.message);
          if (notices.length === 2) enough();
        },
      });
      const stop = new AbortController();
      const calls = [1, 2].map((i) =>
        m.target.complete({ purpose: 'rollout', messages: [{ role: 'user', content: `q${i}` }], signal: stop.signal }),
      );
      await twice;
      stop.abort();
      await Promise.allSettled(calls);
      for (const n of notices)
        assert.match(
          n,
          /^model\.target \(openai_compatible:fake-model\): 2 calls have had no reply yet, the oldest for \d+ s; each is given up after 5 min \(model\.target\.timeout_s\)$/,
        );
      m.close();
    } finally {
      await fake.close();
    }
  });

  it('SIGTERM with calls hung: the run stops within its grace, resumably; the resume makes the abandoned calls again and pays none twice', {
    timeout: 120_000,
  }, async () => {
    const items = await simItems();
    const answer = skillRunResponder(items);
    // The first requests are answered; then the provider hangs, until the resume.
    let hang = false;
    const answered = new Set<string>();
    let resumed = false;
    let paidTwice = 0;
    const fake = await startFakeProvider({
      fault: () => (hang ? { kind: 'hang' } : undefined),
      respond: async (r) => {
        const key = JSON.stringify(r.body);
        if (resumed && answered.has(key)) paidTwice++;
        if (!resumed) answered.add(key);
        if (!resumed && answered.size >= 6) hang = true;
        return answer(r);
      },
    });
    try {
      const dir = tmpDir();
      const out = path.join(dir, 'run');
      const file = configOver(dir, `${fake.url}/v1`, { slow_call_s: 0.5, slow_call_every_s: 1, stop_grace_s: 0.5 });
      const child = spawn(process.execPath, [BIN, 'train', '--config', file, '--out', out], {
        cwd: dir,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      const noticed = new Promise<void>((resolve) =>
        child.stderr.on('data', (d) => {
          stderr += d;
          if (/had no reply yet/.test(stderr)) resolve();
        }),
      );
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      await noticed;
      child.kill('SIGTERM');
      const status = await exited;
      assert.equal(status, 130, `${stdout}\n${stderr}`);
      assert.match(stderr, /model\.target \(openai_compatible:fake-model\): \d calls? ha(s|ve) had no reply yet/);
      assert.match(stderr, /abandoned: the run makes (it|them) again when it resumes/);
      const before = readJsonLines<CallRecord>(path.join(out, 'calls.jsonl')).filter((c) => !c.error);
      assert.ok(before.length >= 6, 'the calls that finished are saved');

      // The provider answers again; the printed command resumes the run.
      hang = false;
      resumed = true;
      const command = /To resume: (skillopt .*)/.exec(`${stdout}\n${stderr}`)?.[1];
      assert.ok(command, stdout);
      const [, ...args] = shellSplit(command);
      const again = await runCliAsync(args, { cwd: dir });
      assert.equal(again.status, 0, again.stderr);
      assert.equal(paidTwice, 0, 'no call answered before the stop was sent again');
      const replayed = readJsonLines<CallRecord>(path.join(out, 'calls.jsonl')).filter((c) => c.from === 'journal');
      assert.ok(replayed.length >= 1, 'the saved calls were replayed');
      assert.ok(fs.existsSync(path.join(out, 'best_skill.md')));
    } finally {
      await fake.close();
    }
  });
});

describe('a server that refuses every connection', () => {
  it('down from the start: the run stops within run.unreachable_s, naming the URL and what to check, resumably', {
    timeout: 60_000,
  }, async () => {
    const dir = tmpDir();
    const url = `http://127.0.0.1:${await deadPort()}/v1`;
    const out = path.join(dir, 'run');
    const r = await runCliAsync(['train', '--config', configOver(dir, url, { unreachable_s: 1 }), '--out', out], {
      cwd: dir,
    });
    assert.equal(r.status, 1, r.stdout);
    assert.match(
      `${r.stdout}\n${r.stderr}`,
      new RegExp(
        `\\[stopped: unreachable\\] model\\.(target|optimizer) \\(openai_compatible:fake-model\\): every connection to ${url.replace(/[./]/g, '\\$&')} was refused for 1 s \\(last: .*ECONNREFUSED.*\\): is the server running and listening there\\? Check model\\.(target|optimizer)\\.base_url`,
      ),
    );
    assert.match(r.stdout, /To resume: skillopt train/);
  });

  it('killed mid-run: the run stops a few seconds later, without each call climbing its backoff ladder', {
    timeout: 90_000,
  }, async () => {
    const items = await simItems();
    const answer = skillRunResponder(items);
    let served = 0;
    let fake: FakeProvider | undefined;
    const closing: Promise<void>[] = [];
    fake = await startFakeProvider({
      respond: async (r) => {
        if (++served === 8) closing.push(fake!.close());
        return answer(r);
      },
    });
    const dir = tmpDir();
    const out = path.join(dir, 'run');
    // The ladder a call would climb: 1 + 2 + 4 + 8 + 16 + 30 s of backoff over six attempts.
    const file = configOver(dir, `${fake.url}/v1`, { unreachable_s: 2 }, { max_retries: 6, backoff_s: 1 });
    const r = await runCliAsync(['train', '--config', file, '--out', out], { cwd: dir });
    await Promise.all(closing);
    assert.equal(r.status, 1, r.stdout);
    assert.match(
      r.stdout,
      /\[stopped: unreachable\] .*every connection to http:\/\/127\.0\.0\.1:\d+\/v1 was refused for 2 s/,
    );
    const calls = readJsonLines<CallRecord>(path.join(out, 'calls.jsonl'));
    assert.ok(
      calls.every((c) => !c.error),
      'no call was given up: each is made again on resume',
    );
    assert.ok(calls.length >= 1);
  });
});
