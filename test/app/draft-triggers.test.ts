/**
 * `skillopt tasks draft --triggers`: a trigger eval set drafted by the optimizer model (here the
 * simulator) in skill-creator's format, every query marked as a draft, and the triggers env
 * refusing drafts until they are reviewed or accepted as they are.
 */
import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { draftTriggerSet } from '../../src/app/draft-triggers.ts';
import { loadConfig } from '../../src/config/load.ts';
import { TriggersEnv, TriggersOptionsSchema } from '../../src/envs/triggers/env.ts';
import { readTriggerSet } from '../../src/envs/triggers/trigger-set.ts';
import { ROOT } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';

const CONFIG = path.join(ROOT, 'configs/sim/triggers.yaml');
const SKILL = path.join(ROOT, 'configs/sim/triggers-skill');
const config = () => loadConfig(CONFIG, { environment: {} }).config;
const env = (file: string, accept: boolean) =>
  new TriggersEnv(
    { data_path: file, split_seed: 1, limit: 0 } as never,
    TriggersOptionsSchema.parse({ accept_unreviewed: accept }),
    { configDir: '.', resolvePath: (_k, v) => v },
  );

describe('tasks draft --triggers', () => {
  it('writes both kinds in skill-creator shape, each marked a draft; the env refuses them until accepted', async () => {
    const out = path.join(tmpDir(), 'evals', 'triggers.json');
    const said: string[] = [];
    const r = await draftTriggerSet({ config: config(), from: SKILL, out, count: 4, say: (l) => said.push(l) });
    assert.deepEqual([r.should, r.shouldNot], [4, 4]);
    assert.match(said[0]!, /asking the optimizer \(sim:sim-1\) for 4 \+ 4 trigger queries for workbook-charts/);
    const raw = JSON.parse(fs.readFileSync(out, 'utf8')) as Record<string, unknown>[];
    assert.ok(raw.every((q) => Object.keys(q).join() === 'query,should_trigger,draft' && q.draft === true));
    assert.equal((await readTriggerSet(out)).filter((q) => q.draft).length, 8);
    await assert.rejects(
      env(out, false).load(),
      /8 of its 8 queries are drafts no one has reviewed.*--accept-unreviewed/,
    );
    const splits = await env(out, true).load();
    assert.equal(splits.train.length + splits.val.length + splits.test.length, 8);
    // Reviewed: the mark removed from every query.
    fs.writeFileSync(out, JSON.stringify(raw.map(({ draft: _d, ...q }) => q)));
    assert.ok((await env(out, false).load()).train.length > 0);
  });

  it('refuses an existing file without --force, a skill with no description, and a file that is not JSON', async () => {
    const dir = tmpDir();
    const out = path.join(dir, 'set.json');
    fs.writeFileSync(out, '[]');
    await assert.rejects(draftTriggerSet({ config: config(), from: SKILL, out, count: 2 }), /exists: .*--force/);
    assert.equal(fs.readFileSync(out, 'utf8'), '[]');
    fs.writeFileSync(path.join(dir, 'plain.md'), 'Just a body.\n');
    await assert.rejects(
      draftTriggerSet({ config: config(), from: path.join(dir, 'plain.md'), out: path.join(dir, 'b.json'), count: 2 }),
      /needs front matter with a name and a description/,
    );
    await assert.rejects(
      draftTriggerSet({ config: config(), from: SKILL, out: path.join(dir, 'b.csv'), count: 2 }),
      /written as JSON/,
    );
  });
});
