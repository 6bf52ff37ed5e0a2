/**
 * Secret redaction for transcript text: what a developer pasted into a chat with an agent (keys,
 * tokens, `.env` files, connection strings, private keys) is replaced before any digest is
 * written or shown to a model. Unlike the redaction of run files (`config/redact.ts`), key
 * shapes are removed wherever they appear: transcripts are the user's private text, not skills
 * or task data. Each replacement keeps the label around the value (`OPENAI_API_KEY=****`,
 * `Authorization: Bearer ****`, `postgres://****@db:5432`), so the sentence still reads.
 */
import { REDACTED } from '../config/redact.ts';

/** PEM and OpenSSH private keys, PGP private key blocks; an unterminated block runs to the end of the text. */
const PRIVATE_KEY = /-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----[\s\S]*?(?:-----END \1-----|$)/g;

/** Credentials in a URL: `scheme://user:password@host`, `scheme://token@host`. */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@'"<>]+@(?=[a-z0-9[])/gi;

/** Tokens recognisable by their shape alone (the providers' documented prefixes). */
const KEY_SHAPES: RegExp[] = [
  // OpenAI (sk-…, sk-proj-…, sk-svcacct-…), Anthropic (sk-ant-…), DeepSeek and other sk- keys.
  /\bsk-[A-Za-z0-9_-]{16,}/g,
  // Stripe live and test keys.
  /\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}/g,
  // GitHub (classic, fine-grained, OAuth, app), GitLab, Hugging Face, npm, Groq, xAI, Replicate.
  /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,}|hf_[A-Za-z0-9]{20,}|npm_[A-Za-z0-9]{30,}|gsk_[A-Za-z0-9]{20,}|xai-[A-Za-z0-9]{20,}|r8_[A-Za-z0-9]{20,})/g,
  // Google API keys, AWS access key ids, Slack tokens.
  /\b(?:AIza[0-9A-Za-z_-]{30,}|(?:AKIA|ASIA)[0-9A-Z]{16}|xox[abprs]-[A-Za-z0-9-]{10,})/g,
  // JSON Web Tokens (Entra and other bearer tokens among them).
  /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+/g,
];

/** `Authorization: Bearer …` / `Basic …`, and a bare `Bearer …` token. */
const AUTH_SCHEME = /\b(Bearer|Basic|Token)(\s+)[A-Za-z0-9._~+/-]{8,}=*/g;

/**
 * `NAME=value` (a `.env` line, a shell `export`, a connection-string field). The value may be
 * quoted; an unterminated quote runs to the end of the line.
 */
const ASSIGNMENT = /(^|[\s;,&?({'"`])([A-Za-z_][A-Za-z0-9_.-]*)(\s*=\s*)("[^"\n]*"?|'[^'\n]*'?|[^\s;,&'"`)]+)/gm;

/** `name: value` (YAML, JSON, HTTP headers), the name possibly quoted. */
const COLON_PAIR = /(^|[\s{,;'"`])(["']?)([A-Za-z_][A-Za-z0-9_.-]*)(\2\s*:[ \t]*)("[^"\n]+"|'[^'\n]+'|[^\s,;}'"`]+)/gm;

/** "my password is hunter2!", "token abc123def": a secret's name followed by a token-like word. */
const PROSE = /\b(api[ _-]?key|token|secret|password|passwd|passphrase)(\s+(?:is\s+|was\s+|:\s*)?)((?=[^\s,;'"`]*[0-9_+/=!@#$%^&*-])[^\s,;'"`]{6,})/gi;

/** Last words that make a name a secret's name (`DB_PASSWORD`, `apiKey`, `x-api-key`, `AccountKey`). */
const SECRET_LAST_WORDS = new Set(['key', 'apikey', 'accountkey', 'secret', 'token', 'password', 'passwd', 'pass', 'pwd', 'passphrase', 'credential', 'credentials', 'auth', 'sig', 'sas']);
/** Words that make a name a secret's name wherever they stand (`client_secret_value`, `password_hash`). */
const SECRET_ANY_WORDS = new Set(['secret', 'password', 'passwd', 'credential', 'credentials', 'apikey']);

function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/** Whether `name` names a secret; `value` tells a shell's `PWD=/home/…` from an ODBC `PWD=…`. */
export function isSecretName(name: string, value = ''): boolean {
  const words = nameWords(name);
  const last = words.at(-1);
  if (!last) return false;
  if (words.length === 1 && last === 'pwd' && /^["']?[/~]/.test(value)) return false;
  // A bare `key` is as often a public key, a map key or a sort key as a secret.
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
  let out = text.replace(PRIVATE_KEY, (_m, kind: string) => `-----BEGIN ${kind}-----${REDACTED}-----END ${kind}-----`);
  out = out.replace(URL_CREDENTIALS, `$1${REDACTED}@`);
  for (const re of KEY_SHAPES) out = out.replace(re, REDACTED);
  out = out.replace(AUTH_SCHEME, `$1$2${REDACTED}`);
  out = out.replace(ASSIGNMENT, (m, lead: string, name: string, sep: string, value: string) =>
    value.includes(REDACTED) || !isSecretName(name, value) ? m : `${lead}${name}${sep}${keepQuotes(value)}`,
  );
  out = out.replace(COLON_PAIR, (m, lead: string, quote: string, name: string, sep: string, value: string) =>
    value.includes(REDACTED) || !isSecretName(name, value) || !tokenLike(value) ? m : `${lead}${quote}${name}${sep}${keepQuotes(value)}`,
  );
  return out.replace(PROSE, (m, name: string, sep: string, value: string) => (value.includes(REDACTED) ? m : `${name}${sep}${REDACTED}`));
}

/** A deep copy of `value` with every string passed through `redactSecrets`. */
export function redactSecretsDeep<T>(value: T): T {
  if (typeof value === 'string') return redactSecrets(value) as T;
  if (Array.isArray(value)) return value.map((v) => redactSecretsDeep(v)) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactSecretsDeep(v);
    return out as T;
  }
  return value;
}
