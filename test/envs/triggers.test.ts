/**
 * The triggers env: skill-creator's trigger eval set read as it is (and the same fields from
 * JSONL and CSV), bad records named, splits that keep both kinds of query in each, precision,
 * recall and F1, the simulated agent's choice among listed skills, and `skillopt eval` on it.
 */
import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { runEvaluation } from '../../src/app/eval/evaluate.ts';
import { loadConfig } from '../../src/config/load.ts';
import { TriggersEnv, TriggersOptionsSchema, skillsList } from '../../src/envs/triggers/env.ts';
import { activationMetrics } from '../../src/envs/triggers/metrics.ts';
import { readTriggerSet, splitTriggers, type TriggerQuery } from '../../src/envs/triggers/trigger-set.ts';
import type { Trajectory } from '../../src/envs/types.ts';
import { fit, simLoad } from '../../src/model/sim/activation.ts';
import type { ChatModel, ChatRequest } from '../../src/model/types.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SIM = path.join(ROOT, 'configs/sim');

describe('trigger eval sets', () => {
  it("reads skill-creator's own format: a JSON list of query and should_trigger", async () => {
    const queries = await readTriggerSet(path.join(SIM, 'trigger-evals.json'));
    assert.equal(queries.length, 20);
    assert.deepEqual(queries[0], {
      id: 'trigger-evals:1',
      type: 'should_trigger',
      query: 'can you add a line chart of monthly revenue to sales_2025.xlsx',
      should_trigger: true,
    });
    assert.equal(queries.filter((q) => q.should_trigger).length, 10);
  });

  it('reads the same fields from JSONL and CSV, with ids, splits and workspace files', async () => {
    const dir = tmpDir();
    writeFiles(dir, {
      'set.jsonl': `${JSON.stringify({ id: 'a', query: 'chart it', should_trigger: true, split: 'test', files: ['data.xlsx'] })}\n${JSON.stringify({ query: 'no', should_trigger: false })}\n`,
      'set.csv': 'query,should_trigger\n"plot this, please",yes\nsummarise the notes,0\n',
      'data.xlsx': 'PK',
    });
    const jsonl = await readTriggerSet(path.join(dir, 'set.jsonl'));
    assert.deepEqual(
      jsonl.map((q) => [q.id, q.should_trigger, q.split, q.files]),
      [
        ['a', true, 'test', [path.join(dir, 'data.xlsx')]],
        ['set:2', false, undefined, undefined],
      ],
    );
    const csv = await readTriggerSet(path.join(dir, 'set.csv'));
    assert.deepEqual(
      csv.map((q) => [q.query, q.should_trigger]),
      [
        ['plot this, please', true],
        ['summarise the notes', false],
      ],
    );
  });

  it('names the file, the record and the field of a bad query', async () => {
    const dir = tmpDir();
    writeFiles(dir, {
      'a.json': '[{"query": "x", "should_trigger": true},\n {"query": "y", "should_trigger": "sometimes"}]',
      'b.json': '[{"should_trigger": true}]',
      'c.json': '[{"query": "x"}]',
      'd.json': '[{"id": 1, "query": "x", "should_trigger": true}, {"id": 1, "query": "y", "should_trigger": false}]',
      'e.json': '[{"query": "x", "should_trigger": true, "files": ["missing.txt"]}]',
    });
    const refused = async (file: string, pattern: RegExp) =>
      assert.rejects(readTriggerSet(path.join(dir, file)), (err: Error) => {
        assert.match(err.message, pattern);
        assert.ok(err.message.includes(path.join(dir, file)), err.message);
        return true;
      });
    await refused('a.json', /a\.json:2 \(item 2\): field 'should_trigger' must be true or false \(got "sometimes"\)/);
    await refused('b.json', /field 'query' must be/);
    await refused('c.json', /missing field 'should_trigger'/);
    await refused('d.json', /id '1' appears twice/);
    await refused('e.json', /field 'files' names missing\.txt, which is not there/);
  });

  it('splits each kind apart: 40% held out, half gating and half testing; given splits kept', () => {
    const qs: TriggerQuery[] = Array.from({ length: 20 }, (_, i) => ({
      id: `q${i}`,
      query: `query ${i}`,
      should_trigger: i < 10,
      type: i < 10 ? 'should_trigger' : 'should_not_trigger',
      ...(i === 0 ? { split: 'train' as const } : {}),
    }));
    const s = splitTriggers(qs, 0.4, 7);
    const kinds = (split: TriggerQuery[]) => [
      split.filter((q) => q.should_trigger).length,
      split.filter((q) => !q.should_trigger).length,
    ];
    assert.deepEqual(kinds(s.train as TriggerQuery[]), [6, 6], 'q0 stays in train; 40% of the other nine held out');
    assert.deepEqual(kinds(s.val as TriggerQuery[]), [2, 2]);
    assert.deepEqual(kinds(s.test as TriggerQuery[]), [2, 2]);
    assert.ok(s.train.some((q) => q.id === 'q0'));
    assert.deepEqual(splitTriggers(qs, 0.4, 7), s, 'the same seed, the same split');
    assert.notDeepEqual(splitTriggers(qs, 0.4, 8).val, s.val);
    assert.deepEqual(splitTriggers(qs.slice(0, 10), 0.4, 7).warnings?.length, 3, 'one kind only: warned per split');
  });
});

