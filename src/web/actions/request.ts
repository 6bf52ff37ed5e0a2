/**
 * What every action route reads from a request: a JSON body checked by its schema (a 400 naming
 * the field), and a config loaded with the form's overrides, which are checked first: plain text
 * of a bounded length, as a command line can carry them.
 */
import type { Context } from 'hono';
import type { z } from 'zod';
import { loadConfig, type LoadedConfig } from '../../config/load.ts';
import { UserError } from '../../errors.ts';
import { HttpError } from '../files/safe-path.ts';

export async function body<T>(c: Context, schema: z.ZodType<T>): Promise<T> {
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch {
    throw new HttpError(400, 'the request body must be JSON');
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new HttpError(400, `${issue.path.join('.') || 'body'}: ${issue.message}`);
}

/** Longest override the form may send (a key and a value; long lists belong in a config file). */
export const MAX_OVERRIDE_CHARS = 4096;
export const MAX_OVERRIDES = 200;

/** The overrides refused with a named error: control characters (NUL included) or too long. */
export function checkOverrides(overrides: string[]): void {
  if (overrides.length > MAX_OVERRIDES)
    throw new HttpError(400, `overrides: at most ${MAX_OVERRIDES} are taken, not ${overrides.length}`);
  overrides.forEach((o, i) => {
    const shown = JSON.stringify(o.length > 60 ? `${o.slice(0, 60)}…` : o);
    if (o.length > MAX_OVERRIDE_CHARS)
      throw new HttpError(
        400,
        `overrides[${i}]: ${o.length} characters, more than the ${MAX_OVERRIDE_CHARS} an override may have (${shown}); put long values in a config file`,
      );
    const bad = /[\u0000-\u001f\u007f]/.exec(o);
    if (bad)
      throw new HttpError(
        400,
        `overrides[${i}]: contains the control character U+${bad[0].charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()} (${shown}); an override is one line of plain text`,
      );
  });
}

/** The config with the form's overrides, or the reason it does not load. */
export function loadWithOverrides(file: string, overrides: string[]): { loaded?: LoadedConfig; error?: string } {
  checkOverrides(overrides);
  try {
    // The form's overrides run as `--set` items: their errors say so, as the CLI's do.
    return { loaded: loadConfig(file, { overrides: overrides.map((item) => ({ item, source: '--set' })) }) };
  } catch (err) {
    if (err instanceof UserError) return { error: err.message };
    throw err;
  }
}
