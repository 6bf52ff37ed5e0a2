/**
 * Secret redaction for everything the run writes or prints.
 *
 * - The values of the keys in use (every role's resolved key, whatever variable it came from, the
 *   secret query values of a base URL, and every variable whose name says it holds a secret) are
 *   registered here once known, and removed from every file we write (`scrubSecrets`, applied by
 *   the file writers and the response cache) and every message. A configured key is removed
 *   whatever its length: one shorter than 8 characters wherever it stands alone (not inside a
 *   longer word or number), so that a short key does not eat into ordinary text.
 * - Messages (errors, warnings, events, the console, the ledger's errors) also lose anything
 *   shaped like a key: `sk-…`, `Bearer …`, `api-key: …`, GitHub and cloud tokens, JWTs, and the
 *   credentials of a URL (`http://user:secret@host`) and its secret query values (`?key=`,
 *   `?sig=`, `?X-Amz-Signature=`, …) (`redactText`).
 * - A config loses the values of keys whose name holds key, token, secret or password, and URL
 *   credentials and secret query values (`redact`). `redactUrls` does the URL part alone, for
 *   records written by earlier versions that are served again. Names that end in `_env` hold a variable's name, not its value, and
 *   counts such as `max_tokens` are not secrets.
 *
 * Key shapes are not removed from model replies, skills or task data, where they may be
 * ordinary text (`Authorization: Bearer <token>` in a skill about APIs); key values are.
 */
export const REDACTED = '****';
const SECRET_WORDS = new Set(['key', 'apikey', 'token', 'secret', 'password', 'passwd', 'credential', 'credentials']);
/** Shorter values are matched only where they stand alone; a guessed secret (a variable's value) is not taken. */
const MIN_SECRET_CHARS = 8;

export function isSecretKeyName(name: string): boolean {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  if (words.at(-1) === 'env') return false;
  return words.some((w) => SECRET_WORDS.has(w));
}

export function isSecretVariable(name: string): boolean {
  return /_API_KEY$/i.test(name) || isSecretKeyName(name);
}

/** The secret values in use in this process, longest first (so that a value containing another goes whole). */
const inUse: string[] = [];
/** Configured keys shorter than `MIN_SECRET_CHARS`, as patterns that match them standing alone. */
const shortKeys = new Map<string, RegExp>();

const escapeRegExp = (v: string) => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A short key standing alone: not inside a longer word or number. A key of digits alone is left
 * where it is a bare JSON number (the writers scrub JSON text, which must stay JSON).
 */
function standalone(v: string): RegExp {
  const body = `(?<![A-Za-z0-9_])${escapeRegExp(v)}(?![A-Za-z0-9_])`;
  return new RegExp(/^\d+$/.test(v) ? `(?<![:\\[,]\\s*)${body}|${body}(?!\\s*[,}\\]])` : body, 'g');
}

/**
 * Registers a secret value in use (a key, a token, a URL's password or secret query value): from
 * now on it is removed from whatever is written, whatever its length.
 */
export function registerSecret(value: string | undefined): void {
  const v = value?.trim();
  if (!v) return;
  let added = false;
  for (const f of new Set([v, encodeURIComponent(v)])) {
    if (f.length < MIN_SECRET_CHARS) {
      if (!shortKeys.has(f)) shortKeys.set(f, standalone(f));
    } else if (!inUse.includes(f)) {
      inUse.push(f);
      added = true;
    }
  }
  if (added) inUse.sort((a, b) => b.length - a.length);
}

/**
 * A variable named like a secret may hold something else (`TOKEN_CACHE=/home/me/.cache`, a
 * count): only values shaped like a key are taken, lest paths written in the run's files lose
 * their directory.
 */
function keyShaped(value: string): boolean {
  return (
    !/\s/.test(value) &&
    !/^[/~.]|^[A-Za-z]:[\\/]|:\/\//.test(value) &&
    !/^\d+$/.test(value) &&
    !/^(true|false)$/i.test(value)
  );
}

/** Registers the values of the variables of `environment` whose names say they hold secrets. */
export function registerSecretsOf(environment: Record<string, string | undefined>): void {
  for (const [name, value] of Object.entries(environment)) {
    const v = value?.trim();
    if (v && v.length >= MIN_SECRET_CHARS && isSecretVariable(name) && keyShaped(v)) registerSecret(v);
  }
}

/** `text` without the registered secret values. */
export function scrubSecrets(text: string): string {
  let out = text;
  for (const v of inUse) if (out.includes(v)) out = out.split(v).join(REDACTED);
  for (const [v, re] of shortKeys) if (out.includes(v)) out = out.replace(re, REDACTED);
  return out;
}

