/**
 * Casting of `--cfg-options key=value` values. Scalars are cast as the original does: true/yes
 * and false/no (any case) become booleans, then an integer, then a float, else the string
 * itself. A value that opens with `[` or `{` is a list or a mapping, read as YAML flow (which
 * JSON is a part of): `[/a,/b]`, `'["/a"]'`, `{a: 1}`.
 */
import { parse } from 'yaml';

export type Cast = string | number | boolean | unknown[] | Record<string, unknown>;

export function castValue(raw: string): Cast {
  const text = raw.trim();
  if (text.startsWith('[') || text.startsWith('{')) return parseFlow(text);
  const lower = text.toLowerCase();
  if (lower === 'true' || lower === 'yes') return true;
  if (lower === 'false' || lower === 'no') return false;
  if (/^[+-]?\d+$/.test(text)) return Number.parseInt(text, 10);
  if (/^[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?$/.test(text)) return Number(text);
  return raw;
}

function parseFlow(text: string): unknown[] | Record<string, unknown> {
  const kind = text.startsWith('[') ? 'list' : 'mapping';
  let value: unknown;
  try {
    value = parse(text, { prettyErrors: false });
  } catch (err) {
    throw new Error(
      `${JSON.stringify(text)} is not a valid ${kind} (${(err as Error).message.split('\n')[0]}); write it as [a, b] or {key: value}, in quotes for the shell`,
    );
  }
  if (kind === 'list' ? !Array.isArray(value) : value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new Error(
      `${JSON.stringify(text)} is not a valid ${kind}; write it as [a, b] or {key: value}, in quotes for the shell`,
    );
  }
  return value as unknown[] | Record<string, unknown>;
}

/** Splits `a.b=value` at the first `=`. */
export function parseOverride(item: string): { key: string; value: string } {
  const at = item.indexOf('=');
  if (at <= 0) {
    throw new Error(`override '${item}' must look like key=value (for example train.batch_size=8)`);
  }
  return { key: item.slice(0, at).trim(), value: item.slice(at + 1) };
}
