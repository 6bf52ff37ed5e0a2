/** The harvest's arguments of the Sleep tools (which sessions a night or a dry run reads), and their CLI flags. */
import { z } from 'zod';
import { SOURCE_NAMES } from '../sleep/harvest/digest.ts';

export const harvestArgs = {
  sources: z
    .array(z.enum(SOURCE_NAMES as unknown as [string, ...string[]]))
    .optional()
    .describe('agents to read (default: the Sleep config, else every installed one)'),
  since: z
    .string()
    .regex(/^(\d+[hdw]|\d{4}-\d{2}-\d{2})$/, 'a duration (72h, 7d, 2w) or a date (2026-11-01)')
    .optional()
    .describe('sessions active since: 72h, 7d, or a date'),
  max_sessions: z
    .number()
    .int()
    .min(0)
    .max(1_000_000)
    .optional()
    .describe('keep at most this many sessions, the newest (0 = no limit)'),
};

export function harvestFlags(
  project: string,
  a: { sources?: string[]; since?: string; max_sessions?: number },
  config?: string,
): string[] {
  return [
    '--project',
    project,
    ...(a.sources?.length ? ['--source', a.sources.join(',')] : []),
    ...(a.since ? ['--since', a.since] : []),
    ...(a.max_sessions !== undefined ? ['--max-sessions', String(a.max_sessions)] : []),
    ...(config ? ['--config', config] : []),
  ];
}
