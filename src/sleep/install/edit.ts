/**
 * Adding and removing skillopt's server entry in an agent's MCP configuration, keeping
 * everything else as it was: JSON (comments and layout kept) through jsonc-parser's edits,
 * TOML as a block of lines skillopt manages at the end of the file.
 */
import { applyEdits, modify, parse, printParseErrorCode, type ParseError } from 'jsonc-parser';
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
  const after = text.slice(end + TOML_END.length).replace(/^\n+/, '');
  return [before, after].filter(Boolean).join('\n\n') + (before || after ? '\n' : '');
}

export function tomlWith(text: string, file: string, entry: { command: string; args: string[] }): string {
  const rest = tomlStrip(text);
  if (new RegExp(`^\\s*\\[mcp_servers\\.(${SERVER_NAME}|"${SERVER_NAME}")\\]`, 'm').test(rest)) {
    throw new UserError(
      `${file}: it already has an [mcp_servers.${SERVER_NAME}] table that skillopt did not write; remove it (or rename it), then install again. Nothing was changed`,
    );
  }
  return `${rest.trim() ? `${rest.replace(/\n*$/, '')}\n\n` : ''}${tomlBlock(entry)}\n`;
}

export function tomlWithout(text: string): string {
  return tomlStrip(text);
}

export const tomlHas = (text: string) => text.includes(TOML_START);
