/**
 * `skillopt eval` on the test split under the seal (`evaluation.audit`, check `sealed_test`): a
 * (skill, target) whose test figure another run sealed is not scored again unless asked
 * (`--rescore-test`): its cell shows the sealed figure, item by item, as the final evaluation
 * of a training run does. A figure scored here is sealed, or recorded as a re-score.
 */
import { SealStore, sealKey } from '../../audit/seal.ts';
import { defaultSealDir, scorerIdentity, targetIdentity } from '../../audit/run-audit.ts';
import type { Config, RoleConfig } from '../../config/schema.ts';
import { buckets } from '../../engine/final-evaluation.ts';
import type { Item, Trajectory } from '../../envs/types.ts';
import { UserError } from '../../errors.ts';
import { packageHash, type SkillPackage } from '../../skill/package/package.ts';

/** A cell shown from its seal: the sealed scores as trajectories (one repeat), and what a task cost then. */
export interface SealedCell {
  trajectories: (Trajectory | undefined)[];
  by: string;
  at: string;
  cost?: unknown;
  note: string;
}

export interface EvalSeals {
  /** Refuses, before anything is written, a sealed figure that cannot be shown item by item (and is not to be scored again). */
  refuseSealed(skills: { label: string; pkg: SkillPackage }[]): void;
  /** The cell's sealed figure, when another run sealed it and no re-score is asked. */
  shown(t: number, skill: SkillPackage): SealedCell | undefined;
  /** A cell's figure (its first repeat): sealed now, or recorded as a re-score of another run's seal. */
  record(t: number, skill: SkillPackage, trajectories: (Trajectory | undefined)[], cost: unknown): string | undefined;
}

export function evalSeals(o: {
  config: Config;
  split: string;
  /** Each target's role, in the order of the cells; a target built without one (a library caller's model) by its id. */
  roles: (RoleConfig | { id: string })[];
  items: Item[];
  out: string;
  rescore: boolean;
  types: string[];
}): EvalSeals | undefined {
  const { config } = o;
  const audit = config.evaluation.audit;
  if (!/^test$/i.test(o.split.trim()) || !audit.checks.includes('sealed_test')) return undefined;
  const store = new SealStore(audit.seal_dir || defaultSealDir());
  const defaults = { backend: config.model.backend, effort: config.model.reasoning_effort };
  const scorer = scorerIdentity(config.env);
  const identity = (t: number) => {
    const role = o.roles[t]!;
    return 'id' in role ? role : targetIdentity(role, defaults);
  };
  const name = (t: number) => {
    const role = o.roles[t]!;
    return 'id' in role ? role.id : `${role.backend}:${role.model}`;
  };
  const keyOf = (t: number, skill: SkillPackage) =>
    sealKey({ split: o.items, skillHash: packageHash(skill), target: identity(t), scorer });
  const rescore = o.rescore || audit.rescore_test;
  return {
    refuseSealed(skills) {
      const sealed = o.roles.flatMap((_, t) =>
        skills.flatMap((s) => {
          const seal = store.heldElsewhere(keyOf(t, s.pkg).key, o.out, rescore);
          return seal && seal.items.length !== o.items.length
            ? [`${s.label} on ${name(t)}: hard ${seal.hard ?? '-'}, sealed by ${seal.run} at ${seal.sealed_at}`]
            : [];
        }),
      );
      if (sealed.length)
        throw new UserError(
          `the test split is scored once per skill and target, and these figures are sealed without their items' scores: ${sealed.join('; ')}. Evaluate on --split val, or pass --rescore-test to score them again (the seal records it)`,
        );
    },
    shown(t, skill) {
      const seal = store.heldElsewhere(keyOf(t, skill).key, o.out, rescore);
      if (!seal || seal.items.length !== o.items.length) return undefined;
      const trajectories = seal.items.map((s) =>
        s ? { id: s.id, hard: s.hard, soft: s.soft, ...(s.type ? { taskType: s.type } : {}) } : undefined,
      );
      const cost = (seal.result as { cost?: unknown }).cost;
      return {
        trajectories,
        by: seal.run,
        at: seal.sealed_at,
        ...(cost ? { cost } : {}),
        note: `the sealed test figure, scored by ${seal.run} at ${seal.sealed_at}; not scored again (--rescore-test scores it again, and the seal records that)`,
      };
    },
    record(t, skill, trajectories, cost) {
      const { key, parts } = keyOf(t, skill);
      const figure = { buckets: buckets(o.items, trajectories, o.types), ...(cost ? { cost } : {}) };
      const recorded = store.record(key, parts, o.out, figure, trajectories);
      return recorded.status === 'sealed'
        ? `test figure sealed (${store.dir})`
        : `scored again (--rescore-test): the sealed figure stays ${recorded.seal.hard ?? '-'} (re-score ${recorded.seal.rescored.length} of that seal)`;
    },
  };
}
