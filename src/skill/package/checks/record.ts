/**
 * What one check of a candidate package found: which check, on which file, whether it passed,
 * and a sentence saying so. The records go into step records, so their shape is a schema.
 */
import { z } from 'zod';

export const CHECK_NAMES = [
  'path',
  'front-matter',
  'links',
  'json',
  'yaml',
  'python',
  'javascript',
  'shell',
  'selftest',
] as const;
export type CheckName = (typeof CHECK_NAMES)[number];

export const packageCheckSchema = z.object({
  check: z.enum(CHECK_NAMES),
  /** The package file checked (`SKILL.md` or a path inside the package); absent for the self-test. */
  file: z.string().optional(),
  ok: z.boolean(),
  /** What passed, or what is wrong and where (`line 3: …`), naming the file. */
  message: z.string(),
  /** The end of what the self-test printed. */
  output: z.string().optional(),
});
export type PackageCheck = z.infer<typeof packageCheckSchema>;

export const packageValidationSchema = z.object({
  /** Every check passed. */
  ok: z.boolean(),
  checks: z.array(packageCheckSchema),
});
export type PackageValidation = z.infer<typeof packageValidationSchema>;

export const passed = (check: CheckName, file: string | undefined, message: string): PackageCheck => ({
  check,
  ...(file === undefined ? {} : { file }),
  ok: true,
  message,
});

export const failed = (check: CheckName, file: string | undefined, message: string): PackageCheck => ({
  check,
  ...(file === undefined ? {} : { file }),
  ok: false,
  message,
});
