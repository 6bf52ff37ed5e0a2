/**
 * Secret redaction for transcript text: what a developer pasted into a chat with an agent. It is
 * the redaction of messages (`redactText`: key shapes, bearer tokens, URL credentials, labelled
 * keys) plus what people paste and providers do not echo: private key blocks, `.env` files and
 * shell exports, `name: value` pairs of YAML and JSON whose name says secret, and "my password is
 * …". Each replacement keeps the label around the value (`OPENAI_API_KEY=****`,
 * `Authorization: Bearer ****`, `postgres://****@db:5432`), so the sentence still reads.
 */
import { mapStrings, REDACTED, redactText } from '../../config/redact.ts';

/** PEM and OpenSSH private keys, PGP private key blocks; an unterminated block runs to the end of the text. */
const PRIVATE_KEY = /-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----[\s\S]*?(?:-----END \1-----|$)/g;

/**
 * `NAME=value` (a `.env` line, a shell `export`, a connection-string field). The value may be
 * quoted; an unterminated quote runs to the end of the line.
 */
const ASSIGNMENT = /(^|[\s;,&?({'"`])([A-Za-z_][A-Za-z0-9_.-]*)(\s*=\s*)("[^"\n]*"?|'[^'\n]*'?|[^\s;,&'"`)]+)/gm;

/** `name: value` (YAML, JSON, HTTP headers), the name possibly quoted. */
const COLON_PAIR = /(^|[\s{,;'"`])(["']?)([A-Za-z_][A-Za-z0-9_.-]*)(\2\s*:[ \t]*)("[^"\n]+"|'[^'\n]+'|[^\s,;}'"`]+)/gm;

/** "my password is hunter2!", "token abc123def": a secret's name followed by a token-like word. */
const PROSE =
  /\b(api[ _-]?key|token|secret|password|passwd|passphrase)(\s+(?:is\s+|was\s+|:\s*)?)((?=[^\s,;'"`]*[0-9_+/=!@#$%^&*-])[^\s,;'"`]{6,})/gi;

/** Last words that make a name a secret's name (`DB_PASSWORD`, `apiKey`, `x-api-key`, `AccountKey`). */
const SECRET_LAST_WORDS = new Set([
  'key',
  'apikey',
  'accountkey',
  'secret',
  'token',
  'password',
  'passwd',
  'pass',
  'pwd',
  'passphrase',
  'credential',
  'credentials',
  'auth',
  'sig',
  'sas',
]);
/** Words that make a name a secret's name wherever they stand (`client_secret_value`, `password_hash`). */
const SECRET_ANY_WORDS = new Set(['secret', 'password', 'passwd', 'credential', 'credentials', 'apikey']);

function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/**
 * Whether `name`, in free text, names a secret. Wider than a config key's test
 * (`isSecretKeyName`): `DB_PASS`, an ODBC `Pwd`, a SAS `sig`; but a shell's `PWD=/home/…` and a
 * bare `key` (a public key, a map key) are not.
 */
export function isSecretName(name: string, value = ''): boolean {
  const words = nameWords(name);
  const last = words.at(-1);
  if (!last) return false;
  if (words.length === 1 && last === 'pwd' && /^["']?[/~]/.test(value)) return false;
  if (words.length === 1 && last === 'key') return false;
  return SECRET_LAST_WORDS.has(last) || words.some((w) => SECRET_ANY_WORDS.has(w));
}

/** Whether a `name: value` value looks like a secret rather than prose: quoted, or six or more characters with a digit or a symbol. */
function tokenLike(value: string): boolean {
  if (/^["'].+["']$/.test(value)) return true;
  return value.length >= 6 && /[0-9_+/=!@#$%^&*.-]/.test(value);
}

function keepQuotes(value: string): string {
  const q = value[0];
  if ((q === '"' || q === "'") && value.length > 1 && value.endsWith(q)) return `${q}${REDACTED}${q}`;
  return REDACTED;
}

/** `text` with every secret it holds replaced by `****`. */
export function redactSecrets(text: string): string {
  if (!text) return text;
  let out = redactText(
    text.replace(PRIVATE_KEY, (_m, kind: string) => `-----BEGIN ${kind}-----${REDACTED}-----END ${kind}-----`),
  );
  out = out.replace(ASSIGNMENT, (m, lead: string, name: string, sep: string, value: string) =>
    value.includes(REDACTED) || !isSecretName(name, value) ? m : `${lead}${name}${sep}${keepQuotes(value)}`,
  );
  out = out.replace(COLON_PAIR, (m, lead: string, quote: string, name: string, sep: string, value: string) =>
    value.includes(REDACTED) || !isSecretName(name, value) || !tokenLike(value)
      ? m
      : `${lead}${quote}${name}${sep}${keepQuotes(value)}`,
  );
  return out.replace(PROSE, (m, name: string, sep: string, value: string) =>
    value.includes(REDACTED) ? m : `${name}${sep}${REDACTED}`,
  );
}

/** A deep copy of `value` with every string passed through `redactSecrets`. */
export function redactSecretsDeep<T>(value: T): T {
  return mapStrings(value, redactSecrets);
}
