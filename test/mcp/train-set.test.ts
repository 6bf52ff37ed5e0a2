/**
 * The `set` of the MCP `train` tool, as an agent could send it: a path outside the project
 * (directly or through a link) and a key off the allow-list are refused before anything runs; a
 * change of endpoint and key variable is asked of the user, and nothing reaches that endpoint
 * unless the user accepts (then the key of the variable named is what it gets).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { startFakeProvider } from '../helpers/fake-provider.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';
import { connect, connectAsking, setup, textOf } from './mcp-client.ts';

const SECRET = 'sk-the-value-of-any-var-0123456789';

test('paths in set stay inside the project, and keys off the allow-list are refused', async () => {
  const s = setup();
  const client = await connect(s);
  const outside = tmpDir();
  writeFiles(outside, { 'notes.md': 'not a skill\n' });
  fs.symlinkSync(outside, path.join(s.project, 'elsewhere'));
  const refused: [string, RegExp][] = [
    [`env.skill_init=${path.join(outside, 'notes.md')}`, /env\.skill_init must lie inside the project/],
    ['skill_init=elsewhere/notes.md', /skill_init must lie inside the project/],
    ['env.data_path=../../etc', /env\.data_path must lie inside the project/],
    ['cache.path=/tmp/responses.sqlite', /cache\.path must lie inside the project/],
    ['model.target.options.path=/bin/sh', /model\.target\.options\.path cannot be set through the train tool/],
    ['env.scorer={type: custom, module: x.mjs}', /env\.scorer cannot be set through the train tool/],
    ['model.azure_openai_endpoint=http://127.0.0.1:1', /cannot be set through the train tool/],
  ];
  for (const [item, expected] of refused) {
    const r = await client.callTool({
      name: 'train',
      arguments: { config: 'configs/sim/default.yaml', out: 'runs/refused', set: [item] },
    });
    assert.equal(r.isError, true, item);
    assert.match(textOf(r), expected);
  }
  assert.equal(fs.existsSync(path.join(s.project, 'runs', 'refused')), false, 'no run was started');
});

test('a changed endpoint and key variable are asked of the user; declined or unasked, nothing is sent', async (t) => {
  const fake = await startFakeProvider();
  after(() => fake.close());
  const s = setup();
  s.env.ANY_VAR = SECRET;
  const set = [
    'model.target.backend=openai_compatible',
    'model.target.model=probe',
    `model.target.base_url=${fake.url}/v1`,
    'model.target.api_key_env=ANY_VAR',
    'train.num_epochs=1',
    'env.n_train=4',
    'env.n_val=2',
    'env.n_test=2',
  ];
  const args = { config: 'configs/sim/default.yaml', out: 'runs/elsewhere', set };

  await t.test('without elicitation it is refused', async () => {
    const client = await connect(s);
    const r = await client.callTool({ name: 'train', arguments: args });
    assert.equal(r.isError, true);
    assert.match(textOf(r), /cannot ask you to confirm/);
    assert.equal(fake.requests.length, 0);
  });

  const { client, user, asked } = await connectAsking(s);
  await t.test('declined, it is not done', async () => {
    const r = await client.callTool({ name: 'train', arguments: args });
    assert.equal(r.isError, true);
    assert.match(textOf(r), /you declined/);
    assert.equal(fake.requests.length, 0);
    assert.match(asked[0]!, /model\.target\.base_url=http:\/\/127\.0\.0\.1:\d+\/v1/);
    assert.match(asked[0]!, /model\.target\.api_key_env=ANY_VAR/);
    assert.ok(!asked[0]!.includes(SECRET), 'the question names the variable, never its value');
    assert.equal(fs.existsSync(path.join(s.project, 'runs', 'elsewhere')), false);
  });

  await t.test('accepted, the run goes there with the key of the variable named', async () => {
    user.answer = 'accept';
    const r = await client.callTool({ name: 'train', arguments: args }, undefined, { timeout: 120_000 });
    assert.ok(fake.requests.length > 0, textOf(r));
    assert.equal(fake.requests[0]!.headers.authorization, `Bearer ${SECRET}`);
  });
});
