/**
 * Loading a configuration: files with `_base_` inheritance, `${VAR}` references to environment
 * variables (the shell's, then a `.env` file in the working directory), `--cfg-options`
 * overrides, then validation against the one schema. Every error names the file and the key.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseDotenv } from 'dotenv';
import { ConfigError, NOTHING_REGISTERED } from '../errors.ts';
import { didYouMean } from '../util/suggest.ts';
import { castValue, parseOverride } from './cast.ts';
import { flatKeyPath, loadLayers, normaliseSectionKey, overlay } from './layers.ts';
import { applyOriginalKeys, extractOriginalKeys } from './original-keys-apply.ts';
import {
  forbiddenKeyIn,
  forbiddenKeyMessage,
  forbiddenKeyOf,
  isOverride,
  LIBRARY_OVERRIDES,
  leaves,
  newTree,
  setPath,
  type Sources,
  type Tree,
} from './tree.ts';
import { isSecretVariable } from './redact.ts';
import { FLAT_KEYS, RETIRED_KEYS } from './flat-keys.ts';
import { ConfigSchema, ENV_CORE_KEYS, SECTIONS, type Config } from './schema.ts';
import { formatIssues, knownKeysAt, sourceOf } from './issues.ts';
import { resolveJudge, resolveRoles } from './roles.ts';
import { backendEntry, envEntry, envNames } from './catalog.ts';

/** A `key=value` override with where it was given (`--cfg-options`, `--set`), which its errors name. */
export interface Override {
  item: string;
  source: string;
}

export interface LoadOptions {
  /**
   * `key=value` overrides, in order; a plain string's errors name it as coming from `overrides`
   * (the CLI gives each item with its flag).
   */
  overrides?: (string | Override)[];
  /**
   * The original's flat command-line flags (`batch_size`, `target_model`, …) with their values,
   * applied after `overrides` as the original does; errors name them as `--<flag>`.
   */
  flags?: [string, string][];
  /** Directory whose `.env` file is read (default: the working directory). */
  cwd?: string;
  /** Variables to use instead of `process.env` (tests). */
  environment?: Record<string, string | undefined>;
}

export interface LoadedConfig {
  config: Config;
  /** Every file read, base files first. */
  files: string[];
  /** Dotted paths whose values came from secret variables: redacted wherever the config is written. */
  secretPaths: Set<string>;
  warnings: string[];
  /**
   * The directory a relative path in `key` is relative to: the directory of the file that set it
   * (the working directory for an override).
   */
  baseDirOf(key: string): string;
  /** The file (or the override: `--set`, `overrides`, …) that set `key`; undefined for a default. */
  sourceOf?(key: string): string | undefined;
}

/** The shell's environment plus a `.env` file in `cwd` (the shell wins); `.env` values fill `process.env`. */
export function loadEnvironment(cwd = process.cwd()): Record<string, string | undefined> {
  const file = path.join(cwd, '.env');
  if (fs.existsSync(file)) {
    const parsed = parseDotenv(fs.readFileSync(file));
    for (const [k, v] of Object.entries(parsed)) {
      if (process.env[k] === undefined) process.env[k] = v;
    }
  }
  return process.env;
}

/**
 * Loads `file` with its `_base_` chain, the environment's `${VAR}`s, the overrides and the
 * original's flags, and validates it: the config, the files read, the keys holding secrets, the
 * warnings to show, and where each key came from. A bad config throws a `ConfigError` naming the
 * file and the key.
 */
