/** `evaluation.audit`: the checks a gain must pass before it is trusted (`src/audit/`). */
import { z } from 'zod';

/**
 * `leak`: the skill carries items of the data (answers, ids, requests copied at length).
 * `scorer_gaming`: it tells the target to write what a rule scorer checks.
 * `second_scorer`: an accept's gain, scored again by a scorer independent of training's, mostly vanishes.
 * `probes`: an accept's gain does not survive a change of the request's surface form.
 * `sealed_test`: the test split is scored once per skill and target; later runs show that figure.
 */
export const AUDIT_CHECKS = ['leak', 'scorer_gaming', 'second_scorer', 'probes', 'sealed_test'] as const;
export type AuditCheck = (typeof AUDIT_CHECKS)[number];

/** How a probe recasts a request without changing what it asks (`src/audit/probes.ts`). */
export const PROBE_FORMS = ['reframe', 'wrap', 'delimiters', 'shuffle_options'] as const;
export type ProbeForm = (typeof PROBE_FORMS)[number];

export const AuditSchema = z
  .object({
    /** The checks that run; [] turns the audit off. */
    checks: z.array(z.enum(AUDIT_CHECKS)).default([...AUDIT_CHECKS]),
    /** What a flag (evidence worth a second look, such as text that mirrors the scorer) does to a candidate: `warn` or `reject`. */
    on_flag: z.enum(['warn', 'reject']).default('warn'),
    /** What a fail (such as a leak of an item of the data) does to a candidate: `reject` or `warn`. */
    on_fail: z.enum(['reject', 'warn']).default('reject'),
    second_scorer: z
      .object({
        /** Share of the training scorer's gain that must remain under the second scorer; less is a flag. */
        min_kept: z.number().min(0).max(1).default(0.9),
        /** At most this many of the items that decided an accept are scored again (a judge call each, per skill). */
        max_items: z.number().int().positive().default(4),
      })
      .strict()
      .default({ min_kept: 0.9, max_items: 4 }),
    probes: z
      .object({
        /** At most this many variants of the items an accept improved, run under both skills (several forms of an item when few improved). */
        items: z.number().int().positive().default(8),
        /** The forms tried, in turn. */
        forms: z
          .array(z.enum(PROBE_FORMS))
          .min(1)
          .default([...PROBE_FORMS]),
        /** Brittle when the candidate widens the gap between items and their variants by more than this on average (scores are 0 to 1). */
        margin: z.number().min(0).max(2).default(0.15),
      })
      .strict()
      .default({ items: 8, forms: [...PROBE_FORMS], margin: 0.15 }),
    /** Score the test split again where a sealed figure exists; the seal records the re-score beside its figure. */
    rescore_test: z.boolean().default(false),
    /** Where test seals are kept; '' = skillopt/seals under the user's cache directory. */
    seal_dir: z.string().default(''),
  })
  .strict();
export type AuditConfig = z.infer<typeof AuditSchema>;
