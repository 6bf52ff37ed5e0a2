import assert from 'node:assert/strict';
import { it } from 'node:test';
import {
  REDACTED,
  isSecretKeyName,
  redact,
  redactText,
  registerSecret,
  registerSecretsOf,
  scrubSecrets,
} from '../../src/config/redact.ts';

it('recognises secret key names but not counts or variable names', () => {
  for (const k of [
    'api_key',
    'azure_openai_api_key',
    'apiKey',
    'token',
    'access_token',
    'client_secret',
    'password',
    'minimax_api_key',
  ]) {
    assert.ok(isSecretKeyName(k), k);
  }
  for (const k of ['max_tokens', 'max_output_tokens', 'api_key_env', 'keyword_count', 'monkey'])
    assert.ok(!isSecretKeyName(k), k);
});

it('redacts secret keys at any depth and the given paths, leaving the rest', () => {
  const cfg = {
    model: {
      target: { api_key: 'sk-1', api_key_env: 'OPENAI_API_KEY', max_output_tokens: 10, options: { x: 'from-var' } },
    },
    list: [{ password: 'p' }],
  };
  const out = redact(cfg, new Set(['model.target.options.x']));
  assert.equal(out.model.target.api_key, REDACTED);
  assert.equal(out.model.target.api_key_env, 'OPENAI_API_KEY');
  assert.equal(out.model.target.max_output_tokens, 10);
  assert.equal(out.model.target.options.x, REDACTED);
  assert.equal(out.list[0]!.password, REDACTED);
  assert.equal(cfg.model.target.api_key, 'sk-1', 'the input is not changed');
});

it('messages lose key values, key shapes and URL credentials; the words around them stay', () => {
  const cases: [string, string][] = [
    ['Incorrect API key provided: sk-proj-AbCdEf0123456789xyz.', 'Incorrect API key provided: ****.'],
    ['x-api-key sk-ant-api03-AbCdEf0123456789 is invalid', 'x-api-key **** is invalid'],
    ['Authorization: Bearer eyJraWQiOiIxIn0.eyJzdWIiOiJ4In0.sig', 'Authorization: Bearer ****'],
    ['api-key: 0123456789abcdef0123456789abcdef rejected', 'api-key: **** rejected'],
    ['{"api_key": "my-gateway-key-123"}', '{"api_key": "****"}'],
    [
      'token ghp_0123456789abcdefghijABCDEFGHIJ012345 and github_pat_11ABCDEFG0123456789_abcdefghij',
      'token **** and ****',
    ],
    ['GET http://alice:s3cr3t-pass@gw.example.com/v1/chat failed', 'GET http://****@gw.example.com/v1/chat failed'],
    ['https://example.com/v1?key=AIzaSyA-0123456789abcdefghijklmnopqrstu&x=1', 'https://example.com/v1?key=****&x=1'],
    ['HTTP 500: upstream overloaded (request 42)', 'HTTP 500: upstream overloaded (request 42)'],
  ];
  for (const [text, expected] of cases) assert.equal(redactText(text), expected, text);
});

it('a registered key is removed wherever it is written, in whatever form; text merely shaped like a key is kept in content', () => {
  registerSecret('Zx81-odd-Shaped+Key/0');
  assert.equal(scrubSecrets('echo: Zx81-odd-Shaped+Key/0 and Zx81-odd-Shaped%2BKey%2F0'), 'echo: **** and ****');
  assert.equal(redactText('raw Zx81-odd-Shaped+Key/0'), 'raw ****');
  // A skill about HTTP APIs keeps its example.
  const skill = 'Send `Authorization: Bearer <token>` with sk-example-placeholder values.';
  assert.equal(scrubSecrets(skill), skill);
});

it('a configured key shorter than 8 characters is removed wherever it stands alone, and JSON stays JSON', () => {
  registerSecret('k3y-7');
  registerSecret('4711');
  assert.equal(scrubSecrets('sent k3y-7, "k3y-7" and Bearer k3y-7'), 'sent ****, "****" and Bearer ****');
  assert.equal(
    scrubSecrets('ak3y-7 and k3y-77 stay'),
    'ak3y-7 and k3y-77 stay',
    'inside a longer word it is not the key',
  );
  assert.equal(
    scrubSecrets('{"pin": "4711", "count": 4711, "list": [4711]}'),
    '{"pin": "****", "count": 4711, "list": [4711]}',
  );
  assert.equal(scrubSecrets('the key 4711 was refused'), 'the key **** was refused');
  // A variable's value is only a guess at a secret: a short one is not taken.
  registerSecretsOf({ OTHER_API_KEY: 'abc12' });
  assert.equal(scrubSecrets('abc12'), 'abc12');
});

it('a config loses URL credentials and registered values too', () => {
  registerSecret('registered-value-0001');
  const out = redact({
    model: {
      target: {
        base_url: 'http://u:pw-0123@127.0.0.1:8000/v1',
        options: { extra_body: { note: 'registered-value-0001' } },
      },
    },
  });
  assert.equal(out.model.target.base_url, 'http://****@127.0.0.1:8000/v1');
  assert.equal(out.model.target.options.extra_body.note, '****');
});

it('variables named like secrets are taken only when their value is shaped like a key, so paths in the run files keep their directories', () => {
  registerSecretsOf({
    TOKEN_CACHE: '/home/someone/.cache/tokens',
    MAX_TOKENS: '4096',
    SECRET_FLAG: 'true',
    MY_SERVICE_API_KEY: 'Q9-shaped-like-a-key',
  });
  assert.equal(scrubSecrets('/home/someone/.cache/tokens/run 4096 true'), '/home/someone/.cache/tokens/run 4096 true');
  assert.equal(scrubSecrets('key Q9-shaped-like-a-key'), 'key ****');
});
