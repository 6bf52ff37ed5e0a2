/**
 * Adding and removing skillopt's server entry in an agent's MCP configuration, keeping
 * everything else as it was: JSON (comments and layout kept) through jsonc-parser's edits,
 * TOML as a block of lines skillopt manages at the end of the file, checked with a TOML parser
 * (smol-toml) before and after, so that a file is never left unreadable.
 */
import { isDeepStrictEqual } from 'node:util';
import { applyEdits, modify, parse, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { parse as parseTomlText } from 'smol-toml';
import { UserError } from '../../errors.ts';
import { SERVER_NAME } from './agents.ts';

export const TOML_START = '# >>> skillopt (managed) >>>';
export const TOML_END = '# <<< skillopt (managed) <<<';

const FORMAT = { formattingOptions: { insertSpaces: true, tabSize: 2, eol: '\n' } };

function parseJson(text: string, file: string): unknown {
  if (!text.trim()) return undefined;
  const errors: ParseError[] = [];
  const value = parse(text, errors, { allowTrailingComma: true });
  if (errors.length)
    throw new UserError(
      `${file}: not valid JSON (${printParseErrorCode(errors[0]!.error)} at offset ${errors[0]!.offset}); fix it, then install again. Nothing was changed`,
    );
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new UserError(`${file}: expected a JSON object; nothing was changed`);
  return value;
}

export function jsonWith(text: string, file: string, key: string[], entry: unknown): string {
  const value = parseJson(text, file) as Record<string, unknown> | undefined;
  const parent = value?.[key[0]!];
  if (parent !== undefined && (typeof parent !== 'object' || parent === null || Array.isArray(parent)))
    throw new UserError(`${file}: "${key[0]}" is not an object; nothing was changed`);
  const base = text.trim() ? text : '{}\n';
  const out = applyEdits(base, modify(base, key, entry, FORMAT));
  return out.endsWith('\n') ? out : `${out}\n`;
}

export function jsonWithout(text: string, file: string, key: string[]): string {
  parseJson(text, file);
  return applyEdits(text, modify(text, key, undefined, FORMAT));
}

export function jsonHas(text: string, file: string, key: string[]): boolean {
  const value = parseJson(text, file) as Record<string, Record<string, unknown> | undefined> | undefined;
  return value?.[key[0]!]?.[key[1]!] !== undefined;
}

const tomlString = (s: string) => JSON.stringify(s);

/** The document `text` holds, or a UserError naming the file and the line of its first problem. */
function parseToml(text: string, file: string, what = 'it'): Record<string, unknown> {
  try {
    return parseTomlText(text) as Record<string, unknown>;
  } catch (err) {
    const e = err as Error & { line?: number; column?: number };
    const reason = e.message.split('\n')[0]!.replace(/^Invalid TOML document: /, '');
    throw new UserError(
      `${file}${e.line ? `:${e.line}:${e.column}` : ''}: ${what} is not valid TOML (${reason}); fix it, then install again. Nothing was changed`,
    );
  }
}

function tomlBlock(entry: { command: string; args: string[] }): string {
  return [
    TOML_START,
    `[mcp_servers.${SERVER_NAME}]`,
    `command = ${tomlString(entry.command)}`,
    `args = [${entry.args.map(tomlString).join(', ')}]`,
    TOML_END,
  ].join('\n');
}

function tomlStrip(text: string): string {
  const start = text.indexOf(TOML_START);
  const end = text.indexOf(TOML_END);
  if (start < 0 || end < start) return text;
  const before = text.slice(0, start).replace(/\n+$/, '');
  const after = text
    .slice(end + TOML_END.length)
    .replace(/^\n+/, '')
    .replace(/\n+$/, '');
  return [before, after].filter(Boolean).join('\n\n') + (before || after ? '\n' : '');
}

/** A parsed document as plain data (the parser's tables have no prototype), for comparing two. */
function plain(v: unknown): unknown {
  if (v instanceof Date) return `date:${String(v)}`;
  if (Array.isArray(v)) return v.map(plain);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, plain((v as Record<string, unknown>)[k])]),
    );
  return v;
}

const serversOf = (doc: Record<string, unknown>) => doc.mcp_servers as Record<string, unknown> | undefined;

/**
 * `text` with skillopt's server entry, as a block of lines at the end (replacing the block of an
 * earlier install); every other byte stays. Refused, with nothing changed, when the file is not
 * valid TOML, already holds a `skillopt` server skillopt did not write (in any spelling), or
 * cannot take the block (its `mcp_servers` is an inline table): the result is parsed again and
 * must be the user's document plus the entry, nothing else.
 */
export function tomlWith(text: string, file: string, entry: { command: string; args: string[] }): string {
  parseToml(text, file);
  const rest = tomlStrip(text);
  const doc = parseToml(rest, file, "without skillopt's block, it");
  if (serversOf(doc)?.[SERVER_NAME] !== undefined)
    throw new UserError(
      `${file}: it already has an mcp_servers.${SERVER_NAME} entry that skillopt did not write; remove it (or rename it), then install again. Nothing was changed`,
    );
  const next = `${rest.trim() ? `${rest.replace(/\n*$/, '')}\n\n` : ''}${tomlBlock(entry)}\n`;
  let merged: Record<string, unknown> | undefined;
  try {
    merged = parseTomlText(next) as Record<string, unknown>;
  } catch {
    merged = undefined;
  }
  const expected = { ...doc, mcp_servers: { ...serversOf(doc), [SERVER_NAME]: entry } };
  if (!merged || !isDeepStrictEqual(plain(merged), plain(expected)))
    throw new UserError(
      `${file}: skillopt cannot add its [mcp_servers.${SERVER_NAME}] table without rewriting your mcp_servers (written as an inline table?); add \`${SERVER_NAME} = { command = ${tomlString(entry.command)}, args = [${entry.args.map(tomlString).join(', ')}] }\` to it yourself, or write it as [mcp_servers.<name>] tables. Nothing was changed`,
    );
  return next;
}

/** `text` without skillopt's block (refused, nothing changed, when the file is no longer valid TOML). */
export function tomlWithout(text: string, file: string): string {
  parseToml(text, file);
  const rest = tomlStrip(text);
  parseToml(rest, file, "without skillopt's block, it");
  return rest;
}

export const tomlHas = (text: string) => text.includes(TOML_START);
