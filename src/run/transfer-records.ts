/** `summary.json`'s `transfer`: the initial and best skills scored on other targets. */
import { z } from 'zod';

const PairedTestSchema = z.object({
  n: z.number(),
  diff: z.number(),
  ci: z.tuple([z.number(), z.number()]).optional(),
  p: z.number().nullable(),
  method: z.enum(['mcnemar_exact', 'paired_t', 'none']),
  discordant: z.object({ baseline_only: z.number(), candidate_only: z.number() }).optional(),
});

/** `summary.json`'s `transfer`: the initial and best skills on each of `evaluation.transfer_targets`, as `skillopt eval` scores them. */
export const TransferSchema = z.object({
  split: z.string(),
  n_items: z.number(),
  /** Where the rollouts, `eval_summary.json` and the calls are, in the run directory. */
  dir: z.string(),
  rows: z.array(
    z.object({
      target: z.string(),
      initial: z.object({
        hard: z.number(),
        soft: z.number(),
        hard_ci95: z.tuple([z.number(), z.number()]).optional(),
        n: z.number(),
      }),
      best: z.object({
        hard: z.number(),
        soft: z.number(),
        hard_ci95: z.tuple([z.number(), z.number()]).optional(),
        n: z.number(),
      }),
      /** The best skill against the initial one on the same items. */
      hard: PairedTestSchema,
      soft: PairedTestSchema,
    }),
  ),
});
export type Transfer = z.infer<typeof TransferSchema>;
