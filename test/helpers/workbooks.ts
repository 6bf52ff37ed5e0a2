/**
 * Workbooks for the SpreadsheetBench tests, written by openpyxl (the library the benchmark's own
 * files and the official evaluation use) through `make_workbooks.py`, all in one process.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { findPython } from '../../src/envs/python.ts';

export type CellValue = string | number | boolean | null | { date: string } | { time: string };
/** path → sheet name → cell reference → value; sheets in the order given. */
export type WorkbookSpec = Record<string, Record<string, Record<string, CellValue>>>;

const SCRIPT = path.join(import.meta.dirname, 'make_workbooks.py');

/** The interpreter the env will use (python3 with openpyxl and pandas). */
export function testPython(): string {
  return findPython('', {
    who: 'the SpreadsheetBench tests',
    modules: ['openpyxl', 'pandas'],
    install: 'apt-get install python3-openpyxl python3-pandas',
    optionKey: 'env.python',
  });
}

export function makeWorkbooks(spec: WorkbookSpec): void {
  const res = spawnSync(testPython(), [SCRIPT], { input: JSON.stringify(spec), encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`make_workbooks.py failed: ${res.stderr || res.error?.message}`);
}