export function loadConfig(file: string, options: LoadOptions = {}): LoadedConfig {
  const environment = options.environment ?? loadEnvironment(options.cwd);
  const layered = loadLayers(file);
  let { tree, sources } = layered;
  const warnings = [...layered.warnings];

  const secretPaths = new Set<string>();
  interpolate(tree, sources, environment, secretPaths);
  const items = [
    ...(options.overrides ?? []).map((o) => (typeof o === 'string' ? { item: o, source: LIBRARY_OVERRIDES } : o)),
    ...(options.flags ?? []).map(([flag, value]) => ({
      item: `${flag}=${value}`,
      source: `--${flag}`,
      flag: true,
    })),
  ];
  ({ tree, sources } = applyOverrides(tree, sources, items, warnings));

  const original = extractOriginalKeys(tree, sources, didYouMean);
  const config = validate(tree, sources);
  validateEnvOptions(config, sources, warnings);
  const { defaulted } = resolveRoles(config, sources);
  warnings.push(...applyOriginalKeys(config, original, sources, defaulted));
  resolveJudge(config, sources);
  validateRoleOptions(config, sources);
  const baseDirOf = (key: string) => {
    const source = sources.get(key)?.source;
    return source && !isOverride(source) ? path.dirname(source) : process.cwd();
  };
  const sourceOf = (key: string) => sources.get(key)?.source;
  return { config, files: layered.files, secretPaths, warnings, baseDirOf, sourceOf };
}

/** Replaces `${VAR}` and `${VAR:-default}` in string values. */
function interpolate(
  tree: Tree,
  sources: Sources,
  environment: Record<string, string | undefined>,
  secretPaths: Set<string>,
): void {
  for (const [p, value] of leaves(tree)) {
    if (typeof value !== 'string' || !value.includes('${')) continue;
    let secret = false;
    const replaced = value.replace(
      /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
      (_m, name: string, fallback?: string) => {
        const v = environment[name];
        if (v !== undefined && v !== '') {
          if (isSecretVariable(name)) secret = true;
          return v;
        }
        if (fallback !== undefined) return fallback;
        const s = sources.get(p);
        throw new ConfigError(
          `${s?.source ?? 'config'}: ${s?.written ?? p} refers to \${${name}}, but the environment variable ${name} is not set (set it in the shell or in .env, or write \${${name}:-default})`,
          s?.source,
          p,
        );
      },
    );
    setPath(tree, p, replaced);
    if (secret) secretPaths.add(p);
  }
}

/** Where an override key lands in the structured form. */
export function overridePath(key: string): string {
  if (!key.includes('.')) return flatKeyPath(key) ?? `env.${key}`;
  const [section, sub, ...rest] = key.split('.');
  if (section && sub && (SECTIONS as string[]).includes(section)) {
    const [mapped] = normaliseSectionKey(section, sub, rest.length ? {} : 'scalar');
    return rest.length ? `${section}.${sub}.${rest.join('.')}` : mapped;
  }
  return key;
}

function applyOverrides(
  tree: Tree,
  sources: Sources,
  items: (Override & { flag?: boolean })[],
  warnings: string[],
): { tree: Tree; sources: Sources } {
  const child = newTree();
  const childSources: Sources = new Map();
  for (const { item, source, flag } of items) {
    let parsed;
    let value;
    try {
      parsed = parseOverride(item);
      value = castValue(parsed.value);
      const forbidden = forbiddenKeyOf(parsed.key) ?? forbiddenKeyIn(value);
      if (forbidden) throw new Error(forbiddenKeyMessage(forbidden));
    } catch (err) {
      throw new ConfigError(
        `${source}: ${parsed ? `${parsed.key}: ` : ''}${(err as Error).message}`,
        source,
        parsed?.key,
      );
    }
    const target = overridePath(parsed.key);
    if (RETIRED_KEYS[target] || RETIRED_KEYS[`gradient.${parsed.key}`]) {
      warnings.push(
        `${source}: '${parsed.key}' is retired: ${RETIRED_KEYS[target] ?? RETIRED_KEYS[`gradient.${parsed.key}`]}`,
      );
      continue;
    }
    setPath(child, target, value);
    childSources.set(target, { source, written: flag ? target : parsed.key });
  }
  return overlay(tree, sources, child, childSources);
}

function validate(tree: Tree, sources: Sources): Config {
  const result = ConfigSchema.safeParse(tree);
  if (!result.success) {
    const first = result.error.issues[0]!;
    const key = first.path.join('.');
    throw new ConfigError(
      formatIssues(result.error.issues, tree, sources, ConfigSchema),
      sourceOf(sources, key).source,
      key,
    );
  }
  return result.data;
}

