import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import pLimit from 'p-limit';
import { describe, it } from 'node:test';
import { Reflector, extractNotes, type ReflectSettings } from '../../src/engine/stages/reflect.ts';
import type { Trajectory } from '../../src/envs/types.ts';
import { Rng } from '../../src/util/random.ts';
import { scriptedModel } from '../helpers/models.ts';
import { optimizerContext } from '../helpers/optimizer.ts';
import { tmpDir } from '../helpers/tmp.ts';

const traj = (i: number, pass: boolean): Trajectory => ({
  id: `t${i}`,
  hard: pass ? 1 : 0,
  soft: pass ? 1 : 0,
  task: `task ${i}`,
  failReason: pass ? undefined : `wrong: ${i}`,
});

function settings(model: ReturnType<typeof scriptedModel>, over: Partial<ReflectSettings> = {}): ReflectSettings {
  return {
    ctx: optimizerContext(model),
    skill: 'Skill body.',
    budget: 2,
    minibatchSize: 3,
    failureOnly: false,
    stepBuffer: [],
    stepBufferText: '',
    metaSkill: '',
    skillAware: false,
    appendixSource: 'both',
    analystGuide: '',
    traces: true,
    limit: pLimit(4),
    ...over,
  };
}

const analystReply = (req: { meta?: unknown }) => {
  const meta = req.meta as { source: string; trajectories: { id: string }[] };
  return JSON.stringify({
    batch_size: 99,
    failure_summary: [{ failure_type: 'format', count: 1, description: 'wrong format' }],
    patch: {
      reasoning: 'r',
      edits: meta.trajectories.map((t) => ({ op: 'append', content: `${meta.source}:${t.id}` })),
    },
    appendix_notes: ['re-check units', { note: 'read twice' }, 7],
  });
};

async function minibatches(order: number[], arrival: number[], n: number, over: Partial<ReflectSettings> = {}) {
  const model = scriptedModel(analystReply);
  const r = new Reflector(settings(model, over), order);
  for (const i of arrival) r.add(i, traj(i, i % 3 === 0));
  const calls = r.close();
  const results = await Promise.all([...calls.failure, ...calls.success]);
  return {
    model,
    results: results.map((x) => ({
      source: x.source,
      ids: (x.patch?.items ?? []).map((e) => (e as { content: string }).content),
    })),
    n,
  };
}

