/**
 * The reviewed tasks file (`skillopt_sleep.tasks.v1`, the original's format): the tasks of a
 * night, written by `skillopt sleep mine` for the user to read, edit (drop a task, fix a
 * reference, add checks) and feed back with `--tasks`. Reading accepts the object or a bare list
 * of tasks, ignores unknown keys, and checks every rule judge: an error names the file and the
 * task. A file that has not been marked `"reviewed": true` is refused for a night with a real
 * model, since its prompts would go to the provider as mined.
 */
import fs from 'node:fs';
import { z } from 'zod';
import { UserError } from '../../errors.ts';
import { writeJsonAtomic } from '../../run/atomic.ts';
import { validateChecks } from '../judge/rules.ts';
import { assignSplits } from '../mine/splits.ts';
import { TaskRecordSchema, type TaskRecord } from './task.ts';

export const TASKS_FORMAT = 'skillopt_sleep.tasks.v1';

export interface TasksFile {
  format: typeof TASKS_FORMAT;
  project: string;
  transcript_source: string;
  n_sessions: number;
  target_skill_path: string;
  reviewed: boolean;
  tasks: TaskRecord[];
}

export function writeTasksFile(file: string, content: Omit<TasksFile, 'format'>): void {
  writeJsonAtomic(file, { format: TASKS_FORMAT, ...content });
}

const HeadSchema = z
  .object({
    format: z.string().optional(),
    project: z.string().default(''),
    transcript_source: z.string().default(''),
    n_sessions: z.number().default(0),
    target_skill_path: z.string().default(''),
    reviewed: z.boolean().default(false),
    tasks: z.array(z.unknown()),
  })
  .loose();

export interface LoadedTasks extends Omit<TasksFile, 'format'> {
  /** Doubts about rule judges (a shape-only judge, an unknown op): shown, not fatal. */
  warnings: string[];
}

export function readTasksFile(file: string, split: { val: number; test: number; seed: number }): LoadedTasks {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new UserError(`${file}: cannot read the tasks file: ${(err as Error).message}`);
  }
  const head = HeadSchema.safeParse(Array.isArray(raw) ? { tasks: raw } : raw);
  if (!head.success)
    throw new UserError(
      `${file}: expected a tasks file (an object with "tasks", format ${TASKS_FORMAT}) or a list of tasks`,
    );
  if (head.data.format !== undefined && head.data.format !== TASKS_FORMAT)
    throw new UserError(`${file}: format '${head.data.format}' is not ${TASKS_FORMAT}`);
  const errors: string[] = [];
  const warnings: string[] = [];
  const tasks: TaskRecord[] = [];
  head.data.tasks.forEach((entry, i) => {
    const where = `tasks[${i}]`;
    if (!entry || typeof entry !== 'object' || Array.isArray(entry)) {
      errors.push(`${where}: not an object`);
      return;
    }
    const parsed = TaskRecordSchema.safeParse(entry);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      errors.push(`${where}.${issue.path.join('.') || '?'}: ${issue.message}`);
      return;
    }
    const task = parsed.data;
    if (task.reference_kind === 'rule') {
      const v = validateChecks(task.judge);
      errors.push(...v.errors.map((e) => `${where} (${task.id}): ${e}`));
      warnings.push(...v.warnings.map((w) => `${where} (${task.id}): ${w}`));
    }
    tasks.push(task);
  });
  if (errors.length)
    throw new UserError(
      `${file}: ${errors.length === 1 ? 'a task is' : 'tasks are'} not valid:\n  ${errors.join('\n  ')}`,
    );
  const ids = new Set<string>();
  for (const t of tasks) {
    if (ids.has(t.id)) throw new UserError(`${file}: two tasks have the id '${t.id}'`);
    ids.add(t.id);
  }
  // A file whose tasks all train (a hand-written one) gets its held-out tasks by hash.
  const explicit = tasks.some((t) => t.split !== 'train');
  const { tasks: _t, format: _f, ...meta } = head.data;
  return { ...meta, tasks: explicit || tasks.length < 2 ? tasks : assignSplits(tasks, split), warnings };
}
