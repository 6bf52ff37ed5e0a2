/** `evaluation.audit`: the checks a gain must pass before it is trusted (`src/audit/`). */
import { z } from 'zod';

/**
 * `leak`: the skill carries items of the data (answers, ids, requests copied at length).
 * `scorer_gaming`: it tells the target to write what a rule scorer checks.
 * `sealed_test`: the test split is scored once per skill and target; later runs show that figure.
 */
export const AUDIT_CHECKS = ['leak', 'scorer_gaming', 'sealed_test'] as const;
export type AuditCheck = (typeof AUDIT_CHECKS)[number];

export const AuditSchema = z
  .object({
    /** The checks that run; [] turns the audit off. */
    checks: z.array(z.enum(AUDIT_CHECKS)).default([...AUDIT_CHECKS]),
    /** What a flag (evidence worth a second look, such as text that mirrors the scorer) does to a candidate: `warn` or `reject`. */
    on_flag: z.enum(['warn', 'reject']).default('warn'),
    /** What a fail (such as a leak of an item of the data) does to a candidate: `reject` or `warn`. */
    on_fail: z.enum(['reject', 'warn']).default('reject'),
    /** Score the test split again where a sealed figure exists; the seal records the re-score beside its figure. */
    rescore_test: z.boolean().default(false),
    /** Where test seals are kept; '' = skillopt/seals under the user's cache directory. */
    seal_dir: z.string().default(''),
  })
  .strict();
export type AuditConfig = z.infer<typeof AuditSchema>;