describe('reflection minibatches', () => {
  it('are the same whatever the order in which rollouts finish', async () => {
    const n = 14;
    const order = new Rng(5).shuffle([...Array(n).keys()]);
    const reference = await minibatches(order, [...Array(n).keys()], n, { budget: 99 });
    for (let seed = 0; seed < 5; seed++) {
      const other = await minibatches(order, new Rng(seed).shuffle([...Array(n).keys()]), n, { budget: 99 });
      assert.deepEqual(other.results, reference.results);
    }
    const sizes = reference.results.map((r) => r.ids.length);
    assert.deepEqual(sizes.slice().sort(), [2, 3, 3, 3, 3], 'failures: 9 -> 3+3+3, successes: 5 -> 3+2');
  });

  it('a minibatch is sent as soon as it is full, before the batch ends', async () => {
    const model = scriptedModel(analystReply);
    const r = new Reflector(settings(model), [0, 1, 2, 3, 4, 5]);
    r.add(1, traj(1, false));
    r.add(2, traj(2, false));
    assert.equal(model.requests.length, 0, 'item 0 is first in the order and not done yet');
    r.add(0, traj(0, false));
    await new Promise((res) => setImmediate(res));
    assert.equal(model.requests.length, 1);
    r.close();
  });

  it('failure_only skips successes; errors are not reflected on', async () => {
    const model = scriptedModel(analystReply);
    const r = new Reflector(settings(model, { failureOnly: true }), [0, 1, 2, 3]);
    r.add(0, traj(0, true));
    r.add(1, traj(1, false));
    r.add(2, { ...traj(2, false), error: { kind: 'timeout', message: 'x' } });
    r.add(3, traj(3, false));
    const calls = r.close();
    assert.equal(calls.success.length, 0);
    const [only] = await Promise.all(calls.failure);
    assert.deepEqual(
      only!.patch!.items.map((e) => (e as { content: string }).content),
      ['failure:t1', 'failure:t3'],
    );
  });

  it('truncates to the budget, sets support from the real minibatch size, writes the minibatch file', async () => {
    const dir = tmpDir();
    const model = scriptedModel(analystReply);
    const r = new Reflector(settings(model, { patchesDir: dir, skillAware: true }), [0, 1, 2]);
    for (const i of [0, 1, 2]) r.add(i, traj(i, false));
    const [res] = await Promise.all(r.close().failure);
    assert.equal(res!.patch!.items.length, 2);
    assert.ok(
      res!.patch!.items.every(
        (e) =>
          (e as { support_count: number }).support_count === 3 &&
          (e as { source_type: string }).source_type === 'failure',
      ),
    );
    assert.deepEqual(res!.notes, ['re-check units', 'read twice']);
    assert.deepEqual(res!.findings, ['format: wrong format']);
    const saved = JSON.parse(fs.readFileSync(path.join(dir, 'minibatch_fail_000.json'), 'utf8'));
    assert.equal(saved.source_type, 'failure');
    assert.deepEqual(saved.trajectory_ids, ['t0', 't1', 't2']);
    const prompt = String(model.requests[0]!.messages[0]!.content);
    assert.match(prompt, /## Edits Budget\nPropose at most 2 edits\./);
    assert.match(prompt, /## Failed Trajectories \(3 total\)/);
    assert.match(model.requests[0]!.system!, /EXECUTION_LAPSE/, 'skill-aware instructions are added');
  });

  it("an agent target's trace is shown to the analyst (which tools, which files, what failed), unless trace_to_optimizer is off", async () => {
    const traces = [
      {
        agent: 'claude-code',
        steps: [
          { tool: 'Read', input: '.claude/skills/skillopt-target/SKILL.md', ok: true },
          {
            tool: 'Bash',
            input: 'cat ../answers.jsonl',
            ok: false,
            output: 'Permission denied: outside the working directory',
          },
          { tool: 'Grep', input: 'receipts documents/treasury_bulletin_1944_01.txt', ok: true },
        ],
        files: ['.claude/skills/skillopt-target/SKILL.md', 'documents/treasury_bulletin_1944_01.txt'],
        errors: ['API Error: 529 overloaded'],
        durationMs: 5300,
        exitCode: 0,
      },
    ];
    const prompt = async (on: boolean) => {
      const model = scriptedModel(analystReply);
      const r = new Reflector(settings(model, { traces: on }), [0]);
      r.add(0, { ...traj(0, false), traces, conversation: [{ role: 'assistant', content: '<answer>12</answer>' }] });
      await Promise.all(r.close().failure);
      return String(model.requests[0]!.messages[0]!.content);
    };
    const shown = await prompt(true);
    assert.match(
      shown,
      /#### Agent Trace\nclaude-code, 3 tool calls\n1\. Read \.claude\/skills\/skillopt-target\/SKILL\.md\n2\. Bash cat \.\.\/answers\.jsonl \[failed\]: Permission denied: outside the working directory\n3\. Grep receipts documents\/treasury_bulletin_1944_01\.txt\nfiles: \.claude\/skills\/skillopt-target\/SKILL\.md, documents\/treasury_bulletin_1944_01\.txt\nerror: API Error: 529 overloaded\n\n\[assistant\] <answer>12<\/answer>/,
    );
    assert.doesNotMatch(await prompt(false), /Agent Trace|answers\.jsonl/);
  });

  it('an analyst failure gives no patch, not a crash', async () => {
    const model = scriptedModel(() => 'not json at all');
    const r = new Reflector(settings(model), [0]);
    r.add(0, traj(0, false));
    const [res] = await Promise.all(r.close().failure);
    assert.equal(res!.patch, null);
  });

  it('note extraction is tolerant', () => {
    assert.deepEqual(extractNotes('one'), ['one']);
    assert.deepEqual(extractNotes([' a ', { content: 'b' }, {}, null, '']), ['a', 'b']);
    assert.deepEqual(extractNotes(undefined), []);
  });
});
