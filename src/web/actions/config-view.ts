/**
 * A config as the New run page shows it: the resolved config (secrets redacted) line by line,
 * each key marked when the config sets it to something other than its base (`_base_` files, or
 * the defaults when it has none) or when the form overrides it; and the values of the settings
 * the form edits. The base is resolved by the same loader, from its own files.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { parseOverride } from '../../config/cast.ts';
import { loadConfig, overridePath, type LoadedConfig } from '../../config/load.ts';
import { redact } from '../../config/redact.ts';
import { BudgetSchema, EvaluationSchema, OptimizerSchema, type Config } from '../../config/schema.ts';
import { getPath, isMapping, type Tree } from '../../config/tree.ts';
import { errorMessage } from '../../errors.ts';

export interface ConfigLine {
  depth: number;
  key: string;
  /** A leaf's value as YAML; absent on a mapping's line. */
  value?: string;
  path: string;
  /** `base`: differs from the base; `form`: set by the form or the extra overrides. */
  mark?: 'base' | 'form';
}

export interface FormField {
  key: string;
  label: string;
  kind: 'text' | 'number' | 'bool' | 'select';
  options?: string[];
  /** Name of a list of suggestions the page offers (`backends`). */
  suggest?: 'backends';
}

/** The budget's limits (`max_usd`, `max_calls`, …): the keys a raise changes. */
export const BUDGET_LIMITS = Object.keys(BudgetSchema.shape).filter((k) => k.startsWith('max_'));

const enumOf = (schema: { unwrap(): { options: readonly string[] } }) => [...schema.unwrap().options];

/** The settings the form edits; each change becomes a `--set key=value`. */
export const FORM_FIELDS: FormField[] = [
  { key: 'model.target.backend', label: 'Target backend', kind: 'text', suggest: 'backends' },
  { key: 'model.target.model', label: 'Target model', kind: 'text' },
  { key: 'model.optimizer.backend', label: 'Optimizer backend', kind: 'text', suggest: 'backends' },
  { key: 'model.optimizer.model', label: 'Optimizer model', kind: 'text' },
  { key: 'train.num_epochs', label: 'Epochs', kind: 'number' },
  { key: 'train.batch_size', label: 'Batch size', kind: 'number' },
  { key: 'optimizer.learning_rate', label: 'Learning rate (edits per step)', kind: 'number' },
  { key: 'optimizer.min_learning_rate', label: 'Minimum learning rate', kind: 'number' },
  {
    key: 'optimizer.lr_scheduler',
    label: 'Schedule',
    kind: 'select',
    options: enumOf(OptimizerSchema.shape.lr_scheduler),
  },
  { key: 'evaluation.use_gate', label: 'Validation gate', kind: 'bool' },
  {
    key: 'evaluation.gate_metric',
    label: 'Gate metric',
    kind: 'select',
    options: enumOf(EvaluationSchema.shape.gate_metric),
  },
  { key: 'optimizer.use_slow_update', label: 'Slow update', kind: 'bool' },
  { key: 'optimizer.use_meta_skill', label: 'Meta skill', kind: 'bool' },
  ...BUDGET_LIMITS.map(
    (k): FormField => ({ key: `budget.${k}`, label: `Budget: ${k.replace(/_/g, ' ')} (0 = none)`, kind: 'number' }),
  ),
  { key: 'budget.allow_unpriced', label: 'Budget: start with calls of unknown price (not counted)', kind: 'bool' },
];

/** The form's values in a resolved config. */
export function formValues(config: Config): Record<string, unknown> {
  return Object.fromEntries(FORM_FIELDS.map((f) => [f.key, getPath(config as unknown as Tree, f.key)]));
}

const yamlValue = (v: unknown) => (v === '' ? "''" : stringify(v, { collectionStyle: 'flow', lineWidth: 0 }).trim());
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The direct `_base_` files of a config file, as absolute paths. */
function basesOf(file: string): string[] {
  const raw = parse(fs.readFileSync(file, 'utf8')) as unknown;
  if (!isMapping(raw) || raw._base_ == null) return [];
  const list = Array.isArray(raw._base_) ? raw._base_ : [raw._base_];
  return list.filter((b): b is string => typeof b === 'string').map((b) => path.resolve(path.dirname(file), b));
}

/**
 * What the config's base resolves to: its `_base_` files through the loader (a config file that
 * names only them), or the defaults when it has none.
 */
export function resolvedBase(file: string): { base?: LoadedConfig; problem?: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skillopt-base-'));
  try {
    const stub = path.join(dir, 'base.yaml');
    const bases = basesOf(file);
    fs.writeFileSync(stub, bases.length ? stringify({ _base_: bases }) : '{}\n');
    return { base: loadConfig(stub) };
  } catch (err) {
    return {
      problem: `the base of this config does not resolve on its own (${errorMessage(err)}); keys are not compared with it`,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The resolved config as lines, marked against the base and the overrides. */
export function configLines(loaded: LoadedConfig, base: LoadedConfig | undefined, overrides: string[]): ConfigLine[] {
  const shown = redact(loaded.config, loaded.secretPaths) as unknown as Tree;
  const baseShown = base ? (redact(base.config, base.secretPaths) as unknown as Tree) : undefined;
  const overridden = overrides.flatMap((o) => {
    try {
      return [overridePath(parseOverride(o).key)];
    } catch {
      return [];
    }
  });
  const lines: ConfigLine[] = [];
  const walk = (tree: Tree, prefix: string, depth: number) => {
    for (const [key, value] of Object.entries(tree)) {
      const p = prefix ? `${prefix}.${key}` : key;
      if (isMapping(value) && Object.keys(value).length > 0) {
        lines.push({ depth, key, path: p });
        walk(value, p, depth + 1);
        continue;
      }
      const line: ConfigLine = { depth, key, path: p, value: yamlValue(value) };
      if (overridden.some((o) => p === o || p.startsWith(`${o}.`))) line.mark = 'form';
      else if (baseShown && !same(value, getPath(baseShown, p))) line.mark = 'base';
      lines.push(line);
    }
  };
  walk(shown, '', 0);
  return lines;
}
