/** The audit of a skill as a step record and `summary.json` keep it (`src/audit/`: the full report goes to its own file). */
import { z } from 'zod';

const VerdictSchema = z.enum(['pass', 'flag', 'fail']);

/** The verdict, and each check's with how much evidence it found. */
export const AuditRecordSchema = z.object({
  verdict: VerdictSchema,
  checks: z.array(
    z.object({
      check: z.string(),
      verdict: VerdictSchema,
      summary: z.string(),
      findings: z.number(),
    }),
  ),
});
export type AuditRecord = z.infer<typeof AuditRecordSchema>;

/** `summary.json`'s `audit`: the best skill's, and how each test figure stands to its seal. */
export const RunAuditSchema = z
  .object({
    best: AuditRecordSchema.optional(),
    test_seals: z
      .record(z.string(), z.object({ status: z.enum(['sealed', 'shown', 'rescored']), sealed_by: z.string() }).loose())
      .optional(),
  })
  .loose();
