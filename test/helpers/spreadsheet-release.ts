/**
 * A small SpreadsheetBench release written by the tests, in the published layouts: `dataset.json`
 * (a JSON array of tasks with `id`, `instruction`, `spreadsheet_path`, `instruction_type`,
 * `answer_position`, and in Verified-400 `answer_sheet` and `data_position`) beside
 * `spreadsheet/<id>/` holding each task's test cases, named as the release names them:
 * the original release's `<no>_<id>_input.xlsx` / `<no>_<id>_answer.xlsx`, Verified-400's
 * `<no>_<id>_init.xlsx` / `<no>_<id>_golden.xlsx`, or a bare `initial.xlsx` / `golden.xlsx`.
 * Also the original's id manifest (`train/`, `val/`, `test/` with items.json of `id`,
 * `spreadsheet_path`, `instruction_type`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { makeWorkbooks, type CellValue, type WorkbookSpec } from './workbooks.ts';

export type Sheets = Record<string, Record<string, CellValue>>;

export interface TaskSpec {
  id: string;
  instruction: string;
  instruction_type?: string;
  answer_position: string;
  answer_sheet?: string;
  layout: 'original' | 'verified' | 'bare';
  cases: { input: Sheets; gold: Sheets }[];
}

function caseFiles(t: TaskSpec, no: number): [string, string] {
  if (t.layout === 'bare') return ['initial.xlsx', 'golden.xlsx'];
  if (t.layout === 'verified') return [`${no}_${t.id}_init.xlsx`, `${no}_${t.id}_golden.xlsx`];
  return [`${no}_${t.id}_input.xlsx`, `${no}_${t.id}_answer.xlsx`];
}

/** Writes the release under `root`; returns the dataset.json records. */
export function makeRelease(root: string, tasks: TaskSpec[]): Record<string, unknown>[] {
  const spec: WorkbookSpec = {};
  const records = tasks.map((t) => {
    const dir = path.join(root, 'spreadsheet', t.id);
    fs.mkdirSync(dir, { recursive: true });
    t.cases.forEach((c, i) => {
      const [input, gold] = caseFiles(t, i + 1);
      spec[path.join(dir, input)] = c.input;
      spec[path.join(dir, gold)] = c.gold;
    });
    return {
      id: t.id,
      instruction: t.instruction,
      spreadsheet_path: `spreadsheet/${t.id}`,
      instruction_type: t.instruction_type ?? 'Cell-Level Manipulation',
      answer_position: t.answer_position,
      ...(t.answer_sheet !== undefined ? { answer_sheet: t.answer_sheet, data_position: 'A1:C20' } : {}),
    };
  });
  if (Object.keys(spec).length) makeWorkbooks(spec);
  fs.writeFileSync(path.join(root, 'dataset.json'), JSON.stringify(records, null, 2));
  return records;
}

/** The original's id manifest: each split's ids with their folder and instruction type. */
export function makeManifest(dir: string, splits: Record<'train' | 'val' | 'test', Record<string, unknown>[]>): void {
  for (const [split, records] of Object.entries(splits)) {
    fs.mkdirSync(path.join(dir, split), { recursive: true });
    fs.writeFileSync(
      path.join(dir, split, 'items.json'),
      JSON.stringify(
        records.map((r) => ({ id: r.id, spreadsheet_path: r.spreadsheet_path, instruction_type: r.instruction_type })),
        null,
        2,
      ),
    );
  }
  fs.writeFileSync(
    path.join(dir, 'split_manifest.json'),
    JSON.stringify(
      {
        benchmark: 'SpreadsheetBench',
        manifest_type: 'id_split',
        counts: Object.fromEntries(Object.entries(splits).map(([s, r]) => [s, r.length])),
        item_fields: ['id', 'spreadsheet_path', 'instruction_type'],
      },
      null,
      2,
    ),
  );
}