/** The credentials part of a URL (`user:password@`, `token@`). */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@'"<>]+@/gi;
/** A query parameter, `?name=value` or `&name=value`. */
const QUERY_PARAM = /([?&])([^=&\s"'#<>?]+)=([^&\s"'#<>]*)/g;
/** Words of a query parameter's name that say its value is a secret. */
const SECRET_PARAM_WORDS = new Set([
  'key',
  'apikey',
  'accesskey',
  'sig',
  'signature',
  'auth',
  'authorization',
  'secret',
  'token',
  'accesstoken',
  'password',
  'passwd',
  'pwd',
  'credential',
  'credentials',
  'code',
]);

/** `api-key`, `key`, `sig`, `auth`, `secret`, `access_key`, `X-Amz-Signature`: a query parameter whose value is a secret (not `api-version`). */
export function isSecretParamName(name: string): boolean {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .some((w) => SECRET_PARAM_WORDS.has(w));
}

/** `text` with the credentials of its URLs (`user:password@`) and their secret query values replaced. */
export function redactUrls(text: string): string {
  return text
    .replace(URL_CREDENTIALS, `$1${REDACTED}@`)
    .replace(QUERY_PARAM, (whole, sep: string, name: string, value: string) =>
      value && isSecretParamName(name) ? `${sep}${name}=${REDACTED}` : whole,
    );
}

/** Registers the secrets a URL carries (its password, its secret query values): a base URL's. */
export function registerUrlSecrets(raw: string | undefined): void {
  if (!raw) return;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return;
  }
  if (url.password) registerSecret(decodeURIComponent(url.password));
  for (const [name, value] of url.searchParams) if (isSecretParamName(name)) registerSecret(value);
}

/** Strings shaped like keys and tokens, as providers echo them in errors. Each keeps its label. */
const KEY_SHAPES: [RegExp, string][] = [
  // OpenAI, Anthropic (sk-ant-…), and the like.
  [/\b(?:sk|pk|rk|sess)-[A-Za-z0-9_-]{8,}/g, REDACTED],
  [/\bBearer\s+[A-Za-z0-9._~+/-]{8,}=*/gi, `Bearer ${REDACTED}`],
  [/\bBasic\s+[A-Za-z0-9+/]{8,}=*/g, `Basic ${REDACTED}`],
  // GitHub, Hugging Face, Google, AWS, Slack.
  [
    /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|hf_[A-Za-z0-9]{20,}|AIza[0-9A-Za-z_-]{30,}|AKIA[0-9A-Z]{16}|xox[abprs]-[A-Za-z0-9-]{10,})\b/g,
    REDACTED,
  ],
  // Stripe, GitLab, npm, Groq, xAI, Replicate, AWS session keys.
  [
    /\b(?:(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}|glpat-[A-Za-z0-9_-]{20,}|npm_[A-Za-z0-9]{30,}|gsk_[A-Za-z0-9]{20,}|xai-[A-Za-z0-9]{20,}|r8_[A-Za-z0-9]{20,}|ASIA[0-9A-Z]{16})\b/g,
    REDACTED,
  ],
  // JWTs (Microsoft Entra tokens among them).
  [/\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g, REDACTED],
];
/** `api-key: …`, `x-api-key=…`, `"api_key": "…"`, Azure's `Ocp-Apim-Subscription-Key: …`, `?key=…` in a URL. */
const LABELLED =
  /\b(api[-_]?key|x-api-key|subscription-key|access[-_]token|auth[-_]token|client[-_]secret|password)(["']?\s*[:=]\s*["']?)[^\s"',&;]{6,}/gi;

/**
 * A message (a provider's error, a log line, an event) with secrets replaced: the registered
 * values, URL credentials and secret query values, and strings shaped like keys.
 */
export function redactText(text: string): string {
  let out = redactUrls(scrubSecrets(text));
  for (const [re, to] of KEY_SHAPES) out = out.replace(re, to);
  return out.replace(LABELLED, (_m, name: string, sep: string) => `${name}${sep}${REDACTED}`);
}

/** A deep copy of `value` (arrays and plain objects) with `f` applied to every string in it. */
export function mapStrings<T>(value: T, f: (s: string) => string): T {
  if (typeof value === 'string') return f(value) as T;
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, f)) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = mapStrings(v, f);
    return out as T;
  }
  return value;
}

/** A deep copy of `value` with every string passed through `redactText` (an event, a record). */
export function redactDeep<T>(value: T): T {
  return mapStrings(value, redactText);
}

/** A deep copy of `value` with the registered values and the URL secrets of every string replaced (a run's record as served). */
export function redactRecord<T>(value: T): T {
  return mapStrings(value, (s) => redactUrls(scrubSecrets(s)));
}

/**
 * A deep copy of a config with secrets replaced: keys named like secrets, the dotted
 * `secretPaths` (values that came from secret variables), URL credentials and secret query
 * values, and registered values.
 */
export function redact<T>(value: T, secretPaths: ReadonlySet<string> = new Set(), path = ''): T {
  if (typeof value === 'string') return redactUrls(scrubSecrets(value)) as T;
  if (Array.isArray(value)) {
    return value.map((v, i) => redact(v, secretPaths, path ? `${path}.${i}` : String(i))) as T;
  }
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const p = path ? `${path}.${k}` : k;
      const secret = secretPaths.has(p) || (isSecretKeyName(k) && typeof v === 'string');
      out[k] = secret && v !== '' && v != null ? REDACTED : redact(v, secretPaths, p);
    }
    return out as T;
  }
  return value;
}