/** A role's `options` are checked by its backend's schema (the judge's, when it sets any of its own). */
export function validateRoleOptions(config: Config, sources: Sources): void {
  const judgeSet = [...sources.keys()].some((k) => k.startsWith('model.judge.'));
  for (const role of ['target', 'optimizer', ...(judgeSet ? ['judge'] : [])] as const) {
    const rc = config.model[role as 'target'];
    const schema = backendEntry(rc.backend)?.optionsSchema;
    if (!schema) continue;
    const result = schema.strict().safeParse(rc.options ?? {});
    if (result.success) {
      rc.options = result.data as Record<string, unknown>;
      continue;
    }
    const base = ['model', role, 'options'];
    const message = result.error.issues
      .map((issue) => {
        if (issue.code === 'unrecognized_keys') {
          return issue.keys
            .map((key) => {
              const s = sourceOf(sources, [...base, ...issue.path, key].join('.'));
              return `${s.source}: unknown key '${s.written}' for backend '${rc.backend}'${didYouMean(key, Object.keys(schema.shape))}`;
            })
            .join('\n');
        }
        return formatIssues([issue], config as unknown as Tree, sources, schema, base);
      })
      .join('\n');
    const key = [...base, ...(result.error.issues[0]!.path as string[])].join('.');
    throw new ConfigError(message, sourceOf(sources, key).source, key);
  }
}

/**
 * The env's own keys (everything in `env` beyond the core ones) are checked by the env's schema;
 * keys it accepts but does not support yet are dropped with one warning each.
 */
function validateEnvOptions(config: Config, sources: Sources, warnings: string[]): void {
  const name = config.env.name;
  const extraKeys = Object.keys(config.env).filter((k) => !ENV_CORE_KEYS.includes(k));
  if (!name) {
    if (extraKeys.length === 0) return;
    const s = sourceOf(sources, `env.${extraKeys[0]}`);
    throw new ConfigError(
      `${s.source}: unknown key '${s.written}'${didYouMean(extraKeys[0]!, [...Object.keys(FLAT_KEYS), ...SECTIONS])} (env.name is not set, so it cannot be an env option)`,
      s.source,
      `env.${extraKeys[0]}`,
    );
  }
  const entry = envEntry(name);
  if (envNames().length === 0) throw new Error(NOTHING_REGISTERED);
  if (!entry) {
    const s = sourceOf(sources, 'env.name');
    throw new ConfigError(
      `${s.source}: ${s.written}: unknown env '${name}'${didYouMean(name, envNames())}; known envs: ${envNames().join(', ')}`,
      s.source,
      'env.name',
    );
  }
  const unsupported = entry.unsupportedOptions ?? {};
  for (const key of Object.keys(config.env)) {
    if (ENV_CORE_KEYS.includes(key) || !Object.hasOwn(unsupported, key)) continue;
    const s = sourceOf(sources, `env.${key}`);
    warnings.push(`${s.source}: ${s.written} is not supported yet and is ignored: ${unsupported[key]}`);
    delete (config.env as Record<string, unknown>)[key];
  }
  const extras: Tree = {};
  for (const [k, v] of Object.entries(config.env)) if (!ENV_CORE_KEYS.includes(k)) extras[k] = v;
  const result = entry.optionsSchema.strict().safeParse(extras);
  if (!result.success) {
    const envTree = { env: config.env } as Tree;
    const message = result.error.issues
      .map((issue) => {
        if (issue.code === 'unrecognized_keys') {
          return issue.keys
            .map((key) => {
              const s = sourceOf(sources, ['env', ...issue.path, key].join('.'));
              const known = issue.path.length
                ? knownKeysAt(entry.optionsSchema, issue.path)
                : [...ENV_CORE_KEYS, ...Object.keys(entry.optionsSchema.shape), ...Object.keys(unsupported)];
              return `${s.source}: unknown key '${s.written}' for env '${name}'${didYouMean(key, known)}`;
            })
            .join('\n');
        }
        return formatIssues([issue], envTree, sources, entry.optionsSchema, ['env']);
      })
      .join('\n');
    const key = `env.${String(result.error.issues[0]!.path[0] ?? '')}`;
    throw new ConfigError(message, sourceOf(sources, key).source, key);
  }
  Object.assign(config.env, result.data);
}
