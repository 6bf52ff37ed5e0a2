import assert from 'node:assert/strict';
import { it } from 'node:test';
import { REDACTED, isSecretKeyName, redact } from '../../src/config/redact.ts';

it('recognises secret key names but not counts or variable names', () => {
  for (const k of ['api_key', 'azure_openai_api_key', 'apiKey', 'token', 'access_token', 'client_secret', 'password', 'minimax_api_key']) {
    assert.ok(isSecretKeyName(k), k);
  }
  for (const k of ['max_tokens', 'max_output_tokens', 'api_key_env', 'keyword_count', 'monkey']) assert.ok(!isSecretKeyName(k), k);
});

it('redacts secret keys at any depth and the given paths, leaving the rest', () => {
  const cfg = { model: { target: { api_key: 'sk-1', api_key_env: 'OPENAI_API_KEY', max_output_tokens: 10, options: { x: 'from-var' } } }, list: [{ password: 'p' }] };
  const out = redact(cfg, new Set(['model.target.options.x']));
  assert.equal(out.model.target.api_key, REDACTED);
  assert.equal(out.model.target.api_key_env, 'OPENAI_API_KEY');
  assert.equal(out.model.target.max_output_tokens, 10);
  assert.equal(out.model.target.options.x, REDACTED);
  assert.equal(out.list[0]!.password, REDACTED);
  assert.equal(cfg.model.target.api_key, 'sk-1', 'the input is not changed');
});
