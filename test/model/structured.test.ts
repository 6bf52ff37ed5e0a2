import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { z } from 'zod';
import { buildRoleModels } from '../../src/model/stack.ts';
import { completeJson, StructuredOutputError } from '../../src/model/structured.ts';
import { fakeProviderFetch, textOfUser, type InProcessFake } from '../helpers/fake-provider.ts';
import { configWith } from '../helpers/model-config.ts';

const Verdict = z.object({ verdict: z.enum(['keep', 'drop']), reasons: z.array(z.string()) });

describe('structured replies', () => {
  let fake: InProcessFake;
  let replies: string[] = [];
  before(async () => {
    fake = fakeProviderFetch({ respond: () => ({ text: replies.shift() ?? '{}' }) });
  });

  async function optimizer(role: Record<string, unknown> = {}) {
    const r = { backend: 'openai_compatible', model: 'm', base_url: `${fake.url}/v1`, max_retries: 0, ...role };
    const { config } = configWith({ model: { target: r, optimizer: r }, cache: { mode: 'off' } });
    return (await buildRoleModels(config, { fetch: fake.fetch, environment: {} })).optimizer;
  }

  it('uses the JSON-schema mode, and asks once more quoting the validation error', async () => {
    replies = ['{"verdict": "maybe", "reasons": []}', '{"verdict": "keep", "reasons": ["clear"]}'];
    const before = fake.requests.length;
    const { value } = await completeJson(await optimizer(), {
      purpose: 'rank',
      messages: [{ role: 'user', content: 'Judge.' }],
      schema: Verdict,
      schemaName: 'verdict',
    });
    assert.deepEqual(value, { verdict: 'keep', reasons: ['clear'] });
    const [first, second] = fake.requests.slice(before);
    assert.equal(first!.body.response_format.json_schema.name, 'verdict');
    assert.deepEqual(first!.body.response_format.json_schema.schema.properties.verdict.enum, ['keep', 'drop']);
    assert.match(textOfUser(second!), /verdict/);
    assert.match(textOfUser(second!), /could not be used/);
    assert.equal(second!.body.messages.at(-2).content, '{"verdict": "maybe", "reasons": []}');
  });

  it('repairs a nearly-JSON reply from a server without the JSON-schema mode', async () => {
    replies = ['Here it is:\n```json\n{"verdict": "drop", "reasons": ["too vague",],}\n```'];
    const { value, response } = await completeJson(await optimizer({ json_schema: false }), {
      purpose: 'rank',
      messages: [{ role: 'user', content: 'Judge.' }],
      schema: Verdict,
    });
    assert.deepEqual(value, { verdict: 'drop', reasons: ['too vague'] });
    assert.deepEqual(response.parsed, value);
    assert.match(fake.requests.at(-1)!.body.messages[0].content, /JSON Schema/);
  });

  it('gives up after the second unusable reply with the problem named', async () => {
    replies = ['no json here', '{"verdict": "keep"}'];
    await assert.rejects(
      completeJson(await optimizer(), {
        purpose: 'rank',
        messages: [{ role: 'user', content: 'Judge.' }],
        schema: Verdict,
      }),
      (e) => e instanceof StructuredOutputError && /reasons/.test(e.message) && e.text === '{"verdict": "keep"}',
    );
  });
});
