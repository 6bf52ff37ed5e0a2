/**
 * The audit of a finished run, for `summary.json`: the best skill's lint against the initial
 * skill (what training added: `best_skill_audit.json` has the evidence) and how each test figure
 * stands to its seal.
 */
import { auditRecord, describeReport } from '../audit/audit.ts';
import type { RunContext, TrainState } from './context.ts';
import type { SealNote } from './test-seal.ts';

export function auditSummary(
  ctx: Pick<RunContext, 'audit' | 'dir' | 'events' | 'skillInit'>,
  state: Pick<TrainState, 'best'>,
  seals: Record<string, SealNote | undefined>,
): { audit?: Record<string, unknown> } {
  if (!ctx.audit) return {};
  const report = ctx.audit.lint.lint(state.best, ctx.skillInit);
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
