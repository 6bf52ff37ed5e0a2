/**
 * ① Rollout: the target runs the step's batches under its skill. Each batch's items start in the
 * order its reflector consumes them, and each result feeds the reflector as it finishes, so the
 * first analyst calls leave while the rest of the batch still runs.
 */
import path from 'node:path';
import type { Trajectory } from '../../envs/types.ts';
import { computeScore, type MeanScore } from '../scoring/means.ts';
import { type Reflection, reflectors } from './reflection.ts';
import type { StepScope } from './step-scope.ts';

export interface Rolled {
  trajectories: Trajectory[];
  score: MeanScore;
  /** Per batch, its trajectories (undefined: never started). */
  perBatch: (Trajectory | undefined)[][];
  /** The reflectors the rollouts fed: the reflect stage closes them. */
  reflection: Reflection[];
}

export async function rolloutStage(s: StepScope): Promise<Rolled> {
  const { batches, metaSkill } = s.plan;
  const reflection = reflectors(s.ctx, {
    opt: s.ctx.opt,
    skill: s.skill,
    ...(s.package.files?.size ? { files: s.package.files } : {}),
    memory: s.memory,
    batches,
    metaSkill,
    patchesDir: (a) => path.join(s.files.batch(a), 'patches'),
    target: s.target,
  });
  const nItems = batches.reduce((n, b) => n + b.items.length, 0);
  s.stages.start('rollout', `train items=${nItems}`, { batch_seed: batches.map((b) => b.seed).join(',') });
  const progress = s.stages.progress('rollout');
  let done = 0;
  const rolled = await Promise.all(
    reflection.map(({ batch, reflector, order }, a) =>
      s.ctx.rollouts.run(s.package, batch.items, {
        seed: batch.seed,
        training: true,
        order,
        dir: path.join(s.files.batch(a), 'rollout'),
        onResult: (t, i) => reflector.add(i, t),
        onProgress: () => progress(++done, nItems),
      }),
    ),
  );
  const trajectories = rolled.flatMap((r) => r.trajectories).filter((t): t is Trajectory => t !== undefined);
  const score = computeScore(trajectories);
  const first = trajectories[0];
  if (first && score.n === 0) {
    throw new Error(
      `every rollout of step ${s.step} failed (${first.error?.kind}: ${first.error?.message}); check the target model and its endpoint`,
    );
  }
  s.stages.finish(
    'rollout',
    `hard=${score.hard.toFixed(4)} soft=${score.soft.toFixed(4)}${score.errors ? ` errors=${score.errors}` : ''}`,
  );
  return { trajectories, score, perBatch: rolled.map((r) => r.trajectories), reflection };
}
