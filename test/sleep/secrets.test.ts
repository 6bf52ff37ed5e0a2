import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redactText } from '../../src/config/redact.ts';
import { redactSecrets, redactSecretsDeep } from '../../src/sleep/harvest/secrets.ts';
import { PLANTED } from './planted.ts';

test('every kind of planted secret is replaced, and what labels it stays readable', () => {
  for (const p of PLANTED) {
    const out = redactSecrets(p.text);
    assert.ok(!out.includes(p.secret), `${p.kind}: ${out}`);
    assert.ok(out.includes('****'), `${p.kind}: ${out}`);
  }
  assert.equal(
    redactSecrets('export OPENAI_API_KEY=sk-proj-Q7hM2xVb9Lk3Rt8Ws1Np4Zc6Yd0Fg5Hj'),
    'export OPENAI_API_KEY=****',
  );
  assert.equal(redactSecrets('postgres://admin:p4ssw0rd@db.internal:5432/app'), 'postgres://****@db.internal:5432/app');
  assert.equal(redactSecrets('Authorization: Bearer eyq9Zt7Vb2Lm4Kx8Pw1Rn5Sd3'), 'Authorization: Bearer ****');
  assert.equal(redactSecrets('{"api_key": "k3y-v4lu3-0001"}'), '{"api_key": "****"}');
  assert.equal(
    redactSecrets('-----BEGIN EC PRIVATE KEY-----\nabc\n-----END EC PRIVATE KEY-----'),
    '-----BEGIN EC PRIVATE KEY-----****-----END EC PRIVATE KEY-----',
  );
});

test('prose and ordinary settings are left alone', () => {
  for (const text of [
    'The token expired yesterday, so the login failed.',
    'Remember the password: it must be long.',
    'Set max_tokens=4096 and author=Jane; PWD=/home/dev/acme',
    'The secret sauce is caching.',
    'see https://example.com/docs?page=2 and git@github.com:dev/acme.git',
    'a public key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5 dev@box',
  ])
    assert.equal(redactSecrets(text), text);
});

test('redaction reaches every string of a record, and redacting twice changes nothing', () => {
  const record = { prompts: ['export GITHUB_TOKEN=abc123def'], nested: { url: 'https://u:p4ss@h.example' }, n: 3 };
  const once = redactSecretsDeep(record);
  assert.deepEqual(once, { prompts: ['export GITHUB_TOKEN=****'], nested: { url: 'https://****@h.example' }, n: 3 });
  assert.deepEqual(redactSecretsDeep(once), once);
});

test("the providers' key shapes added for transcripts are removed from messages too", () => {
  for (const key of [
    'sk_live_51HxQ2aBcDeFgHiJkLmNoPqRs',
    'glpat-Xy7Zq8Wv9Ut0Sr1Qp2On3M',
    'npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789',
    'gsk_AbCdEfGhIjKlMnOpQrStUv12',
    'ASIAQ3EXAMPLE7TESTKY',
  ]) {
    assert.equal(redactText(`upstream refused ${key}`), 'upstream refused ****', key);
  }
});
