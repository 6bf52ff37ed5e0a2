/** Each kind of secret a developer pastes into a chat, with the value that must not survive. */
export const PLANTED: { kind: string; text: string; secret: string }[] = [
  {
    kind: 'OpenAI project key',
    text: 'my key is sk-proj-Q7hM2xVb9Lk3Rt8Ws1Np4Zc6Yd0Fg5Hj',
    secret: 'Q7hM2xVb9Lk3Rt8Ws1Np4Zc6Yd0Fg5Hj',
  },
  {
    kind: 'Anthropic key',
    text: 'ANTHROPIC_KEY sk-ant-api03-Xy8Wv7Ut6Sr5Qp4On3Ml2Kj1Ih0Gf',
    secret: 'Xy8Wv7Ut6Sr5Qp4On3Ml2Kj1Ih0Gf',
  },
  {
    kind: 'GitHub token',
    text: 'push with ghp_R4nd0mT0k3nV4lu3F0rT3st1ng12345678',
    secret: 'ghp_R4nd0mT0k3nV4lu3F0rT3st1ng12345678',
  },
  {
    kind: 'Stripe live key',
    text: 'charge with sk_live_51HxQ2aBcDeFgHiJkLmNoPqRs in prod',
    secret: '51HxQ2aBcDeFgHiJkLmNoPqRs',
  },
  { kind: 'GitLab token', text: 'CI uses glpat-Xy7Zq8Wv9Ut0Sr1Qp2On3M', secret: 'glpat-Xy7Zq8Wv9Ut0Sr1Qp2On3M' },
  {
    kind: 'Google API key',
    text: 'maps key AIzaSyD3mOk3yF0rT3st1ngPurp0s3sOnly12',
    secret: 'AIzaSyD3mOk3yF0rT3st1ngPurp0s3sOnly12',
  },
  {
    kind: 'AWS access key id and secret',
    text: 'aws_access_key_id = AKIAQ3EXAMPLE7TESTKY\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY',
    secret: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY',
  },
  { kind: 'AWS access key id', text: 'id AKIAQ3EXAMPLE7TESTKY', secret: 'AKIAQ3EXAMPLE7TESTKY' },
  {
    kind: 'Slack token',
    text: 'bot token xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOp',
    secret: 'xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOp',
  },
  {
    kind: 'bearer token',
    text: 'curl -H "Authorization: Bearer eyq9Zt7Vb2Lm4Kx8Pw1Rn5Sd3" https://api.example.com',
    secret: 'eyq9Zt7Vb2Lm4Kx8Pw1Rn5Sd3',
  },
  {
    kind: 'JWT',
    text: 'token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJkZXYifQ.c2lnbmF0dXJlLXZhbHVlLTEyMzQ',
    secret: 'eyJzdWIiOiJkZXYifQ',
  },
  {
    kind: 'private key',
    text: 'key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAz9Xv3PrIvAtEkEyBoDy\nLinE2oFtHeKeY\n-----END RSA PRIVATE KEY-----\nthanks',
    secret: 'MIIEowIBAAKCAQEAz9Xv3PrIvAtEkEyBoDy',
  },
  {
    kind: '.env assignment',
    text: 'my .env:\nDB_PASSWORD=hunter2\nexport STRIPE_SECRET="rk_fake_value_9"\nSESSION_TOKEN=plainvalue',
    secret: 'hunter2',
  },
  { kind: '.env quoted secret', text: 'export STRIPE_SECRET="rk_fake_value_9"', secret: 'rk_fake_value_9' },
  { kind: '.env token', text: 'SESSION_TOKEN=plainvalue', secret: 'plainvalue' },
  {
    kind: 'JSON secret',
    text: '{"client_secret": "c1i3nt-s3cr3t", "api_key": "k3y-v4lu3-0001"}',
    secret: 'c1i3nt-s3cr3t',
  },
  { kind: 'YAML password', text: 'db:\n  password: S3cure!Pass', secret: 'S3cure!Pass' },
  {
    kind: 'URL with credentials',
    text: 'DATABASE_URL is postgres://admin:p4ssw0rd@db.internal:5432/app',
    secret: 'p4ssw0rd',
  },
  {
    kind: 'token in a URL user',
    text: 'git clone https://x-token:tok3nV4lue@github.com/dev/acme',
    secret: 'tok3nV4lue',
  },
  {
    kind: 'connection string password',
    text: 'Server=db;User Id=sa;Pwd=Sup3r!Secret;Database=app',
    secret: 'Sup3r!Secret',
  },
  { kind: 'password in prose', text: 'my password is hunter2!', secret: 'hunter2!' },
  // Last: a key block cut off before its end line runs to the end of the text.
  {
    kind: 'OpenSSH private key cut off',
    text: '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAA',
    secret: 'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAA',
  },
];
