/**
 * Sleep's memory across nights (`<state_dir>/state.json`): the night counter, when each project
 * was last harvested (the next night starts there), and a line of history per night. Written
 * atomically; an unreadable file is an error that names it, never silently reset.
 */
import path from 'node:path';
import { z } from 'zod';
import { UserError } from '../../errors.ts';
import { readJson, writeJsonAtomic } from '../../run/atomic.ts';

export const NightRecordSchema = z
  .object({
    night: z.number().int(),
    project: z.string(),
    started_at: z.string(),
    ended_at: z.string(),
    /** The night's folder ('' when nothing was staged). */
    dir: z.string(),
    outcome: z.enum(['staged', 'no_tasks', 'stopped', 'handoff_pending']),
    n_sessions: z.number().int(),
    n_tasks: z.number().int(),
    documents: z
      .array(
        z.object({
          name: z.string(),
          action: z.string(),
          baseline: z.number().nullable(),
          candidate: z.number().nullable(),
          accepted: z.boolean(),
        }),
      )
      .default([]),
    tokens: z.number().default(0),
    cost_usd: z.number().default(0),
    note: z.string().default(''),
  })
  .loose();
export type NightRecord = z.infer<typeof NightRecordSchema>;

export const StateSchema = z
  .object({
    version: z.literal(1).default(1),
    night: z.number().int().nonnegative().default(0),
    /** Per project: the time (ISO, UTC) up to which its sessions were harvested. */
    last_harvest: z.record(z.string(), z.string()).default({}),
    history: z.array(NightRecordSchema).default([]),
  })
  .loose();
export type SleepState = z.infer<typeof StateSchema>;

export const stateFile = (stateDir: string) => path.join(stateDir, 'state.json');

export function readState(stateDir: string): SleepState {
  const file = stateFile(stateDir);
  let raw: unknown;
  try {
    raw = readJson(file);
  } catch (err) {
    throw new UserError(`${file}: ${(err as Error).message}`);
  }
  const parsed = StateSchema.safeParse(raw ?? {});
  if (!parsed.success)
    throw new UserError(
      `${file}: not Sleep's state (${parsed.error.issues[0]!.path.join('.')}: ${parsed.error.issues[0]!.message}); move it away to start afresh`,
    );
  return parsed.data;
}

/** Keeps the last 200 nights of history. */
export function writeState(stateDir: string, state: SleepState): void {
  writeJsonAtomic(stateFile(stateDir), { ...state, history: state.history.slice(-200) });
}
