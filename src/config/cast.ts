/**
 * Casting of `--cfg-options key=value` values, as the original does: true/yes and false/no
 * (any case) become booleans, then an integer, then a float, else the string itself.
 */
export function castValue(raw: string): string | number | boolean {
  const lower = raw.trim().toLowerCase();
  if (lower === 'true' || lower === 'yes') return true;
  if (lower === 'false' || lower === 'no') return false;
  const text = raw.trim();
  if (/^[+-]?\d+$/.test(text)) return Number.parseInt(text, 10);
  if (/^[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?$/.test(text)) return Number(text);
  return raw;
}

/** Splits `a.b=value` at the first `=`. */
export function parseOverride(item: string): { key: string; value: string } {
  const at = item.indexOf('=');
  if (at <= 0) {
    throw new Error(`override '${item}' must look like key=value (for example train.batch_size=8)`);
  }
  return { key: item.slice(0, at).trim(), value: item.slice(at + 1) };
}
