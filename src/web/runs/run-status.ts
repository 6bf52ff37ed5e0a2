/**
 * A run's status in one word and, when it ended short of finishing, why and how to resume it:
 * from what the run declares (runtime_state.json, its last terminal event), else from whether
 * the process holding its lock still runs.
 */
import type { z } from 'zod';
import type { RuntimeStateSchema } from '../../run/records.ts';
import { type EventFold, lockHolderAlive } from './run-state.ts';

export type RunStatus = 'running' | 'finished' | 'failed' | 'stopped' | 'interrupted' | 'incomplete';

/** "interrupted: …" said once: the trainer's message may already begin with its reason. */
function stoppedDetail(reason: string, message: string): string {
  return message.startsWith(`${reason}:`) || message.startsWith(reason) ? message : `${reason}: ${message}`;
}

export function runStatus(
  fold: EventFold,
  runtime: z.infer<typeof RuntimeStateSchema> | undefined,
  summary: unknown,
  layout: 'skillopt' | 'python',
  lock: Parameters<typeof lockHolderAlive>[0],
): { status: RunStatus; detail?: string } {
  const ended = fold.ended;
  const endedStatus =
    ended?.type === 'run_finished'
      ? 'finished'
      : ended?.type === 'run_stopped'
        ? 'stopped'
        : ended?.type === 'run_failed'
          ? 'failed'
          : undefined;
  const resumeWith =
    ended && 'resume_command' in ended && ended.resume_command ? `; to resume: ${ended.resume_command}` : '';
  const detail =
    ended?.type === 'run_stopped'
      ? `${stoppedDetail(ended.reason, ended.message)}${resumeWith}`
      : ended?.type === 'run_failed'
        ? `${ended.message}${resumeWith}`
        : undefined;
  const declared = runtime?.status ?? endedStatus;
  if (declared && declared !== 'running') return { status: declared, detail };
  if (declared === 'running' || (fold.started && !ended)) {
    if (lockHolderAlive(lock)) return { status: 'running' };
    const resume = fold.started?.resume_command;
    return {
      status: 'interrupted',
      detail: `the training process is gone without finishing; resume it with: ${resume ?? 'the same command and --resume <this run directory>'}`,
    };
  }
  if (summary) return { status: 'finished' };
  return {
    status: 'incomplete',
    detail:
      layout === 'python'
        ? 'no summary.json: still running, or stopped before the end'
        : 'no summary.json and no event log',
  };
}