describe('activation metrics', () => {
  const t = (id: string, should: boolean, loaded: boolean, error = false): Trajectory => ({
    id,
    hard: should === loaded ? 1 : 0,
    soft: 0,
    activation: { should, loaded },
    ...(error ? { error: { kind: 'x', message: 'y' } } : {}),
  });
  it('precision, recall and F1 over rollouts; a query passes on its load rate; errors left out', () => {
    const m = activationMetrics([
      t('a', true, true),
      t('a', true, false),
      t('a', true, true),
      t('b', true, false),
      t('c', false, true),
      t('d', false, false),
      t('d', false, false, true),
      { id: 'e', hard: 1, soft: 1 },
    ])!;
    assert.deepEqual([m.n, m.tp, m.fn, m.fp, m.tn], [6, 2, 2, 1, 1]);
    assert.equal(m.precision, 0.666667);
    assert.equal(m.recall, 0.5);
    assert.equal(m.f1, 0.571429);
    assert.deepEqual([m.passed, m.queries], [2, 4], 'a (2 of 3 loaded) and d pass; b and c do not');
    assert.deepEqual(m.by_query.a, { loaded: 2, of: 3, should: true });
    assert.equal(activationMetrics([{ id: 'x', hard: 1, soft: 1 }]), undefined);
  });
});

describe('the simulated agent choosing a skill', () => {
  const skills = [
    { name: 'workbook-charts', description: 'Build charts in Excel workbooks. Use when the user wants a chart.' },
    { name: 'commit-messages', description: 'Write git commit messages from a staged diff.' },
  ];
  it('loads the skill whose description fits the query best, and none when nothing fits', () => {
    const loads = (query: string, list = skills) =>
      Array.from({ length: 20 }, (_, sample) => simLoad(query, list, { seed: 1, sample }));
    const chart = loads('add a chart of revenue to the workbook');
    // Two words in common: a chance of 1 - e^-1.6 (0.8) each sample.
    assert.ok(chart.filter((n) => n === 'workbook-charts').length >= 12, 'two words in common: loaded most times');
    assert.ok(!chart.includes('commit-messages'));
    assert.ok(loads('write commit messages for the staged diff').every((n) => n !== 'workbook-charts'));
    assert.ok(loads('what is the capital of France').every((n) => n === undefined));
  });

  it('a description that claims everything draws the unrelated queries too', () => {
    assert.equal(fit('what is the capital of France', 'Use for anything the user asks.'), 2);
    assert.equal(fit('what is the capital of France', 'Build charts in workbooks.'), 0);
  });
});

