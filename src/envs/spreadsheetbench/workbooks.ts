/**
 * What the env reads from workbooks, through `python/sheets.py` (openpyxl, as the official
 * evaluation reads them): the preview of an input workbook for the prompt (made once per file),
 * and the comparison of a task's output workbooks with its golden ones.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { runProcess } from '../../model/harness/process.ts';
import { pythonEnvironment } from '../python.ts';

const SHEETS = path.join(import.meta.dirname, 'python', 'sheets.py');
const TIMEOUT_MS = 300_000;

const CellSchema = z.object({ ref: z.string(), got: z.string(), expected: z.string(), ok: z.boolean() });
const CaseResultSchema = z.object({
  no: z.string(),
  ok: z.boolean(),
  reason: z.string(),
  cells: z.array(CellSchema),
  empty_ok: z.number(),
  unlisted_ok: z.number(),
  unlisted_wrong: z.number(),
  formulas: z.array(z.string()),
});
const EvaluationSchema = z.object({ cases: z.array(CaseResultSchema) });

export type CellCheck = z.infer<typeof CellSchema>;
export type CaseCheck = z.infer<typeof CaseResultSchema>;

async function sheets(python: string, args: string[], stdin?: string): Promise<string> {
  const res = await runProcess({
    command: python,
    args: [SHEETS, ...args],
    cwd: os.tmpdir(),
    env: pythonEnvironment(),
    stdin,
    timeoutMs: TIMEOUT_MS,
  });
  if (res.exitCode !== 0) {
    const why =
      res.spawnError?.message ??
      (res.timedOut
        ? `no answer in ${TIMEOUT_MS / 1000} s`
        : res.stderr.trim().split('\n').slice(-3).join(' ') || `exit code ${res.exitCode}`);
    throw new Error(`reading workbooks with ${python} failed: ${why}`);
  }
  return res.lines.join('\n');
}

const previews = new Map<string, Promise<string>>();

/** Every sheet of a workbook: its size and its first rows and columns, values clipped. */
export function previewWorkbook(python: string, file: string): Promise<string> {
  const stat = fs.statSync(file);
  const key = `${python}\u0000${file}\u0000${stat.mtimeMs}\u0000${stat.size}`;
  let preview = previews.get(key);
  if (!preview) {
    preview = sheets(python, ['preview', file]).catch(
      (err: Error) => `(the workbook could not be previewed: ${err.message})`,
    );
    previews.set(key, preview);
  }
  return preview;
}

export interface CaseOutput {
  no: string;
  /** The workbook the solution wrote (it may be missing). */
  pred: string;
  gold: string;
}

/** Each output compared with its golden workbook over `answerPosition`, in the given order. */
export async function compareOutputs(
  python: string,
  answerPosition: string,
  cases: CaseOutput[],
): Promise<CaseCheck[]> {
  if (cases.length === 0) return [];
  const out = await sheets(python, ['evaluate'], JSON.stringify({ answer_position: answerPosition, cases }));
  const parsed = EvaluationSchema.safeParse(JSON.parse(out));
  if (!parsed.success) throw new Error(`sheets.py evaluate answered in an unexpected shape: ${parsed.error.message}`);
  return parsed.data.cases;
}
