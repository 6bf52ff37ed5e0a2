import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load.ts';
import { runTraining } from '../../src/app/train.ts';
import type { HistoryRecord } from '../../src/run/records.ts';
import { analystReplySchema, RankReplySchema, patchReplySchema } from '../../src/protocol/optimizer.ts';
import { writeHttpWorkload } from '../../bench/http-workload.ts';
import { scriptedResponder, taskRecords } from '../../bench/skillopt-script.ts';
import { startFakeProvider, type Recorded } from '../helpers/fake-provider.ts';
import { tmpDir } from '../helpers/tmp.ts';

const ENV = { n_train: 20, n_val: 12, n_test: 6 };

async function run(overrides: string[]) {
  const { train, val, test } = await taskRecords(ENV);
  const responder = scriptedResponder([...train, ...val, ...test], 0, 0);
  const replies: { schema: string; text: string }[] = [];
  const fake = await startFakeProvider({
    respond: async (r: Recorded) => {
      const reply = await responder(r);
      const schema = r.body.response_format?.json_schema?.name;
      if (schema) replies.push({ schema, text: reply.text ?? '' });
      return reply;
    },
  });
  try {
    const dir = tmpDir('http-workload');
    const file = await writeHttpWorkload(dir, fake.url, ENV);
    const loaded = loadConfig(file, {
      overrides: ['train.batch_size=10', 'train.num_epochs=1', 'env.workers=4', ...overrides],
      environment: {},
    });
    const out = path.join(dir, 'run');
    const outcome = await runTraining({ loaded, outRoot: out, configFile: file, console: false, environment: {} });
    assert.equal(outcome.status, 'finished');
    return { history: JSON.parse(fs.readFileSync(path.join(out, 'history.json'), 'utf8')) as HistoryRecord[], replies };
  } finally {
    await fake.close();
  }
}

describe("the engine bench's HTTP workload", () => {
  it('gives every step failure and success patches and merges, and the optimizer replies parse in the shapes the prompts ask for', async () => {
    const { history, replies } = await run([]);
    assert.equal(history.length, 2);
    for (const r of history) {
      assert.ok(
        (r.n_failure_patches ?? 0) > 0 && (r.n_success_patches ?? 0) > 0,
        `step ${r.step}: patches of both kinds`,
      );
      assert.ok((r.tokens?.merge?.calls ?? 0) > 0, `step ${r.step}: merged`);
      assert.ok((r.n_edits_merged ?? 0) > 0);
    }
    // The first step learns conventions the seed skill lacks: its candidate is taken in.
    assert.match(history[0]!.action, /^accept/);
    const failure = replies
      .filter((r) => r.schema === 'analyst_failure')
      .map((r) => analystReplySchema('patch', 'failure').parse(JSON.parse(r.text)));
    const named = failure.flatMap((f) =>
      ((f as { failure_summary?: { failure_type: string }[] }).failure_summary ?? []).map((s) => s.failure_type),
    );
    // The failed answers break conventions the seed skill lacks, and the analysts name them.
    assert.ok(named.includes('two_decimals') || named.includes('no_thousands'), named.join(', '));
    for (const r of replies.filter((x) => x.schema === 'merged_patch'))
      assert.ok(patchReplySchema('patch').parse(JSON.parse(r.text)).edits!.length > 0);
  });

  it('ranks the merged edits when the staged merge leaves more than the budget', async () => {
    const { history, replies } = await run(['gradient.merge_strategy=staged']);
    const ranked = replies.filter((x) => x.schema === 'ranking').map((r) => RankReplySchema.parse(JSON.parse(r.text)));
    assert.ok(ranked.length > 0 && history.some((r) => (r.tokens?.ranking?.calls ?? 0) > 0));
    for (const r of ranked) assert.ok(r.selected_indices.length > 0);
  });
});
