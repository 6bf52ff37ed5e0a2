/**
 * The sealed test: a skill is scored on the test split once per (split, skill, target, scorer).
 * The first score is sealed in a receipt (the hashes of what it measured and of its answers);
 * a later run that would score the same skill again shows the sealed figure instead, unless it
 * asks to re-score, and then the receipt records the re-score beside the sealed figure. So a
 * test figure cannot be drawn again and again until it looks good, on this machine.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { z } from 'zod';
import type { Trajectory } from '../envs/types.ts';
import { readJson, writeJsonAtomic } from '../run/atomic.ts';

const sha256 = (value: unknown) =>
  createHash('sha256')
    .update(typeof value === 'string' ? value : JSON.stringify(value))
    .digest('hex');

/** What a test figure measured: each part hashed, so a receipt can be checked against a run. */
export interface SealSubject {
  /** The test split's items. */
  split: unknown[];
  skillHash: string;
  /** What answers: the target's model and the settings that change its answers. */
  target: unknown;
  /** What scores: the env, its scorer and how it reads answers. */
  scorer: unknown;
}

export const RescoreSchema = z.object({
  at: z.string(),
  run: z.string(),
  hard: z.number().nullable(),
  answers_sha256: z.string(),
});

export const SealSchema = z.object({
  key: z.string(),
  split_sha256: z.string(),
  skill_hash: z.string(),
  target_sha256: z.string(),
  scorer_sha256: z.string(),
  sealed_at: z.string(),
  /** The run directory that scored it. */
  run: z.string(),
  /** The test figure as that run wrote it (per task type), and what a task cost. */
  result: z.record(z.string(), z.unknown()),
  /** The hard score over the whole split. */
  hard: z.number().nullable(),
  /** The hash of the scored answers (item, prediction, score), so two scorings can be compared. */
  answers_sha256: z.string(),
  /** Each item's score, in the split's order (null: it could not be run), so a later evaluation can show the figure item by item. */
  items: z
    .array(z.object({ id: z.string(), type: z.string().optional(), hard: z.number(), soft: z.number() }).nullable())
    .default([]),
  rescored: z.array(RescoreSchema).default([]),
});
export type Seal = z.infer<typeof SealSchema>;

export function sealKey(s: SealSubject): {
  key: string;
  parts: Pick<Seal, 'split_sha256' | 'skill_hash' | 'target_sha256' | 'scorer_sha256'>;
} {
  const parts = {
    split_sha256: sha256(s.split),
    skill_hash: s.skillHash,
    target_sha256: sha256(s.target),
    scorer_sha256: sha256(s.scorer),
  };
  return { key: sha256(parts).slice(0, 32), parts };
}

/** What a seal keeps of each scored trajectory (in the split's order): its item, type and scores. */
export function sealedItems(
  trajectories: readonly ({ id: string; taskType?: string; hard: number; soft: number; error?: unknown } | undefined)[],
): Seal['items'] {
  return trajectories.map((t) =>
    t && !t.error ? { id: t.id, ...(t.taskType ? { type: t.taskType } : {}), hard: t.hard, soft: t.soft } : null,
  );
}

/** The hash of scored answers, in item order. */
export function answersHash(answers: { id: string; predicted?: string; hard: number; soft: number }[]): string {
  return sha256(answers.map((a) => [a.id, a.predicted ?? '', a.hard, a.soft]));
}

export class SealStore {
  constructor(readonly dir: string) {}

  private file(key: string): string {
    return path.join(this.dir, `${key}.json`);
  }

  read(key: string): Seal | undefined {
    const raw = readJson(this.file(key));
    if (raw === undefined) return undefined;
    const parsed = SealSchema.safeParse(raw);
    if (!parsed.success)
      throw new Error(
        `${this.file(key)}: not a test seal (${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}); move it away to seal again`,
      );
    return parsed.data;
  }

  /** The seal another run made of this figure, which a run shows instead of scoring it; none when `rescore` asks to score. */
  heldElsewhere(key: string, run: string, rescore: boolean): Seal | undefined {
    const seal = rescore ? undefined : this.read(key);
    return seal && seal.run !== run ? seal : undefined;
  }

  /**
   * A figure `run` has just scored: sealed when no other run sealed it (a run may seal its own
   * again, as a resumed one does), else recorded beside the sealed figure as a re-score.
   */
  record(
    key: string,
    parts: Pick<Seal, 'split_sha256' | 'skill_hash' | 'target_sha256' | 'scorer_sha256'>,
    run: string,
    result: { buckets: Record<string, unknown>; cost?: unknown },
    trajectories: readonly (Trajectory | undefined)[],
  ): { status: 'sealed' | 'rescored'; seal: Seal; hard: number | null; sameAnswers: boolean } {
    const hard = (result.buckets.overall as { hard_acc?: number } | undefined)?.hard_acc ?? null;
    const answers = answersHash(
      trajectories.flatMap((t) => (t ? [{ id: t.id, predicted: t.predicted, hard: t.hard, soft: t.soft }] : [])),
    );
    const before = this.read(key);
    const now = new Date().toISOString();
    if (!before || before.run === run) {
      const seal: Seal = {
        key,
        ...parts,
        sealed_at: before?.sealed_at ?? now,
        run,
        result,
        hard,
        answers_sha256: answers,
        items: sealedItems(trajectories),
        rescored: [],
      };
      writeJsonAtomic(this.file(key), seal);
      return { status: 'sealed', seal, hard, sameAnswers: true };
    }
    const seal = { ...before, rescored: [...before.rescored, { at: now, run, hard, answers_sha256: answers }] };
    writeJsonAtomic(this.file(key), seal);
    return { status: 'rescored', seal, hard, sameAnswers: answers === before.answers_sha256 };
  }
}
