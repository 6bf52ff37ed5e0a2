/**
 * The evaluations of a run's skills started from the dashboard: `skillopt eval` output
 * directories under the run's `evals/`, each read from its `eval_summary.json` (per skill and
 * target: items, hard and soft means with their intervals; each further skill against the
 * first). A directory without a summary is an evaluation still running, stopped or failed.
 */
import fs from 'node:fs';
import { z } from 'zod';
import type { RunDir } from '../../run/layout.ts';
import { parseJsonFile } from '../files/file-cache.ts';
import { listInside } from '../files/safe-path.ts';

/** The directory of a run that holds its evaluations. */
export const EVALS_DIR = 'evals';

const pair = z.tuple([z.number(), z.number()]);
const EvalCellSchema = z
  .object({
    skill_label: z.string(),
    target: z.string(),
    n_items: z.number(),
    hard: z.number(),
    soft: z.number(),
    hard_ci95: pair.optional(),
    soft_ci95: pair.optional(),
    errors: z.number().default(0),
  })
  .loose();
const TestSchema = z
  .object({
    n: z.number().optional(),
    diff: z.number(),
    ci: pair.optional(),
    p: z.number().nullable(),
    method: z.string().optional(),
  })
  .loose();
export const EvalSummarySchema = z
  .object({
    split: z.string(),
    repeats: z.number().default(1),
    items: z.number().optional(),
    cells: z.array(EvalCellSchema),
    comparisons: z
      .array(
        z
          .object({
            target: z.string(),
            baseline: z.string(),
            candidate: z.string(),
            hard: TestSchema,
            soft: TestSchema.optional(),
          })
          .loose(),
      )
      .default([]),
  })
  .loose();
export type EvalSummary = z.infer<typeof EvalSummarySchema>;

export interface EvalEntry {
  name: string;
  /** Relative to the run directory. */
  dir: string;
  summary?: EvalSummary;
  /** Why the summary does not read (a broken file); absent when there is none yet. */
  problem?: string;
  updatedAt: number;
}

/** The evaluations of a run, newest first. */
export function listEvals(run: RunDir): EvalEntry[] {
  const out: EvalEntry[] = [];
  for (const entry of listInside(run.root, run.path(EVALS_DIR))) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const file = run.path(EVALS_DIR, entry.name, 'eval_summary.json');
    const read = parseJsonFile(run.root, file, EvalSummarySchema, 'an evaluation summary (split, cells, comparisons)');
    let updatedAt = 0;
    try {
      updatedAt = fs.statSync(run.path(EVALS_DIR, entry.name)).mtimeMs;
    } catch {
      // gone meanwhile
    }
    out.push({
      name: entry.name,
      dir: `${EVALS_DIR}/${entry.name}`,
      ...(read.ok ? { summary: read.value } : {}),
      ...(!read.ok && !read.missing ? { problem: read.error } : {}),
      updatedAt,
    });
  }
  return out.sort((a, b) => b.name.localeCompare(a.name));
}
