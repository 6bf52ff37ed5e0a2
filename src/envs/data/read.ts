/**
 * Reading data files into records: JSON Lines, a JSON array (or an object with a `data` array),
 * CSV / TSV and Parquet. Each record keeps where it came from, so every later error can name
 * the file and the line (or row). An unreadable file is an error naming the file and why.
 */
import fs from 'node:fs';
import path from 'node:path';
import { type ParseError, parse as parseJsonc, printParseErrorCode, visit } from 'jsonc-parser';
import { checkRegularFile, FileRefused, readRegularFile } from '../../util/read-file.ts';
import { DataError, type Location } from './errors.ts';

export type Fields = Record<string, unknown>;

export interface RawRecord {
  fields: Fields;
  where: Location;
}

export const DATA_EXTENSIONS = ['.jsonl', '.ndjson', '.json', '.csv', '.tsv', '.parquet'] as const;

export function isDataFile(file: string): boolean {
  return (DATA_EXTENSIONS as readonly string[]).includes(path.extname(file).toLowerCase());
}

/** 1-based line of a character offset. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** The largest text data file read (a JavaScript string holds little more). */
export const MAX_DATA_BYTES = 512 * 1024 * 1024;

/** A data file's text: a regular file only (not a FIFO or a device), within the limit, read off the event loop. */
async function readText(file: string): Promise<string> {
  try {
    return (await readRegularFile(file, MAX_DATA_BYTES, 'a data file')).toString('utf8');
  } catch (err) {
    if (!(err instanceof FileRefused)) throw err;
    if (err.reason === 'missing') throw new DataError(`data file not found: ${file}`);
    if (err.reason === 'not_a_file' && fs.statSync(file, { throwIfNoEntry: false })?.isDirectory())
      throw new DataError(`${file} is a directory, expected a data file (${DATA_EXTENSIONS.join(', ')})`);
    throw new DataError(err.message);
  }
}

function asRecord(value: unknown, where: Location): RawRecord {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new DataError(
      `expected an object (a record with named fields), got ${Array.isArray(value) ? 'a list' : JSON.stringify(value)}`,
      where,
    );
  }
  return { fields: value as Fields, where };
}

async function readJsonl(file: string): Promise<RawRecord[]> {
  const text = await readText(file);
  const out: RawRecord[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (!line) continue;
    const where: Location = { file, line: i + 1, index: out.length + 1 };
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      throw new DataError(
        `not valid JSON (${(err as Error).message}); each line of a .jsonl file must be one JSON object`,
        where,
      );
    }
    out.push(asRecord(value, where));
  }
  return out;
}

async function readJson(file: string): Promise<RawRecord[]> {
  const text = await readText(file);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const errors: ParseError[] = [];
    parseJsonc(text, errors, { disallowComments: true, allowTrailingComma: false });
    const first = errors[0];
    if (first)
      throw new DataError(`not valid JSON: ${printParseErrorCode(first.error)}`, {
        file,
        line: lineAt(text, first.offset),
      });
    throw new DataError(`not valid JSON: ${(err as Error).message}`, { file });
  }
  let list: unknown[];
  let prefix: (string | number)[];
  if (Array.isArray(value)) {
    list = value;
    prefix = [];
  } else if (value && typeof value === 'object' && Array.isArray((value as Fields).data)) {
    list = (value as { data: unknown[] }).data;
    prefix = ['data'];
  } else {
    throw new DataError('expected a JSON array of records (or an object whose "data" field is one)', { file });
  }
  // Line of each element, found by a scan that only looks at the element starts.
  const lines: number[] = [];
  visit(text, {
    onObjectBegin: (_offset, _length, startLine, _ch, pathSupplier) => {
      const p = pathSupplier();
      if (p.length === prefix.length + 1 && prefix.every((k, i) => p[i] === k) && typeof p[prefix.length] === 'number')
        lines[p[prefix.length] as number] = startLine + 1;
    },
  });
  return list.map((v, i) => asRecord(v, { file, line: lines[i], index: i + 1, unit: 'item' }));
}

