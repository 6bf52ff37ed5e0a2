/**
 * A chat target reading a skill package's files through the `read_skill_file` tool, against the
 * fake OpenAI (Chat Completions) and Anthropic (Messages) servers in their wire formats: the
 * system prompt lists the files, the model reads a reference, a binary and a missing file get
 * errors, the rounds are bounded, each round is a call of its own in the ledger, the trace names
 * the files read; `auto` picks the tool for a large package only; `inline` is as before.
 */
import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { packageUsage } from '../../src/engine/stages/package-usage.ts';
import { MAX_READ_ROUNDS } from '../../src/model/package-file-tool.ts';
import { fileMode, packageTarget } from '../../src/model/package-target.ts';
import { buildRoleModels } from '../../src/model/stack.ts';
import type { ChatRequest } from '../../src/model/types.ts';
import type { PackageFile, SkillPackage } from '../../src/skill/package/package.ts';
import { type Recorded, startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { configWith } from '../helpers/model-config.ts';

const SKILL = 'Convert units. For weights, read references/units.md first.';
const PKG: SkillPackage = {
  skill: SKILL,
  files: new Map<string, PackageFile>([
    ['references/units.md', { kind: 'text', text: 'UNITS-7c1d: weights are in kg.\n', mode: 0o644 }],
    ['assets/logo.png', { kind: 'binary', bytes: Buffer.from([0x89, 0x50, 0, 1]), mode: 0o644 }],
  ]),
};
const REQUEST: ChatRequest = {
  purpose: 'rollout',
  system: `Answer.\n\n## Skill\n\n${SKILL}\n\nPut the answer in <answer></answer>.`,
  skill: SKILL,
  messages: [{ role: 'user', content: 'How heavy is the crate?' }],
};

const KEYS = { OPENAI_API_KEY: 'sk-test', ANTHROPIC_API_KEY: 'sk-ant-test' };

/** The tool results a request carries, in the wire's shape. */
function toolResults(r: Recorded): string[] {
  if (r.wire === 'anthropic')
    return (r.body.messages ?? []).flatMap((m: any) =>
      Array.isArray(m.content)
        ? m.content
            .filter((p: any) => p.type === 'tool_result')
            .map((p: any) => (typeof p.content === 'string' ? p.content : JSON.stringify(p.content)))
        : [],
    );
  return (r.body.messages ?? []).filter((m: any) => m.role === 'tool').map((m: any) => String(m.content));
}
const toolNames = (r: Recorded): string[] => (r.body.tools ?? []).map((t: any) => t.name ?? t.function?.name);
const systemOf = (r: Recorded): string =>
  r.wire === 'anthropic'
    ? Array.isArray(r.body.system)
      ? r.body.system.map((s: any) => s.text).join('')
      : String(r.body.system ?? '')
    : String(r.body.messages?.find((m: any) => m.role === 'system')?.content ?? '');

describe('a chat target reads package files through a tool', () => {
  let fake: FakeProvider;
  // Reads three paths, then answers with what the reads gave; `greedy` keeps reading forever.
  let greedy = false;
  before(async () => {
    fake = await startFakeProvider({
      respond: (r) => {
        if (!toolNames(r).includes('read_skill_file'))
          return { text: `<answer>${toolResults(r).join(' | ') || 'inline'}</answer>` };
        const results = toolResults(r);
        if (greedy || results.length === 0)
          return {
            toolCalls: ['references/units.md', 'assets/logo.png', '../etc/passwd'].map((path, i) => ({
              id: `c${results.length + i}`,
              name: 'read_skill_file',
              arguments: { path },
            })),
          };
        return { text: `<answer>${results.join(' | ')}</answer>` };
      },
    });
  });
  after(() => fake.close());

  const target = async (backend: 'openai_chat' | 'anthropic', skillFiles: string) => {
    const loaded = configWith(
      {
        model: {
          target: {
            backend,
            model: backend === 'anthropic' ? 'claude-sonnet-4-5' : 'gpt-4o',
            base_url: backend === 'anthropic' ? fake.url : `${fake.url}/v1`,
            skill_files: skillFiles,
            ...(backend === 'openai_chat' ? { options: { provider: 'openai' } } : {}),
          },
        },
      },
      KEYS,
    );
    // No response cache: each test's calls reach the server.
    loaded.config.cache.mode = 'off';
    return buildRoleModels(loaded.config, { environment: KEYS });
  };

  for (const backend of ['openai_chat', 'anthropic'] as const) {
    it(`${backend}: lists the files, answers a read with the text and refuses a binary and an escape`, async () => {
      greedy = false;
      const from = fake.requests.length;
      const models = await target(backend, 'tool');
      const res = await packageTarget(models.target, PKG).complete(REQUEST);
      const sent = fake.requests.slice(from);
      assert.equal(sent.length, 2, 'one round of reads, then the answer');
      assert.match(systemOf(sent[0]!), /- references\/units\.md \(text, 31 bytes\)/);
      assert.match(systemOf(sent[0]!), /- assets\/logo\.png \(binary, 4 bytes: cannot be read as text\)/);
      assert.doesNotMatch(systemOf(sent[0]!), /UNITS-7c1d/, 'the text is not in the prompt');
      assert.match(res.text, /UNITS-7c1d/);
      assert.match(res.text, /'assets\/logo\.png' is a binary file/);
      assert.match(res.text, /no file '\.\.\/etc\/passwd'/);
      assert.deepEqual(res.trace?.package, { read: ['references/units.md'], ran: [] });
      assert.equal(models.ledger.byPurpose().rollout?.calls, 2, 'each round is a call in the ledger');
      assert.deepEqual(packageUsage([{ id: 'x', hard: 1, soft: 1, traces: [res.trace!] }]).files, {
        'references/units.md': { read: 1, ran: 0 },
      });
      models.close();
    });
  }

  it(`asks for the answer after ${MAX_READ_ROUNDS} rounds of reads and answers no more`, async () => {
    greedy = true;
    const from = fake.requests.length;
    const models = await target('openai_chat', 'tool');
    const res = await packageTarget(models.target, PKG).complete(REQUEST);
    const sent = fake.requests.slice(from);
    assert.equal(sent.length, MAX_READ_ROUNDS + 1, 'the reads asked for after the limit are left unanswered');
    assert.match(JSON.stringify(sent.at(-1)!.body.messages), /That was the last file you can read/);
    assert.equal(res.toolCalls, undefined);
    assert.match(res.trace!.errors[0]!, /after its 8 rounds of reads/);
    models.close();
    greedy = false;
  });

  it('inline sends the files in the system prompt, as before; auto picks the tool for a large package only', async () => {
    const from = fake.requests.length;
    const models = await target('openai_chat', 'inline');
    await packageTarget(models.target, PKG).complete(REQUEST);
    const sent = fake.requests.slice(from);
    assert.equal(sent.length, 1);
    assert.match(systemOf(sent[0]!), /UNITS-7c1d/);
    assert.deepEqual(toolNames(sent[0]!), []);
    models.close();
    // A request with tools of its own keeps the files inline, even with the tool setting.
    const tooled = await target('openai_chat', 'tool');
    const before = fake.requests.length;
    await packageTarget(tooled.target, PKG).complete({
      ...REQUEST,
      tools: [{ name: 'grep', description: 'search', parameters: { type: 'object', properties: {} } }],
    });
    const own = fake.requests.slice(before);
    assert.equal(own.length, 1);
    assert.deepEqual(toolNames(own[0]!), ['grep']);
    assert.match(systemOf(own[0]!), /UNITS-7c1d/);
    tooled.close();
    const auto = await target('openai_chat', 'auto');
    assert.equal(fileMode(auto.target, PKG.files!), 'inline');
    const big = new Map(PKG.files!);
    big.set('references/long.md', { kind: 'text', text: 'word '.repeat(5000), mode: 0o644 });
    assert.equal(fileMode(auto.target, big), 'tool');
    auto.close();
  });
});
