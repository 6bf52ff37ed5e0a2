/**
 * A SpreadsheetBench task's test cases and answer position, as the published releases lay them
 * out. Each task has a folder (`spreadsheet/<id>`) with one or more pairs of workbooks:
 * - the original release: `<no>_<id>_input.xlsx` and `<no>_<id>_answer.xlsx`;
 * - Verified-400: `<no>_<id>_init.xlsx` and `<no>_<id>_golden.xlsx`;
 * - some Verified-400 tasks: a bare `initial.xlsx` and `golden.xlsx` (case 1).
 * A workbook without its partner is not a case.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface TestCase {
  /** The case number, from the file name ('1' for the bare pair). */
  no: string;
  input: string;
  gold: string;
}

const PAIRS: [RegExp, string][] = [
  [/^(\d+)_.+_input\.xlsx$/, '_answer.xlsx'],
  [/^(\d+)_.+_init\.xlsx$/, '_golden.xlsx'],
];

/** The test cases in a task folder, by case number; none when the folder holds none. */
export function findCases(dir: string): TestCase[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  const present = new Set(names);
  const cases: TestCase[] = [];
  for (const name of names) {
    for (const [pattern, goldSuffix] of PAIRS) {
      const m = pattern.exec(name);
      if (!m) continue;
      const gold = name.replace(/_(input|init)\.xlsx$/, goldSuffix);
      if (present.has(gold)) cases.push({ no: m[1]!, input: path.join(dir, name), gold: path.join(dir, gold) });
    }
  }
  if (cases.length === 0 && present.has('initial.xlsx') && present.has('golden.xlsx')) {
    cases.push({ no: '1', input: path.join(dir, 'initial.xlsx'), gold: path.join(dir, 'golden.xlsx') });
  }
  return cases.sort((a, b) => Number(a.no) - Number(b.no) || a.input.localeCompare(b.input));
}

/** `cell_level` / `sheet_level` / `other`, from the release's instruction type. */
export function taskType(instructionType: string): string {
  const t = instructionType.toLowerCase();
  if (t.includes('cell')) return 'cell_level';
  if (t.includes('sheet')) return 'sheet_level';
  return 'other';
}

export const TASK_TYPES = ['cell_level', 'sheet_level'];

const CELL = String.raw`\$?[A-Za-z]{1,3}\$?\d+`;
const RANGE = new RegExp(`^${CELL}(:${CELL})?$`);

/** The comma-separated parts of an answer position; a comma inside a quoted sheet name ('Jan, Feb'!A1) is the name's. */
export function positionParts(position: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (const ch of position) {
    if (ch === "'") quoted = !quoted;
    if (ch === ',' && !quoted) {
      parts.push(current.trim());
      current = '';
    } else current += ch;
  }
  parts.push(current.trim());
  return parts.filter(Boolean);
}

/**
 * The answer position to compare: each comma-separated part without a sheet gets `answerSheet`
 * when the item names one (else the comparison takes the golden workbook's first sheet).
 */
export function answerPosition(position: string, answerSheet: string): string {
  if (!answerSheet.trim()) return position.trim();
  return positionParts(position)
    .map((p) => (p.includes('!') ? p : `'${answerSheet.trim()}'!${p}`))
    .join(',');
}

/** The parts of a position the comparison cannot read (the official evaluation fails on them). */
export function unreadableParts(position: string): string[] {
  const parts = positionParts(position);
  if (parts.length === 0) return [position];
  return parts.filter((p) => {
    const range = (p.includes('!') ? p.slice(p.lastIndexOf('!') + 1) : p).trim().replace(/^['"]+|['"]+$/g, '');
    return !RANGE.test(range);
  });
}
