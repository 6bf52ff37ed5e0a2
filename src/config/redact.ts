/**
 * Secret redaction for everything the run writes or prints.
 *
 * - The values of the keys in use (every role's resolved key, whatever variable it came from, and
 *   every variable whose name says it holds a secret) are registered here once known, and removed
 *   from every file we write (`scrubSecrets`, applied by the file writers) and every message.
 * - Messages (errors, warnings, events, the console, the ledger's errors) also lose anything
 *   shaped like a key: `sk-…`, `Bearer …`, `api-key: …`, GitHub and cloud tokens, JWTs, and the
 *   credentials of a URL (`http://user:secret@host`) (`redactText`).
 * - A config loses the values of keys whose name holds key, token, secret or password, and URL
 *   credentials (`redact`). Names that end in `_env` hold a variable's name, not its value, and
 *   counts such as `max_tokens` are not secrets.
 *
 * Key shapes are not removed from model replies, skills or task data, where they may be
 * ordinary text (`Authorization: Bearer <token>` in a skill about APIs); key values are.
 */
export const REDACTED = '****';
const SECRET_WORDS = new Set(['key', 'apikey', 'token', 'secret', 'password', 'passwd', 'credential', 'credentials']);
/** Shorter values are not registered: they would match ordinary text. */
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

/** Registers a secret value (a key, a token, a URL's password): from now on it is removed from whatever is written. */
export function registerSecret(value: string | undefined): void {
  const v = value?.trim();
  if (!v || v.length < MIN_SECRET_CHARS) return;
  const forms = [v, encodeURIComponent(v)];
  let added = false;
  for (const f of forms) {
    if (!inUse.includes(f)) {
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
    if (v && isSecretVariable(name) && keyShaped(v)) registerSecret(v);
  }
}

/** `text` without the registered secret values. */
export function scrubSecrets(text: string): string {
  let out = text;
  for (const v of inUse) if (out.includes(v)) out = out.split(v).join(REDACTED);
  return out;
}

/** The credentials part of a URL (`user:password@`, `token@`). */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@'"<>]+@/gi;

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
const URL_PARAM = /([?&](?:key|api[-_]?key|token|access_token|sig|code)=)[^&\s"'#]{6,}/gi;

/**
 * A message (a provider's error, a log line, an event) with secrets replaced: the registered
 * values, URL credentials, and strings shaped like keys.
 */
export function redactText(text: string): string {
  let out = scrubSecrets(text).replace(URL_CREDENTIALS, `$1${REDACTED}@`);
  for (const [re, to] of KEY_SHAPES) out = out.replace(re, to);
  out = out.replace(LABELLED, (_m, name: string, sep: string) => `${name}${sep}${REDACTED}`);
  return out.replace(URL_PARAM, `$1${REDACTED}`);
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

/**
 * A deep copy of a config with secrets replaced: keys named like secrets, the dotted
 * `secretPaths` (values that came from secret variables), URL credentials and registered values.
 */
export function redact<T>(value: T, secretPaths: ReadonlySet<string> = new Set(), path = ''): T {
  if (typeof value === 'string') return scrubSecrets(value).replace(URL_CREDENTIALS, `$1${REDACTED}@`) as T;
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
