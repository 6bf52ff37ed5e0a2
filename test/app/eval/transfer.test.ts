/**
 * The transfer check from the command line: one skill on two target models of an
 * OpenAI-compatible server (a fake one on 127.0.0.1), each model answering differently.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BIN, ROOT } from '../../helpers/cli.ts';
import { startFakeProvider, type FakeProvider } from '../../helpers/fake-provider.ts';
import { tmpDir } from '../../helpers/tmp.ts';
import { runShell } from '../../envs/shell.ts';
import { ticketResponder } from '../../envs/ticket-responder.ts';

describe('skillopt eval --target (transfer)', () => {
  let fake: FakeProvider;
  before(async () => {
    // model-b ignores the task and always says "billing"; model-a routes as the example's target does.
    fake = await startFakeProvider({
      respond: (r) => (r.body.model === 'model-b' ? { text: '<answer>billing</answer>' } : ticketResponder(r.body)),
    });
  });
  after(() => fake.close());

  it('scores the skill on each target, over HTTP', async () => {
    const dir = tmpDir();
    const out = path.join(dir, 'eval');
    const cmd = [
      process.execPath,
      BIN,
      'eval',
      '--config',
      'configs/tasks/example.yaml',
      '--skill',
      'configs/tasks/seed_skill.md',
      '--target',
      'openai_compatible:model-a',
      '--target',
      'openai_compatible:model-b',
      '--out',
      out,
      '--set',
      'cache.mode=off',
    ];
    const r = await runShell(
      cmd.map((a) => `'${a}'`).join(' '),
      ROOT,
      { PATH: process.env.PATH ?? '', HOME: dir, SKILLOPT_BASE_URL: `${fake.url}/v1` },
      120_000,
    );
    assert.equal(r.status, 0, r.stderr);
    const s = JSON.parse(fs.readFileSync(path.join(out, 'eval_summary.json'), 'utf8'));
    assert.deepEqual(
      s.cells.map((c: { target: string }) => c.target),
      ['openai_compatible:model-a', 'openai_compatible:model-b'],
    );
    const [a, b] = s.cells;
    assert.equal(a.n_items, 9);
    assert.ok(a.hard > b.hard, `${a.hard} vs ${b.hard}`);
    assert.deepEqual(new Set(fake.requests.map((q) => q.body.model)), new Set(['model-a', 'model-b']));
    assert.equal(fake.requests.length, 18, 'nine test items on each target; no optimizer call');
    assert.match(r.stdout, /\| seed_skill \| 0\.\d{3} \[[\d.]+, [\d.]+\] \(n=9\) \| 0\.\d{3} \[/);
  });
});
