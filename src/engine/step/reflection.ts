/**
 * A step's reflection as it streams: one reflector per batch, fed by its rollouts as they finish,
 * and the merge of their patches started as the analysts' calls come back. The step uses it, and
 * so does work run ahead of the next step (`pipeline/`), with its own inputs.
 */
import type { StepBufferEntry } from '../../protocol/optimizer.ts';
import { type Batch, reflectionOrder } from '../batches.ts';
import type { RunContext } from '../context.ts';
import type { OptimizerContext } from '../optimizer-model/ask.ts';
import { aggregate, aggregateCombined, type Merged } from '../stages/aggregate.ts';
import { type AnalystCalls, type AnalystResult, Reflector } from '../stages/reflect.ts';
import type { PackageFiles } from '../../skill/package/package.ts';
import type { StepTarget } from '../settings.ts';

/** A batch's reflector, and the order in which it forms minibatches (which is also the order its rollouts start in). */
export interface Reflection {
  batch: Batch;
  reflector: Reflector;
  order: number[];
}

/** What a step's reflection works from. */
export interface ReflectionInputs {
  opt: OptimizerContext;
  skill: string;
  /** A package's other files (none for a single document). */
  files?: PackageFiles;
  memory: { entries: StepBufferEntry[]; text: string };
  batches: Batch[];
  metaSkill: string;
  /** Where batch a's analyst replies go (none: not written). */
  patchesDir?: (a: number) => string;
  /** What the step edits (`train.targets`): a description step's analysts propose its description. */
  target: StepTarget;
}

export type ReflectionContext = Pick<RunContext, 'settings' | 'env' | 'analystLimit'>;

/** One reflector per batch, fed by its rollouts as they finish. */
export function reflectors(ctx: ReflectionContext, inputs: ReflectionInputs): Reflection[] {
  const { settings, env, analystLimit } = ctx;
  return inputs.batches.map((b, a) => {
    const reflect = {
      ctx: inputs.opt,
      skill: inputs.skill,
      ...(inputs.files?.size ? { files: inputs.files } : {}),
      budget: inputs.target === 'description' ? settings.descriptionEdits : settings.reflect.perPatch,
      target: inputs.target,
      whenToUse: settings.whenToUse,
      minibatchSize: settings.reflect.minibatchSize,
      failureOnly: settings.reflect.failureOnly,
      stepBuffer: inputs.memory.entries,
      stepBufferText: inputs.memory.text,
      metaSkill: inputs.metaSkill,
      skillAware: settings.skillAware.on,
      appendixSource: settings.skillAware.appendixSource,
      analystGuide: env.analystGuide ?? '',
      traces: settings.reflect.traces,
      limit: analystLimit,
      patchesDir: inputs.patchesDir?.(a),
    };
    const order = reflectionOrder(b);
    return { batch: b, reflector: new Reflector(reflect, order), order };
  });
}

/**
 * The analysts' patches merged as they come, by the configured strategy. `budget`: the step's
 * edit budget when it is known before the merge (the combined strategy ranks within it).
 */
export function startMerge(
  ctx: ReflectionContext,
  inputs: Pick<ReflectionInputs, 'opt' | 'skill' | 'metaSkill'>,
  calls: AnalystCalls[],
  budget: number | undefined,
): Promise<Merged> {
  const { reflect } = ctx.settings;
  const asPatch = (p: Promise<AnalystResult>): Promise<Merged | null> =>
    p.then((r) => (r.patch ? { reasoning: r.patch.reasoning, items: r.patch.items } : null));
  const failure = calls.flatMap((c) => c.failure).map(asPatch);
  const success = calls.flatMap((c) => c.success).map(asPatch);
  const merge = {
    ctx: inputs.opt,
    skill: inputs.skill,
    metaSkill: inputs.metaSkill,
    groupSize: reflect.mergeGroupSize,
  };
  return reflect.mergeStrategy === 'combined'
    ? aggregateCombined(merge, failure, success, budget)
    : aggregate(merge, failure, success);
}
