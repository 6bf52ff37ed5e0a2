/**
 * Which files of a skill package the rollouts used: per file, how many rollouts read it and how
 * many ran it (each rollout counted once per file, whatever the number of its calls). Read from
 * the traces the target leaves (`AgentTrace.package`); rollouts that could not run are left out.
 */
import type { Trajectory } from '../../envs/types.ts';

export interface FileUse {
  read: number;
  ran: number;
}

export interface PackageUsage {
  /** The rollouts counted: those that ran. */
  rollouts: number;
  /** By package path; only files some rollout used. */
  files: Record<string, FileUse>;
}

export function packageUsage(trajectories: readonly (Trajectory | undefined)[]): PackageUsage {
  const files = new Map<string, FileUse>();
  let rollouts = 0;
  for (const t of trajectories) {
    if (!t || t.error) continue;
    rollouts++;
    const read = new Set<string>();
    const ran = new Set<string>();
    for (const trace of t.traces ?? []) {
      for (const p of trace.package?.read ?? []) read.add(p);
      for (const p of trace.package?.ran ?? []) ran.add(p);
    }
    for (const p of new Set([...read, ...ran])) {
      const use = files.get(p) ?? { read: 0, ran: 0 };
      if (read.has(p)) use.read++;
      if (ran.has(p)) use.ran++;
      files.set(p, use);
    }
  }
  const sorted = [...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return { rollouts, files: Object.fromEntries(sorted) };
}

/** "read by 3, ran by 1 of 8 rollouts", or '' when no rollout used the file. */
export function useText(use: FileUse | undefined, rollouts: number): string {
  if (!use || (!use.read && !use.ran)) return '';
  const parts = [use.read ? `read by ${use.read}` : '', use.ran ? `ran by ${use.ran}` : ''].filter(Boolean);
  return `${parts.join(', ')} of ${rollouts} rollout${rollouts === 1 ? '' : 's'}`;
}
