/**
 * The test split under seal (`evaluation.audit`, check `sealed_test`): the first score of a skill
 * on it, for a target and a scorer, is sealed; a later run shows that figure instead of scoring
 * again, unless `evaluation.audit.rescore_test` asks to, and then the seal records the re-score.
 * A run always may score again what it sealed itself (a resumed final evaluation).
 */
import type { Trajectory } from '../envs/types.ts';
import { answersHash, type Seal, sealedItems, sealKey } from '../audit/seal.ts';
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

const overallHard = (buckets: Record<string, unknown>): number | null =>
  (buckets.overall as { hard_acc?: number } | undefined)?.hard_acc ?? null;

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
  const seal = seals.store.read(key);
  const run = ctx.dir.root;
  const note = (s: Seal, status: SealNote['status'], hard?: number | null): SealNote => ({
    key,
    status,
    sealed_at: s.sealed_at,
    sealed_by: s.run,
    sealed_hard: s.hard,
    ...(hard !== undefined ? { hard } : {}),
  });
  if (seal && seal.run !== run && !seals.rescore) {
    ctx.events.info(
      `[audit] the ${what}'s test figure is sealed: hard ${seal.hard ?? '-'}, scored by ${seal.run} at ${seal.sealed_at}; not scored again (evaluation.audit.rescore_test=true scores it again, and the seal records that)`,
    );
    const result = seal.result as { buckets: Record<string, B>; cost?: unknown };
    return { buckets: result.buckets, ...(result.cost ? { cost: result.cost } : {}), seal: note(seal, 'shown') };
  }
  const scored = await score();
  const { trajectories, ...figure } = scored;
  const hard = overallHard(figure.buckets);
  const answers = answersHash(
    trajectories.flatMap((t) => (t ? [{ id: t.id, predicted: t.predicted, hard: t.hard, soft: t.soft }] : [])),
  );
  if (!seal || seal.run === run) {
    const made = seals.store.seal({
      key,
      ...parts,
      sealed_at: seal?.sealed_at ?? new Date().toISOString(),
      run,
      result: figure,
      hard,
      answers_sha256: answers,
      items: sealedItems(trajectories),
    });
    return { ...figure, seal: note(made, 'sealed') };
  }
  const after = seals.store.rescored(key, { at: new Date().toISOString(), run, hard, answers_sha256: answers });
  const same = answers === seal.answers_sha256 ? 'the same answers' : 'different answers';
  ctx.events.warn(
    `[audit] the ${what}'s test split was scored again (evaluation.audit.rescore_test): hard ${hard ?? '-'} with ${same}; the sealed figure stays ${seal.hard ?? '-'} (re-score ${after.rescored.length} of that seal)`,
  );
  return { ...figure, seal: note(seal, 'rescored', hard) };
}
