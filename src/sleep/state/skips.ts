/**
 * Nights that did not run because the machine was busy (a training run or an evaluation was
 * going, or another night or an adoption held the lock): the latest per project, in
 * `<state_dir>/skipped.json`, so `status` can say so. Kept out of `state.json`, which the night
 * holding the lock is about to write.
 */
import path from 'node:path';
import { z } from 'zod';
import { readJson, writeJsonAtomic } from '../../run/atomic.ts';

const SkipSchema = z.object({ at: z.string(), reason: z.string() });
export type Skip = z.infer<typeof SkipSchema>;
export const SkipsSchema = z.record(z.string(), SkipSchema);

export const skipsFile = (stateDir: string) => path.join(stateDir, 'skipped.json');

function readSkips(stateDir: string): Record<string, Skip> {
  let raw: unknown;
  try {
    raw = readJson(skipsFile(stateDir));
  } catch {
    return {};
  }
  const parsed = SkipsSchema.safeParse(raw ?? {});
  // A damaged note of a skipped night is not worth failing status for.
  return parsed.success ? parsed.data : {};
}

export function recordSkip(stateDir: string, project: string, reason: string, at = new Date()): void {
  writeJsonAtomic(skipsFile(stateDir), { ...readSkips(stateDir), [project]: { at: at.toISOString(), reason } });
}

export function lastSkip(stateDir: string, project: string): Skip | undefined {
  return readSkips(stateDir)[project];
}
