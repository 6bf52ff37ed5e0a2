/**
 * Times as the sources write them (ISO strings with or without a zone, SQLite's
 * `YYYY-MM-DD HH:MM:SS`, epoch seconds or milliseconds) read as instants, and the user's
 * `--since` (a duration back from now, or a date). Every comparison is between instants, never
 * between strings in different zones.
 */

const NAIVE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?$/;

/**
 * Milliseconds since the epoch, or undefined. A time without a zone is UTC for `naive: 'utc'`
 * (what SQLite's `datetime('now')` writes) or the machine's local time for `naive: 'local'` (what
 * a person types).
 */
export function toMillis(value: unknown, naive: 'utc' | 'local' = 'utc'): number | undefined {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value <= 0) return undefined;
    return value < 1e11 ? value * 1000 : value;
  }
  if (typeof value !== 'string' || !value.trim()) return undefined;
  const s = value.trim();
  if (/^\d+(?:\.\d+)?$/.test(s)) return toMillis(Number(s), naive);
  const m = NAIVE.exec(s);
  if (m) {
    const [y, mo, d, h = '0', mi = '0', sec = '0', frac = '0'] = m.slice(1);
    const ms = Number(frac.slice(0, 3).padEnd(3, '0'));
    const parts = [Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(sec), ms] as const;
    const t = naive === 'utc' ? Date.UTC(...parts) : new Date(...parts).getTime();
    return Number.isFinite(t) ? t : undefined;
  }
  const t = Date.parse(s);
  return Number.isFinite(t) ? t : undefined;
}

export function isoOf(ms: number | undefined): string {
  return ms === undefined ? '' : new Date(ms).toISOString();
}

const DURATION = /^(\d+(?:\.\d+)?)\s*(m|min|minutes?|h|hours?|d|days?|w|weeks?)$/i;
const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * The start of the time window: `72h`, `7d`, `2w`, `30m` back from `now`, or a date or time
 * (`2026-11-01`, `2026-11-01T09:00`, local time unless it names a zone). Undefined for text
 * that is neither.
 */
export function parseSince(text: string, now = Date.now()): number | undefined {
  const d = DURATION.exec(text.trim());
  if (d) return now - Number(d[1]) * UNIT_MS[d[2]![0]!.toLowerCase()]!;
  return toMillis(text, 'local');
}
