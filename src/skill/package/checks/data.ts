/**
 * JSON and YAML files parse. A failure names the file and the line of the first error; a YAML
 * file may hold several documents (`---` between them), as YAML allows.
 */
import { type ParseError, parse as parseJsonc } from 'jsonc-parser';
import { parseAllDocuments } from 'yaml';
import type { PackageFile } from '../package.ts';
import { failed, type PackageCheck, passed } from './record.ts';

export type DataFormat = 'json' | 'yaml';

/** The data format a file's name says it holds, if any. */
export function dataFormat(path: string): DataFormat | undefined {
  if (/\.json$/i.test(path)) return 'json';
  if (/\.ya?ml$/i.test(path)) return 'yaml';
  return undefined;
}

/** The 1-based line of `offset` in `text`. */
export function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

function jsonProblem(text: string): string | undefined {
  try {
    JSON.parse(text);
    return undefined;
  } catch (err) {
    // JSON.parse's message gives a position only sometimes, and quotes the text; the line comes from a parser that reports offsets.
    const what = (err as Error).message
      .replace(/, ".*" is not valid JSON$/s, '')
      .replace(/ at position \d+.*$/s, '')
      .replace(/ in JSON$/, '');
    const errors: ParseError[] = [];
    parseJsonc(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
    const first = errors[0];
    return first ? `line ${lineAt(text, first.offset)}: ${what}` : what;
  }
}

function yamlProblem(text: string): string | undefined {
  for (const doc of parseAllDocuments(text)) {
    const error = doc.errors[0];
    if (!error) continue;
    const at = error.linePos?.[0];
    const what = error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    return at ? `line ${at.line}: ${what}` : what;
  }
  return undefined;
}

export function checkData(path: string, file: PackageFile, format: DataFormat): PackageCheck {
  const name = format === 'json' ? 'JSON' : 'YAML';
  if (file.kind !== 'text') return failed(format, path, `${path} is not UTF-8 text, so it is not ${name}`);
  const problem = format === 'json' ? jsonProblem(file.text) : yamlProblem(file.text);
  return problem
    ? failed(format, path, `${path} is not valid ${name}: ${problem}`)
    : passed(format, path, `${path} parses as ${name}`);
}
