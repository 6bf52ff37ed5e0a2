/**
 * `skillopt data materialize spreadsheetbench`: the release's task list (`dataset.json` beside
 * `spreadsheet/<id>/`) as split directories. The workbooks stay where they are: an item keeps
 * its `spreadsheet_path` relative to the release, which the env finds through `env.data_root`.
 * An item whose folder holds no test case is left out and listed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DataError } from '../data/errors.ts';
import { readRecords } from '../data/read.ts';
import { registerMaterializer } from '../materialize.ts';
import { findCases } from './cases.ts';

/** The task list of a release: the file given, or dataset.json (else dataset.jsonl) in the folder given. */
function taskList(raw: string): string {
  if (!fs.statSync(raw).isDirectory()) return raw;
  for (const name of ['dataset.json', 'dataset.jsonl'])
    if (fs.existsSync(path.join(raw, name))) return path.join(raw, name);
  throw new DataError(
    `${raw} holds no dataset.json: --raw should be the extracted SpreadsheetBench release (dataset.json beside spreadsheet/<id>/) or its dataset.json`,
  );
}

registerMaterializer({
  benchmark: 'spreadsheetbench',
  rawHelp:
    'the extracted SpreadsheetBench release: a folder with dataset.json (id, instruction, instruction_type, answer_position, spreadsheet_path) beside spreadsheet/<id>/',
  matchKeys: ['id'],
  defaultRatio: '2:1:7',
  read: async (raw) => {
    const file = taskList(raw);
    const root = path.dirname(file);
    return (await readRecords(file)).map((rec) => {
      const f = rec.fields;
      if (f.id === undefined || f.id === null || String(f.id).trim() === '')
        throw new DataError("missing field 'id'", rec.where, 'id');
      const id = String(f.id);
      for (const field of ['instruction', 'answer_position']) {
        if (typeof f[field] !== 'string' || !(f[field] as string).trim())
          throw new DataError(`missing field '${field}'`, rec.where, field);
      }
      const sheetPath =
        typeof f.spreadsheet_path === 'string' && f.spreadsheet_path.trim()
          ? f.spreadsheet_path.trim()
          : `spreadsheet/${id}`;
      const record = { ...f, id, spreadsheet_path: sheetPath };
      const dir = path.isAbsolute(sheetPath) ? sheetPath : path.join(root, sheetPath);
      const leftOut = !fs.existsSync(dir)
        ? `spreadsheet folder not found: ${dir}`
        : findCases(dir).length === 0
          ? `no test cases (input and golden workbooks) in ${dir}`
          : undefined;
      return { id, record, where: rec.where, ...(leftOut ? { leftOut } : {}) };
    });
  },
});
