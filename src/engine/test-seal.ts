/**
 * The test split under seal (`evaluation.audit`, check `sealed_test`): the first score of a skill
 * on it, for a target and a scorer, is sealed; a later run shows that figure instead of scoring
 * again, unless `evaluation.audit.rescore_test` asks to, and then the seal records the re-score.
 * A run always may score again what it sealed itself (a resumed final evaluation).
 */
import type { Trajectory } from '../envs/types.ts';
import { type Seal, sealKey } from '../audit/seal.ts';
import { packageHash, type SkillPackage } from '../skill/package/package.ts';
import type { RunContext } from './context.ts';

/** What a scoring of the test split gives: per task type, and what a task cost. */
export interface TestFigure<B> {
  buckets: Record<string, B>;
  cost?: unknown;
}

/** How a test figure relates to its seal, for `summary.json`. */
export interface SealNote {
  key: string;
  /** `sealed`: scored and sealed now; `shown`: the sealed figure, not scored again; `rescored`: scored again on request. */
  status: 'sealed' | 'shown' | 'rescored';
  sealed_at: string;
  sealed_by: string;
  sealed_hard: number | null;
  /** The figure this run measured, when it scored (a re-score may differ from the seal). */
  hard?: number | null;
}

type SealContext = Pick<RunContext, 'audit' | 'dir' | 'events' | 'test'>;

/**
 * The test figure of `skill`: scored by `score` (which returns the trajectories it scored), or
 * the sealed one. `what` names the skill on the console.
 */
export async function testUnderSeal<B>(
  ctx: SealContext,
  skill: SkillPackage,
  what: string,
  score: () => Promise<TestFigure<B> & { trajectories: (Trajectory | undefined)[] }>,
): Promise<TestFigure<B> & { seal?: SealNote }> {
  const seals = ctx.audit?.seals;
  if (!seals) return score();
  const { key, parts } = sealKey({
    split: ctx.test,
    skillHash: packageHash(skill),
    target: seals.target,
    scorer: seals.scorer,
  });
  const run = ctx.dir.root;
  const note = (s: Seal, status: SealNote['status'], hard?: number | null): SealNote => ({
    key,
    status,
    sealed_at: s.sealed_at,
    sealed_by: s.run,
    sealed_hard: s.hard,
    ...(hard !== undefined ? { hard } : {}),
  });
  const held = seals.store.heldElsewhere(key, run, seals.rescore);
  if (held) {
    ctx.events.info(
      `[audit] the ${what}'s test figure is sealed: hard ${held.hard ?? '-'}, scored by ${held.run} at ${held.sealed_at}; not scored again (evaluation.audit.rescore_test=true scores it again, and the seal records that)`,
    );
    const result = held.result as { buckets: Record<string, B>; cost?: unknown };
    return { buckets: result.buckets, ...(result.cost ? { cost: result.cost } : {}), seal: note(held, 'shown') };
  }
  const { trajectories, ...figure } = await score();
  const recorded = seals.store.record(key, parts, run, figure, trajectories);
  if (recorded.status === 'sealed') return { ...figure, seal: note(recorded.seal, 'sealed') };
  const same = recorded.sameAnswers ? 'the same answers' : 'different answers';
  ctx.events.warn(
    `[audit] the ${what}'s test split was scored again (evaluation.audit.rescore_test): hard ${recorded.hard ?? '-'} with ${same}; the sealed figure stays ${recorded.seal.hard ?? '-'} (re-score ${recorded.seal.rescored.length} of that seal)`,
  );
  return { ...figure, seal: note(recorded.seal, 'rescored', recorded.hard) };
}