describe('the triggers env', () => {
  it('a chat model gets the skills listed as Claude Code lists them and a Skill tool; its call is the load', async () => {
    const seen: ChatRequest[] = [];
    const target: ChatModel = {
      id: 'fake:chat',
      complete: async (req) => {
        seen.push(req);
        return {
          text: '',
          toolCalls: [{ id: '1', name: 'Skill', input: { skill: 'workbook-charts' } }],
          usage: { input: 1, output: 1, cached: 0, reasoning: 0 },
          latencyMs: 0,
          from: 'provider',
        };
      },
    };
    const env = new TriggersEnv({ data_path: 'x', split_seed: 1, limit: 0 } as never, TriggersOptionsSchema.parse({}), {
      configDir: '.',
      resolvePath: (_k, v) => v,
    });
    const skill = fs.readFileSync(path.join(SIM, 'triggers-skill/SKILL.md'), 'utf8');
    const q: TriggerQuery = {
      id: 'n',
      query: 'fill in this PDF form',
      should_trigger: false,
      type: 'should_not_trigger',
    };
    const r = await env.rollout(q, skill, { target, seed: 1 });
    assert.deepEqual(r.activation, { should: false, loaded: true });
    assert.equal(r.hard, 0);
    assert.match(r.failReason!, /^false trigger: /);
    const req = seen[0]!;
    assert.match(req.system!, /^- workbook-charts: Helps with data\.$/m);
    assert.match(req.system!, /^- pdf-forms: Fill in, flatten/m);
    assert.doesNotMatch(req.system!, /Workbook charts/, "the skill's body is not in the prompt");
    assert.deepEqual(
      req.tools?.map((t) => t.name),
      ['Skill'],
    );
    assert.equal(req.messages.length, 1);
    assert.equal(
      skillsList([
        { name: 'b', description: 'two\n lines' },
        { name: 'a', description: 'A' },
      ]),
      '- a: A\n- b: two lines',
    );
  });

  it('a query with an answer scores activation × task success: the chat model gets the skill as the tool result and answers', async () => {
    const dir = tmpDir();
    writeFiles(dir, {
      'set.json': JSON.stringify([
        { id: 'a', query: 'add a line chart of revenue to sales.xlsx', should_trigger: true, answer: 'sheet Charts' },
        { id: 'b', query: 'plot signups per week', should_trigger: true, answer: ['tab Plots', 'sheet Plots'] },
        {
          id: 'c',
          query: 'resize these photos',
          should_trigger: false,
          answer: 'ignored: the skill should not serve it',
        },
        { id: 'd', query: 'chart it', should_trigger: true, answer: [] },
      ]),
    });
    await assert.rejects(
      readTriggerSet(path.join(dir, 'set.json')),
      /set\.json.*'answer' must be the expected answer/s,
    );
    const json = JSON.parse(fs.readFileSync(path.join(dir, 'set.json'), 'utf8')).slice(0, 3);
    fs.writeFileSync(path.join(dir, 'set.json'), JSON.stringify(json));
    const [a, b, c] = await readTriggerSet(path.join(dir, 'set.json'));
    assert.deepEqual(b!.answer, ['tab Plots', 'sheet Plots']);

    const seen: ChatRequest[] = [];
    // Loads the skill for any query about charts, then answers with what the skill's text says.
    const target: ChatModel = {
      id: 'fake:chat',
      complete: async (req) => {
        seen.push(req);
        const usage = { input: 10, output: 2, cached: 0, reasoning: 0 };
        const result = req.messages.find((m) => m.role === 'tool');
        if (result?.role === 'tool')
          return { text: `Done: put it on ${/sheet \w+/.exec(result.content)?.[0]}.`, usage, latencyMs: 0 };
        const query = String(req.messages[0]!.content);
        return /chart|plot/.test(query)
          ? {
              text: '',
              toolCalls: [{ id: 't1', name: 'Skill', input: { skill: 'workbook-charts' } }],
              usage,
              latencyMs: 0,
            }
          : { text: 'Resized.', usage, latencyMs: 0 };
      },
    };
    const env = new TriggersEnv({ data_path: 'x', split_seed: 1, limit: 0 } as never, TriggersOptionsSchema.parse({}), {
      configDir: '.',
      resolvePath: (_k, v) => v,
    });
    const skill =
      '---\nname: workbook-charts\ndescription: Build charts in workbooks.\n---\n\n# Charts\nPut each chart on sheet Charts.\n';
    const ra = await env.rollout(a!, skill, { target, seed: 1 });
    assert.deepEqual(ra.activation, { should: true, loaded: true, task: 1 });
    assert.equal(ra.hard, 1);
    assert.deepEqual(ra.usage, { input: 20, output: 4, cached: 0, reasoning: 0 }, 'both calls counted');
    const second = seen[1]!;
    assert.equal(second.messages[1]!.role, 'assistant');
    assert.deepEqual(second.messages[2], {
      role: 'tool',
      toolCallId: 't1',
      toolName: 'Skill',
      content: '# Charts\nPut each chart on sheet Charts.',
    });
    assert.equal(second.activation?.toAnswer, true, 'an agent target would run on to its answer');

    const rb = await env.rollout(b!, skill, { target, seed: 1 });
    assert.deepEqual(rb.activation, { should: true, loaded: true, task: 0 });
    assert.equal(rb.hard, 0, 'loaded as it should, but the reply misses the answer');
    assert.match(rb.failReason!, /^wrong answer: /);
    const rc = await env.rollout(c!, skill, { target, seed: 1 });
    assert.deepEqual(rc.activation, { should: false, loaded: false }, 'a should-not query scores activation alone');
    assert.equal(seen.at(-1)!.activation?.toAnswer, undefined);

    const m = activationMetrics([ra, rb, rc])!;
    assert.deepEqual([m.f1, m.task, m.joint], [1, 0.5, 0.5]);
  });

  it('refuses a skill with no name and description to list', async () => {
    const env = new TriggersEnv({ data_path: 'x', split_seed: 1, limit: 0 } as never, TriggersOptionsSchema.parse({}), {
      configDir: '.',
      resolvePath: (_k, v) => v,
    });
    const q: TriggerQuery = { id: 'n', query: 'x', should_trigger: true, type: 'should_trigger' };
    await assert.rejects(
      env.rollout(q, 'Just a body.', { target: { id: 'x', complete: async () => assert.fail('no call') }, seed: 1 }),
      /needs front matter with both/,
    );
  });

  it('skillopt eval on the shipped trigger set: a description that names the work beats a vague one', async () => {
    const dir = tmpDir();
    const good = path.join(dir, 'good', 'workbook-charts');
    fs.mkdirSync(good, { recursive: true });
    fs.writeFileSync(
      path.join(good, 'SKILL.md'),
      fs
        .readFileSync(path.join(SIM, 'triggers-skill/SKILL.md'), 'utf8')
        .replace(
          'description: Helps with data.',
          'description: Build line, bar and pie charts inside Excel workbooks (xlsx) from their data. Use when the user wants a chart or plot of spreadsheet data.',
        ),
    );
    const summary = await runEvaluation({
      loaded: loadConfig(path.join(SIM, 'triggers.yaml'), { environment: {} }),
      outRoot: path.join(dir, 'eval'),
      configFile: path.join(SIM, 'triggers.yaml'),
      skillFiles: [path.join(SIM, 'triggers-skill'), good],
      split: 'all',
      repeats: 3,
      out: null,
    });
    const [vague, better] = summary.cells.map((c) => c.activation!);
    assert.equal(vague!.recall, 0, 'a vague description is never chosen');
    assert.ok(better!.recall > 0.6 && better!.precision > 0.9, JSON.stringify(better));
    assert.equal(better!.n, 60, 'twenty queries, three samples each');
    const md = fs.readFileSync(path.join(dir, 'eval', 'eval_summary.md'), 'utf8');
    assert.match(md, /### Activation/);
    assert.match(md, /\| workbook-charts \| sim:sim-1 \| 1\.000 \| 0\.\d+ \|/);
  });
});
