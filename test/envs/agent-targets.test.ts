/**
 * Every built-in env with an agent target (a model that runs its own tools in a workspace): the
 * request carries the skill apart (the agent installs it where it reads skills) and the task's
 * documents as workspace files; the agent's trace comes back in the trajectory. OfficeQA runs no
 * tool loop of its own for an agent: its bulletins go into the workspace.
 */
import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { createEnv } from '../../src/envs/build.ts';
import { loadConfig } from '../../src/config/load.ts';
import { materialize } from '../../src/envs/materialize.ts';
import type { Env, Item } from '../../src/envs/types.ts';
import type { AgentTrace } from '../../src/model/harness/trace.ts';
import { ROOT } from '../helpers/cli.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';
import { lastUserText, ScriptedAgent, ScriptedModel } from './scripted.ts';

const FIX = path.join(ROOT, 'test/fixtures');
const SKILL = 'SKILL-TEXT-41c: check the units before answering.';
const trace = (n: number): AgentTrace => ({
  agent: 'codex',
  steps: [{ tool: 'shell', input: `cat task.md #${n}`, ok: true }],
  files: ['task.md'],
  errors: [],
  durationMs: 10,
  exitCode: 0,
});

async function benchEnv(bench: string, extra = ''): Promise<{ env: Env; items: Item[] }> {
  const dir = tmpDir();
  const raw = path.join(FIX, bench, bench === 'officeqa' ? 'raw/officeqa_full.csv' : 'raw');
  await materialize({
    benchmark: bench,
    raw,
    manifest: path.join(FIX, bench, 'manifest'),
    out: path.join(dir, 'splits'),
  });
  writeFiles(dir, {
    'c.yaml': `_base_: ${path.join(ROOT, 'configs', bench, 'default.yaml')}\nmodel:\n  backend: sim\nenv:\n  split_dir: ${path.join(dir, 'splits')}\n${extra}`,
  });
  const env = createEnv(loadConfig(path.join(dir, 'c.yaml'), { environment: {} }), path.join(dir, 'run'));
  const s = await env.load();
  return { env, items: [...s.train, ...s.val, ...s.test] };
}

async function tasksEnv(): Promise<{ env: Env; items: Item[] }> {
  const dir = tmpDir();
  writeFiles(dir, {
    'd.jsonl':
      '{"id":"a","question":"2+2?","answer":"4"}\n{"id":"b","question":"3+3?","answer":"6"}\n{"id":"c","question":"1+1?","answer":"2"}\n',
    'c.yaml':
      'model:\n  backend: sim\nenv:\n  name: tasks\n  data_path: d.jsonl\n  split_ratio: "1:1:1"\n  fields:\n    input: question\n',
  });
  const env = createEnv(loadConfig(path.join(dir, 'c.yaml'), { environment: {}, cwd: dir }), path.join(dir, 'run'));
  const s = await env.load();
  return { env, items: [...s.train, ...s.val, ...s.test] };
}

describe('built-in envs with an agent target', () => {
  const cases: [string, () => Promise<{ env: Env; items: Item[] }>][] = [
    ['searchqa', () => benchEnv('searchqa')],
    ['livemathematicianbench', () => benchEnv('livemathematicianbench')],
    ['docvqa', () => benchEnv('docvqa')],
    ['tasks', () => tasksEnv()],
    [
      'sim',
      async () => {
        const dir = tmpDir();
        writeFiles(dir, {
          'c.yaml': 'model:\n  backend: sim\nenv:\n  name: sim\n  n_train: 2\n  n_val: 1\n  n_test: 1\n',
        });
        const env = createEnv(loadConfig(path.join(dir, 'c.yaml'), { environment: {} }));
        const s = await env.load();
        return { env, items: [...s.train, ...s.val, ...s.test] };
      },
    ],
  ];
  for (const [name, make] of cases) {
    it(`${name}: the skill goes apart (and in the system prompt, where the agent swaps it for where to read it); the trace is kept`, async () => {
      const { env, items } = await make();
      const agent = new ScriptedAgent('codex_exec:test', (_req, n) => ({
        text: '<answer>x</answer>',
        trace: trace(n),
      }));
      const t = await env.rollout(items[0]!, SKILL, { target: agent, seed: 0 });
      const req = agent.requests[0]!;
      assert.equal(req.skill, SKILL);
      assert.ok(req.system!.includes(SKILL), 'the system prompt holds the skill as it appears there');
      assert.equal(req.tools, undefined);
      assert.deepEqual(
        t.traces,
        agent.requests.map((_, n) => trace(n)),
      );
      if (name === 'docvqa') {
        // The page image goes as an image part: the agent's harness writes it into the workspace as a file.
        const content = req.messages[0]!.content as { type: string; image?: string }[];
        assert.ok(content.some((p) => p.type === 'image' && fs.existsSync(p.image!)));
      }
      // A chat model gets the same request (it ignores `skill`) and leaves no trace.
      const chat = new ScriptedModel('openai_chat:test', () => '<answer>x</answer>');
      const plain = await env.rollout(items[0]!, SKILL, { target: chat, seed: 0 });
      assert.equal(chat.requests[0]!.workspaceFiles, undefined);
      assert.equal(plain.traces, undefined);
    });
  }

  it("officeqa: no tool loop of ours; the item's bulletins are workspace files under documents/, and the answer is scored", async () => {
    const { env, items } = await benchEnv('officeqa', `  data_dirs: [${path.join(FIX, 'officeqa/docs')}]\n`);
    const item = items.find((i) => i.id === 'oq-001')!;
    const agent = new ScriptedAgent('claude_code_exec:test', (req) => {
      const file = req.workspaceFiles!.find((f) => f.path.startsWith('documents/'))!;
      const value = /1943\s+([\d,]+)/.exec(fs.readFileSync(file.source!, 'utf8'))?.[1];
      return { text: `<answer>${value}</answer>`, trace: trace(0) };
    });
    const t = await env.rollout(item, SKILL, { target: agent, seed: 0 });
    assert.equal(agent.requests.length, 1);
    const req = agent.requests[0]!;
    assert.equal(req.tools, undefined);
    assert.deepEqual(req.workspaceFiles, [
      {
        path: 'documents/treasury_bulletin_1944_01.txt',
        source: fs.realpathSync(path.join(FIX, 'officeqa/docs/treasury_bulletin_1944_01.txt')),
      },
    ]);
    assert.match(req.system!, /in your working folder under `documents\/`[\s\S]*## Skill\n\nSKILL-TEXT-41c/);
    assert.doesNotMatch(req.system!, /glob, read and grep/);
    const user = lastUserText(req);
    assert.match(user, /## Question\nWhat were total budget receipts/);
    assert.doesNotMatch(user, /Candidate Files/, "the agent's prompt lists its files itself");
    assert.deepEqual([t.hard, t.soft], [1, 1]);
    assert.deepEqual(t.traces, [trace(0)]);
    // A chat target still gets the tool loop and no files.
    const chat = new ScriptedModel('t', () => '<answer>0</answer>');
    await env.rollout(item, SKILL, { target: chat, seed: 0 });
    assert.deepEqual(
      chat.requests[0]!.tools!.map((x) => x.name),
      ['glob', 'read', 'grep'],
    );
    assert.equal(chat.requests[0]!.workspaceFiles, undefined);
  });
});
