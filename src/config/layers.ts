/**
 * Reading config files into layers: YAML parsing, `_base_` inheritance, the original's flat
 * spelling, and a record of which file set every key (so errors can name it).
 */
import fs from 'node:fs';
import path from 'node:path';
import { isScalar, LineCounter, parseDocument, visit } from 'yaml';
import { ConfigError } from '../errors.ts';
import { didYouMean } from '../util/suggest.ts';
import { originalFlatPath } from './original-keys.ts';
import { FLAT_KEYS, RETIRED_KEYS } from './flat-keys.ts';
import { SECTIONS } from './schema.ts';
import { FileRefused, readRegularFileSync } from '../util/read-file.ts';
import {
  deepMerge,
  deletePath,
  forbiddenKeyMessage,
  forbiddenKeyOf,
  getPath,
  isMapping,
  leaves,
  newTree,
  setPath,
  type Sources,
  type Tree,
} from './tree.ts';

export interface Layered {
  tree: Tree;
  sources: Sources;
  files: string[];
  warnings: string[];
}

const ROLES = ['target', 'optimizer', 'judge'] as const;

/** Where a flat key of the original (`edit_budget`, `azure_openai_endpoint`, …) lives in the structured form. */
export function flatKeyPath(key: string): string | undefined {
  return FLAT_KEYS[key] ?? originalFlatPath(key);
}

/**
 * Brings one layer into the structured form: the original's flat keys go to their sections,
 * `model.target: <name>` becomes `model.target.model`, `model.<role>_backend` moves into the role,
 * and unknown top-level keys are treated as environment options (the env validates them).
 * Returns the normalised layer and, for each leaf, the key as the user wrote it.
 */
export function normaliseLayer(
  raw: Tree,
  warn: (msg: string) => void,
  where: string,
): { tree: Tree; written: Map<string, string> } {
  const tree = newTree();
  const written = new Map<string, string>();
  const put = (dotted: string, value: unknown, as: string) => {
    if (isMapping(value) && Object.keys(value).length > 0) {
      for (const [k, v] of Object.entries(value)) put(`${dotted}.${k}`, v, `${as}.${k}`);
      return;
    }
    setPath(tree, dotted, value);
    written.set(dotted, as);
  };

  // Structured spelling first, so that it wins over a flat duplicate in the same file.
  const flat: [string, unknown][] = [];
  for (const [key, value] of Object.entries(raw)) {
    if (key === '_base_') continue;
    if ((SECTIONS as string[]).includes(key) && isMapping(value)) {
      for (const [sub, v] of Object.entries(value)) {
        put(...normaliseSectionKey(key, sub, v));
      }
    } else {
      flat.push([key, value]);
    }
  }
  for (const [key, value] of flat) {
    const mapped = flatKeyPath(key);
    if (mapped) {
      if (getPath(tree, mapped) === undefined) put(mapped, value, key);
    } else if (RETIRED_KEYS[`gradient.${key}`] || RETIRED_KEYS[`optimizer.${key}`]) {
      warn(`${where}: '${key}' is retired: ${RETIRED_KEYS[`gradient.${key}`] ?? RETIRED_KEYS[`optimizer.${key}`]}`);
    } else if (isMapping(value)) {
      put(key, value, key); // most likely a misspelt section: validation names it
    } else {
      put(`env.${key}`, value, key);
    }
  }
  for (const retired of Object.keys(RETIRED_KEYS)) {
    if (getPath(tree, retired) !== undefined) {
      warn(`${where}: '${retired}' is retired: ${RETIRED_KEYS[retired]}`);
      deletePath(tree, retired);
      written.delete(retired);
    }
  }
  return { tree, written };
}

/** Maps one `section.key = value` of the original's spelling onto the structured form. */
export function normaliseSectionKey(section: string, key: string, value: unknown): [string, unknown, string] {
  const as = `${section}.${key}`;
  if (section === 'model') {
    for (const role of ROLES) {
      if (key === role && !isMapping(value)) return [`model.${role}.model`, value, as];
      if (key === `${role}_backend`) return [`model.${role}.backend`, value, as];
      if (key === `${role}_model`) return [`model.${role}.model`, value, as];
    }
  }
  return [as, value, as];
}

/** The largest config file read: configs are small, and a huge one would take the loader (and the dashboard) with it. */
export const MAX_CONFIG_BYTES = 2 * 1024 * 1024;

function readYaml(file: string, refusal: (message: string) => ConfigError = (m) => new ConfigError(m, file)): Tree {
  let text: string;
  try {
    text = readRegularFileSync(file, MAX_CONFIG_BYTES, 'a config file').toString('utf8');
  } catch (err) {
    if (!(err instanceof FileRefused)) throw err;
    throw refusal(err.reason === 'missing' ? `config file not found: ${file}` : err.message);
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: true, lineCounter });
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    const line = e.linePos?.[0];
    throw new ConfigError(
      `${file}${line ? `:${line.line}:${line.col}` : ''}: invalid YAML: ${e.message.split('\n')[0]}`,
      file,
    );
  }
  // Before the document becomes objects: a `__proto__` key would set an object's prototype.
  visit(doc, {
    Pair(_key, pair) {
      const key = isScalar(pair.key) ? pair.key.value : undefined;
      if (typeof key !== 'string' || !forbiddenKeyOf(key)) return;
      const at = isScalar(pair.key) && pair.key.range ? lineCounter.linePos(pair.key.range[0]) : undefined;
      throw new ConfigError(`${file}${at ? `:${at.line}:${at.col}` : ''}: ${forbiddenKeyMessage(key)}`, file, key);
    },
  });
  const value = doc.toJS() as unknown;
  if (value == null) return newTree();
  if (!isMapping(value)) throw new ConfigError(`${file}: a config file must be a mapping of keys to values`, file);
  return value;
}

