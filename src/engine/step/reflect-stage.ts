/**
 * ② Reflect: the analysts' patches, as their minibatches filled during the rollouts; ③ the merge
 * starts on them as they come back. ③ Aggregate: the merged list of changes.
 */
import type { Trajectory } from '../../envs/types.ts';
import { PAYLOAD } from '../../protocol/optimizer.ts';
import { count } from '../../util/plural.ts';
import { round } from '../../util/round.ts';
import { computeScore } from '../scoring/means.ts';
import type { Merged } from '../stages/aggregate.ts';
import type { AnalystResult } from '../stages/reflect.ts';
import { startMerge } from './reflection.ts';
import type { Rolled } from './rollout-stage.ts';
import type { StepScope } from './step-scope.ts';
import { changesLabel, ofChanges } from './wording.ts';
import { packageUsage } from '../stages/package-usage.ts';
import { activationMetrics, activationScore } from '../../envs/triggers/metrics.ts';

export interface Reflected {
  analysts: AnalystResult[];
  /** Execution-lapse notes for the appendix (skill-aware reflection). */
  notes: string[];
  /** The merge, started as soon as its first groups of analysts finished. */
  merging: Promise<Merged>;
  nFail: number;
  nSucc: number;
}

const patchCount = (rs: AnalystResult[], source: AnalystResult['source']) =>
  rs.filter((r) => r.source === source && r.patch).length;

export async function reflectStage(s: StepScope, rolled: Rolled): Promise<Reflected> {
  const { settings, opt } = s.ctx;
  const calls = rolled.reflection.map(({ reflector }) => reflector.close());
  const failureCalls = calls.flatMap((c) => c.failure);
  const successCalls = calls.flatMap((c) => c.success);
  s.stages.start(
    'reflect',
    `${count(failureCalls.length, 'failure minibatch', 'failure minibatches')}, ${count(successCalls.length, 'success minibatch', 'success minibatches')} ` +
      `(up to ${settings.reflect.minibatchSize} trajectories each; at most ${settings.reflect.perPatch} ${changesLabel(settings.mode)} per patch)`,
  );
  // The combined strategy ranks within the step's edit budget when it is known before the merge.
  const merging = startMerge(s.ctx, { opt, skill: s.skill, metaSkill: s.plan.metaSkill }, calls, s.budget?.known());
  // Awaited by the aggregate stage; if the step fails first, its rejection must not go unhandled.
  merging.catch(() => {});
  const perBatch = await Promise.all(
    rolled.reflection.map(async ({ batch }, a) => ({
      batch,
      trajectories: rolled.perBatch[a] ?? [],
      analysts: await Promise.all([...(calls[a]?.failure ?? []), ...(calls[a]?.success ?? [])]),
    })),
  );
  const analysts = perBatch.flatMap((b) => b.analysts);
  if (analysts.length > 0 && analysts.every((r) => r.failed)) {
    throw new Error(
      `every optimizer call of step ${s.step} failed (${analysts.length} analyst calls; see the warnings above). ` +
        'Check the optimizer model and its endpoint, then resume the run',
    );
  }
  const nFail = patchCount(analysts, 'failure');
  const nSucc = patchCount(analysts, 'success');
  s.stages.finish('reflect', `${count(nFail, 'patch', 'patches')} from failures, ${nSucc} from successes`, {
    failure_patches: nFail,
    success_patches: nSucc,
  });
  s.record.rollout({
    rollout_hard: round(rolled.score.hard, 6),
    rollout_soft: round(rolled.score.soft, 6),
    rollout_n: rolled.trajectories.length,
    rollout_errors: rolled.score.errors,
    accumulation_batches: perBatch.map(({ batch, trajectories, analysts: ofBatch }) => {
      const score = computeScore(trajectories.filter((t): t is Trajectory => t !== undefined));
      return {
        batch_idx: batch.index,
        batch_seed: batch.seed,
        n_envs: batch.items.length,
        hard: round(score.hard, 6),
        soft: round(score.soft, 6),
        n_failure_patches: patchCount(ofBatch, 'failure'),
        n_success_patches: patchCount(ofBatch, 'success'),
      };
    }),
    n_patches: nFail + nSucc,
    n_failure_patches: nFail,
    n_success_patches: nSucc,
    ...(s.package.files?.size ? { package_usage: packageUsage(rolled.trajectories) } : {}),
    ...(s.target === 'description' ? { step_target: 'description' as const } : {}),
    ...activationOfRollouts(rolled.trajectories),
  });
  return { analysts, notes: analysts.flatMap((r) => r.notes), merging, nFail, nSucc };
}

function activationOfRollouts(trajectories: Trajectory[]) {
  const m = activationMetrics(trajectories);
  return m ? { activation_train: activationScore(m) } : {};
}

export async function aggregateStage(s: StepScope, reflected: Reflected): Promise<Merged> {
  const { mode, reflect } = s.ctx.settings;
  s.stages.start(
    'aggregate',
    `failure=${reflected.nFail} success=${reflected.nSucc} (group size ${reflect.mergeGroupSize})`,
  );
  const merged = await reflected.merging;
  s.files.write('merged_patch.json', { reasoning: merged.reasoning, [PAYLOAD[mode].key]: merged.items });
  s.stages.finish('aggregate', `merged into ${ofChanges(mode, merged.items.length)}`);
  if (merged.items.length === 0) s.ctx.events.info('[skip] no usable patches: skill unchanged');
  return merged;
}
