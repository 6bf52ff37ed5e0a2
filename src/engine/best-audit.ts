/**
 * The audit of a finished run, for `summary.json`: the best skill against the initial one (what
 * training added: its lint, and its gain on the selection split under the second scorer and the
 * probes; `best_skill_audit.json` has the evidence) and how each test figure stands to its seal.
 */
import { auditRecord, type CheckResult, describeReport, withChecks } from '../audit/audit.ts';
import type { RunContext, TrainState } from './context.ts';
import { measureGain } from './gain-audit.ts';
import type { SealNote } from './test-seal.ts';

/** The gain checks of the best skill over the initial one, for `auditSummary` (their probes under `best_skill_probes/`). */
export async function bestGainChecks(
  ctx: Pick<RunContext, 'audit' | 'dir' | 'selection' | 'settings' | 'rollouts' | 'stop' | 'skillInit'>,
  state: Pick<TrainState, 'best'>,
): Promise<CheckResult[]> {
  return (await measureGain(ctx, ctx.skillInit, state.best, ctx.dir.path('best_skill_probes'))) ?? [];
}

export function auditSummary(
  ctx: Pick<RunContext, 'audit' | 'dir' | 'events' | 'skillInit'>,
  state: Pick<TrainState, 'best'>,
  seals: Record<string, SealNote | undefined>,
  gain: CheckResult[] = [],
): { audit?: Record<string, unknown> } {
  if (!ctx.audit) return {};
  const report = withChecks(ctx.audit.lint.lint(state.best, ctx.skillInit), gain);
  ctx.dir.writeJson(ctx.dir.path('best_skill_audit.json'), report);
  for (const line of describeReport(report)) ctx.events.warn(`[audit] best skill: ${line}`);
  const shown = Object.fromEntries(Object.entries(seals).filter(([, s]) => s !== undefined));
  return {
    audit: {
      best: auditRecord(report),
      ...(Object.keys(shown).length ? { test_seals: shown } : {}),
    },
  };
}