/** The configs shipped with the package, which `_base_: skillopt:NAME` names. */
export const PACKAGE_CONFIGS = path.resolve(import.meta.dirname, '../../configs');
const BUILTIN = 'skillopt:';

/** The names `skillopt:NAME` accepts: the base files by their name, the benchmark configs by their path. */
function builtinNames(): string[] {
  const names: string[] = [];
  for (const dir of fs.readdirSync(PACKAGE_CONFIGS, { withFileTypes: true })) {
    if (!dir.isDirectory()) continue;
    for (const f of fs.readdirSync(path.join(PACKAGE_CONFIGS, dir.name)))
      if (f.endsWith('.yaml')) names.push(dir.name === '_base_' ? f.slice(0, -5) : `${dir.name}/${f.slice(0, -5)}`);
  }
  return names.sort();
}

/** The file a `_base_` entry names: `skillopt:NAME` a shipped config, else a path relative to the file. */
function basePathOf(file: string, base: string): string {
  if (base.startsWith(BUILTIN)) {
    const name = base.slice(BUILTIN.length).replace(/\.yaml$/, '');
    const names = builtinNames();
    if (!names.includes(name)) {
      const near = didYouMean(name, names).replace(/'([^']+)'/, `'${BUILTIN}$1'`);
      throw new ConfigError(
        `${file}: _base_: no shipped config '${base}'${near}; the shipped ones are ${names.map((n) => BUILTIN + n).join(', ')}`,
        file,
        '_base_',
      );
    }
    return path.join(PACKAGE_CONFIGS, name.includes('/') ? `${name}.yaml` : `_base_/${name}.yaml`);
  }
  const basePath = path.resolve(path.dirname(file), base);
  if (!fs.existsSync(basePath)) {
    throw new ConfigError(
      `${file}: _base_ file '${base}' not found (looked for ${basePath}): a relative _base_ is relative to the file that names it; for the shipped base write _base_: ${BUILTIN}default`,
      file,
      '_base_',
    );
  }
  return basePath;
}

/**
 * Loads a config file with its `_base_` chain (a path or a list of paths, relative to the file).
 * A base reached by several paths (a diamond) is read once; every file is listed once, base files
 * first. `refusal` words the error of a file that cannot be read (a base: as its parent's key).
 */
export function loadLayers(
  file: string,
  visiting: string[] = [],
  loaded = new Map<string, Layered>(),
  refusal?: (message: string) => ConfigError,
): Layered {
  const abs = path.resolve(file);
  if (visiting.includes(abs)) {
    throw new ConfigError(`circular _base_ inheritance: ${[...visiting, abs].join(' -> ')}`, abs, '_base_');
  }
  const known = loaded.get(abs);
  if (known) return known;
  const raw = readYaml(abs, refusal);
  const warnings: string[] = [];
  const baseRaw = raw._base_;
  const bases = baseRaw == null ? [] : Array.isArray(baseRaw) ? baseRaw : [baseRaw];
  let tree = newTree();
  let sources: Sources = new Map();
  const files: string[] = [];
  for (const base of bases) {
    if (typeof base !== 'string' || base.trim() === '') {
      throw new ConfigError(
        `${abs}: _base_ must be a path or a list of paths, got ${JSON.stringify(base)}`,
        abs,
        '_base_',
      );
    }
    const basePath = basePathOf(abs, base);
    const layer = loadLayers(
      basePath,
      [...visiting, abs],
      loaded,
      (message) => new ConfigError(`${abs}: _base_: ${message}`, abs, '_base_'),
    );
    ({ tree, sources } = overlay(tree, sources, layer.tree, layer.sources));
    files.push(...layer.files);
    warnings.push(...layer.warnings);
  }
  const { tree: own, written } = normaliseLayer(raw, (m) => warnings.push(m), abs);
  const ownSources: Sources = new Map([...written].map(([p, w]) => [p, { source: abs, written: w }]));
  ({ tree, sources } = overlay(tree, sources, own, ownSources));
  files.push(abs);
  const layered = { tree, sources, files: [...new Set(files)], warnings: [...new Set(warnings)] };
  loaded.set(abs, layered);
  return layered;
}

/** `child` over `base`, keeping the record of sources in step. */
export function overlay(
  base: Tree,
  baseSources: Sources,
  child: Tree,
  childSources: Sources,
): { tree: Tree; sources: Sources } {
  const sources: Sources = new Map(baseSources);
  for (const [p] of leaves(child)) {
    // A child value replaces whatever the base had at or below this path.
    for (const existing of [...sources.keys()]) {
      if (existing === p || existing.startsWith(`${p}.`)) sources.delete(existing);
    }
  }
  for (const [p, s] of childSources) sources.set(p, s);
  return { tree: deepMerge(base, child), sources };
}