async function readCsv(file: string, delimiter: string): Promise<RawRecord[]> {
  const text = await readText(file);
  const { parse: parseCsv } = await import('csv-parse/sync');
  let rows: { record: Fields; info: { lines: number } }[];
  try {
    rows = parseCsv(text, {
      columns: true,
      bom: true,
      skip_empty_lines: true,
      info: true,
      delimiter,
      relax_quotes: false,
    }) as typeof rows;
  } catch (err) {
    const e = err as Error & { lines?: number };
    throw new DataError(
      `not valid ${delimiter === '\t' ? 'TSV' : 'CSV'}: ${e.message.replace(/^Invalid Record Length: /, '')}`,
      { file, line: e.lines },
    );
  }
  return rows.map(({ record, info }, i) => ({ fields: record, where: { file, line: info.lines, index: i + 1 } }));
}

async function readParquet(file: string): Promise<RawRecord[]> {
  const { asyncBufferFromFile, parquetReadObjects } = await import('hyparquet');
  let rows: Fields[];
  try {
    // Parquet is read by ranges: no size limit, but a FIFO or a device is not read at all.
    checkRegularFile(file, Number.MAX_SAFE_INTEGER, 'a data file');
    const buffer = await asyncBufferFromFile(file);
    // utf8: false keeps binary columns (images) as bytes; annotated string columns stay strings.
    rows = (await parquetReadObjects({ file: buffer, utf8: false })) as Fields[];
  } catch (err) {
    if (err instanceof FileRefused)
      throw new DataError(err.reason === 'missing' ? `data file not found: ${file}` : err.message);
    throw new DataError(`not a readable Parquet file: ${(err as Error).message}`, { file });
  }
  return rows.map((fields, i) => ({
    fields: plainValues(fields) as Fields,
    where: { file, index: i + 1, unit: 'row' },
  }));
}

/** Parquet gives bigints for INT64; plain numbers are what every scorer expects. */
function plainValues(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map(plainValues);
  if (value && typeof value === 'object' && !(value instanceof Uint8Array) && !(value instanceof Date)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plainValues(v)]));
  }
  return value;
}

/** Every record of a data file, in file order. */
export async function readRecords(file: string): Promise<RawRecord[]> {
  const ext = path.extname(file).toLowerCase();
  switch (ext) {
    case '.jsonl':
    case '.ndjson':
      return readJsonl(file);
    case '.json':
      return readJson(file);
    case '.csv':
      return readCsv(file, ',');
    case '.tsv':
      return readCsv(file, '\t');
    case '.parquet':
      return readParquet(file);
    default:
      if (!fs.existsSync(file)) throw new DataError(`data file not found: ${file}`);
      throw new DataError(
        `unsupported data file type '${ext || '(none)'}' of ${file}; expected one of ${DATA_EXTENSIONS.join(', ')}`,
      );
  }
}

/** The data files directly inside a directory, sorted by name. */
export function dataFilesIn(dir: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (err) {
    throw new DataError(`cannot list ${dir}: ${(err as Error).message}`);
  }
  return names
    .filter((n) => isDataFile(n) && !n.startsWith('.') && n !== 'split_manifest.json')
    .sort()
    .map((n) => path.join(dir, n));
}

/** The data files under a directory, at any depth, sorted by path. */
export function dataFilesUnder(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[])
    .filter(
      (rel) => isDataFile(rel) && !path.basename(rel).startsWith('.') && path.basename(rel) !== 'split_manifest.json',
    )
    .sort()
    .map((rel) => path.join(dir, rel));
}

/** Every record of a file, or of every data file under a directory. */
export async function readRecordsFrom(fileOrDir: string): Promise<RawRecord[]> {
  if (!fs.statSync(fileOrDir).isDirectory()) return readRecords(fileOrDir);
  const out: RawRecord[] = [];
  for (const file of dataFilesUnder(fileOrDir)) out.push(...(await readRecords(file)));
  return out;
}
