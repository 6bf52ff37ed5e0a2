/**
 * A task: the training unit of Sleep, mined from a session (or written by the user in a tasks
 * file). The field names are the original SkillOpt-Sleep's (`TaskRecord`), so tasks files move
 * between the two: unknown keys are ignored, missing ones take their defaults, and the
 * original's split names `replay` and `holdout` read as `train` and `val`.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';

export const SPLITS = ['train', 'val', 'test'] as const;
export type TaskSplit = (typeof SPLITS)[number];

export const OUTCOMES = ['success', 'fail', 'mixed', 'unknown'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export const REFERENCE_KINDS = ['exact', 'rubric', 'rule', 'none'] as const;
export type ReferenceKind = (typeof REFERENCE_KINDS)[number];

export const CheckSchema = z
  .object({ op: z.string(), arg: z.union([z.string(), z.number(), z.null()]).optional() })
  .loose();
export type Check = z.infer<typeof CheckSchema>;

/** A rule judge: `{kind: 'rule', checks: [...]}`; `{}` for tasks judged otherwise. */
export const JudgeSchema = z.object({ kind: z.string().optional(), checks: z.array(z.unknown()).optional() }).loose();
export type Judge = z.infer<typeof JudgeSchema>;

const LEGACY_SPLITS: Record<string, TaskSplit> = { replay: 'train', holdout: 'val' };

const texts = z.array(z.string()).default([]);

export const TaskRecordSchema = z.object({
  id: z.string().min(1),
  project: z.string().default(''),
  intent: z.string().min(1),
  context_excerpt: z.string().default(''),
  /** A verbatim system framing for the attempt; `{skill_section}` marks where the documents go. */
  system: z.string().default(''),
  attempted_solution: z.string().default(''),
  outcome: z.enum(OUTCOMES).catch('unknown').default('unknown'),
  reference_kind: z.enum(REFERENCE_KINDS).default('none'),
  reference: z.string().default(''),
  judge: JudgeSchema.default({}),
  tags: texts,
  source_sessions: texts,
  split: z
    .string()
    .default('train')
    .transform((s, ctx) => {
      const v = LEGACY_SPLITS[s] ?? s;
      if ((SPLITS as readonly string[]).includes(v)) return v as TaskSplit;
      ctx.addIssue({
        code: 'custom',
        message: `expected one of ${SPLITS.join(', ')} (or the original's replay, holdout), got '${s}'`,
      });
      return z.NEVER;
    }),
  origin: z.enum(['real', 'dream']).default('real'),
  derived_from: z.string().default(''),
  /** The one skill the source session invoked, else ''. */
  skill_hint: z.string().default(''),
});

export type TaskRecord = z.output<typeof TaskRecordSchema>;

/** A task with every field at its default but those given. */
export function taskRecord(fields: Pick<TaskRecord, 'id' | 'intent'> & Partial<TaskRecord>): TaskRecord {
  return TaskRecordSchema.parse(fields);
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The checks of a rule judge (well-formed or not: `validateChecks` says which). */
export function checksOf(task: Pick<TaskRecord, 'judge'>): unknown[] {
  return Array.isArray(task.judge.checks) ? task.judge.checks : [];
}

/** The task's type for per-type tables: its first tag, as the original. */
export function taskType(task: Pick<TaskRecord, 'tags'>): string {
  return task.tags[0] ?? 'task';
}
