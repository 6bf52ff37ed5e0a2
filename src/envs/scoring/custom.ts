/**
 * A custom scorer: a TypeScript or JavaScript module (a relative path is looked up in the working
 * directory, then next to the config file that set it) exporting `(prediction, item) => {hard, soft, feedback?}`, sync or async,
 * as its default export or under the name given by `export`. What it returns is checked.
 */
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { ConfigError, UserError } from '../../errors.ts';
import type { Item } from '../types.ts';
import type { Scorer } from './types.ts';

export const CustomScorerSchema = z
  .object({
    type: z.literal('custom'),
    /** Path of the module. */
    module: z.string().min(1, 'the path of a .ts or .js module'),
    /** Name of the exported function; '' = the default export. */
    export: z.string().default(''),
  })
  .strict();

const ResultSchema = z.object({
  hard: z.number().min(0).max(1),
  soft: z.number().min(0).max(1).optional(),
  feedback: z.string().optional(),
});

type CustomFn = (prediction: string, item: Item) => unknown;

let typescript: Promise<void> | undefined;

/**
 * Imports the scorer's module. The compiled package runs on plain node, which does not read
 * TypeScript: for a scorer written in it, tsx's loaders are registered first, as `node --import
 * tsx` does (in the sources, they already run). A file outside an ES-module package is CommonJS
 * (compiled from its `export`s): its exports are those of the module it was written as.
 */
async function importScorer(file: string): Promise<Record<string, unknown>> {
  if (/\.[cm]?tsx?$/i.test(file) && import.meta.url.endsWith('.js')) {
    await (typescript ??= Promise.all([import('tsx/esm/api'), import('tsx/cjs/api')]).then(([esm, cjs]) => {
      esm.register();
      cjs.register();
    }));
  }
  const mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  const cjs = mod.default as Record<string, unknown> | undefined;
  return cjs && typeof cjs === 'object' && cjs.__esModule ? cjs : mod;
}

/** `file` is `config.module` made absolute. */
export async function customScorer(config: z.infer<typeof CustomScorerSchema>, file: string): Promise<Scorer> {
  if (!fs.existsSync(file))
    throw new ConfigError(`env.scorer.module: file not found: ${file}`, undefined, 'env.scorer.module');
  let mod: Record<string, unknown>;
  try {
    mod = await importScorer(file);
  } catch (err) {
    throw new ConfigError(
      `env.scorer.module: cannot load ${file}: ${(err as Error).message}`,
      undefined,
      'env.scorer.module',
    );
  }
  const name = config.export || 'default';
  const fn = mod[name];
  if (typeof fn !== 'function') {
    const exported = Object.keys(mod).filter((k) => typeof mod[k] === 'function');
    throw new ConfigError(
      `env.scorer.module: ${file} has no exported function '${name}'${exported.length ? ` (it exports: ${exported.join(', ')}; set env.scorer.export)` : ''}`,
      undefined,
      'env.scorer.export',
    );
  }
  return async ({ prediction, item }) => {
    const raw = await (fn as CustomFn)(prediction, item);
    const parsed = ResultSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new UserError(
        `custom scorer ${file} returned ${JSON.stringify(raw)} for item '${item.id}': ${issue.path.join('.') || 'result'}: ${issue.message} (expected {hard: 0..1, soft?: 0..1, feedback?: string})`,
      );
    }
    const { hard, soft, feedback } = parsed.data;
    return { hard, soft: soft ?? hard, metric: 'SCORE', ...(feedback ? { feedback } : {}) };
  };
}
