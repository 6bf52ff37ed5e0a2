/**
 * `skillopt eval` on the test split under the seal (`evaluation.audit`, check `sealed_test`): a
 * (skill, target) whose test figure another run sealed is not scored again unless asked
 * (`--rescore-test`), and a figure scored here is sealed, or recorded as a re-score, as the
 * final evaluation of a training run does.
 */
import { answersHash, SealStore, sealKey } from '../../audit/seal.ts';
import { defaultSealDir, scorerIdentity, targetIdentity } from '../../audit/run-audit.ts';
import type { Config, RoleConfig } from '../../config/schema.ts';
import { buckets } from '../../engine/final-evaluation.ts';
import type { Item, Trajectory } from '../../envs/types.ts';
import { UserError } from '../../errors.ts';
import { packageHash, type SkillPackage } from '../../skill/package/package.ts';

export interface EvalSeals {
  /** Refuses, before anything is written, when a cell's test figure is sealed by another run and no re-score is asked. */
  refuseSealed(skills: { label: string; pkg: SkillPackage }[]): void;
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
      if (rescore) return;
      const sealed = o.roles.flatMap((_, t) =>
        skills.flatMap((s) => {
          const seal = store.read(keyOf(t, s.pkg).key);
          return seal && seal.run !== o.out
            ? [`${s.label} on ${name(t)}: hard ${seal.hard ?? '-'}, sealed by ${seal.run} at ${seal.sealed_at}`]
            : [];
        }),
      );
      if (sealed.length)
        throw new UserError(
          `the test split is scored once per skill and target, and these figures are sealed: ${sealed.join('; ')}. Evaluate on --split val, or pass --rescore-test to score them again (the seal records it)`,
        );
    },
    record(t, skill, trajectories, cost) {
      const { key, parts } = keyOf(t, skill);
      const figure = { buckets: buckets(o.items, trajectories, o.types), ...(cost ? { cost } : {}) };
      const hard = (figure.buckets.overall?.hard_acc as number | undefined) ?? null;
      const answers = answersHash(
        trajectories.flatMap((x) => (x ? [{ id: x.id, predicted: x.predicted, hard: x.hard, soft: x.soft }] : [])),
      );
      const seal = store.read(key);
      const now = new Date().toISOString();
      if (!seal || seal.run === o.out) {
        store.seal({
          key,
          ...parts,
          sealed_at: seal?.sealed_at ?? now,
          run: o.out,
          result: figure,
          hard,
          answers_sha256: answers,
        });
        return `test figure sealed (${store.dir})`;
      }
      const after = store.rescored(key, { at: now, run: o.out, hard, answers_sha256: answers });
      return `scored again (--rescore-test): the sealed figure stays ${seal.hard ?? '-'} (re-score ${after.rescored.length} of that seal)`;
    },
  };
}
