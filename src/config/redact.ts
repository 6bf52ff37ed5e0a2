/**
 * Secret redaction for everything the run writes or prints: a key whose name holds one of the
 * words key, token, secret or password, and any value that came from an `*_API_KEY` variable.
 * Names that end in `_env` hold a variable's name, not its value, and counts such as
 * `max_tokens` are not secrets.
 */
export const REDACTED = '****';
const SECRET_WORDS = new Set(['key', 'apikey', 'token', 'secret', 'password', 'passwd', 'credential', 'credentials']);

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

/** A deep copy of `value` with secrets replaced; `secretPaths` are dotted paths to redact as well. */
export function redact<T>(value: T, secretPaths: ReadonlySet<string> = new Set(), path = ''): T {
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

/** Key-shaped strings that providers echo in error messages. */
const KEY_SHAPES = [/\b(sk|pk|rk|sess)-[A-Za-z0-9_-]{8,}/g, /\bBearer\s+[A-Za-z0-9._~+/-]{8,}=*/gi, /\b(api[-_]?key|x-api-key|api-key)(["']?\s*[:=]\s*["']?)[^\s"',&]{6,}/gi];

/**
 * A message (a provider's error, a log line) with secrets replaced: the values of the secret
 * variables in `environment` (keys and tokens), and strings shaped like keys or bearer tokens.
 */
export function redactText(text: string, environment: Record<string, string | undefined> = {}): string {
  let out = text;
  for (const [name, value] of Object.entries(environment)) {
    if (value && value.trim().length >= 8 && isSecretVariable(name)) out = out.split(value.trim()).join(REDACTED);
  }
  out = out.replace(KEY_SHAPES[0]!, REDACTED).replace(KEY_SHAPES[1]!, `Bearer ${REDACTED}`);
  return out.replace(KEY_SHAPES[2]!, (_m, name: string, sep: string) => `${name}${sep}${REDACTED}`);
}
