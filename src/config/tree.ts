/**
 * Config trees: nested mappings addressed by dotted paths, and the record of where each leaf came
 * from. Trees are built on objects without a prototype, and no key may name one
 * (`__proto__`, `constructor`, `prototype`): a config can never change the program's objects.
 */
export type Tree = Record<string, unknown>;

/** Where each leaf came from: dotted path → source (a file path, or an override: `--cfg-options`, `--set`, `overrides`) and the key as written. */
export type Sources = Map<string, { source: string; written: string }>;

/** The source of the overrides a library call gives as plain strings. */
export const LIBRARY_OVERRIDES = 'overrides';

/** Whether a source is an override (a flag or the library's `overrides`) rather than a file. */
export const isOverride = (source: string): boolean => source.startsWith('--') || source === LIBRARY_OVERRIDES;

/** Keys that would reach an object's prototype; no config has a use for them. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** The first key of a dotted path that names a prototype, if any. */
export function forbiddenKeyOf(dotted: string): string | undefined {
  return dotted.split('.').find((part) => FORBIDDEN_KEYS.has(part));
}

/** The first key at any depth of a value (mappings inside lists included) that names a prototype, if any. */
export function forbiddenKeyIn(value: unknown): string | undefined {
  if (Array.isArray(value)) {
    for (const v of value) {
      const found = forbiddenKeyIn(v);
      if (found) return found;
    }
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (FORBIDDEN_KEYS.has(k)) return k;
      const found = forbiddenKeyIn(v);
      if (found) return found;
    }
  }
  return undefined;
}

/** What is said of a key that names a prototype. */
export const forbiddenKeyMessage = (key: string) =>
  `'${key}' cannot be a config key (it names the prototype of the program's objects)`;

/** An empty tree: an object without a prototype. */
export const newTree = (): Tree => Object.create(null) as Tree;

export const isMapping = (v: unknown): v is Tree => typeof v === 'object' && v !== null && !Array.isArray(v);

export function getPath(tree: Tree, dotted: string): unknown {
  let node: unknown = tree;
  for (const part of dotted.split('.')) {
    // A list's element by its index, as zod names it in an issue's path.
    if (Array.isArray(node) && /^\d+$/.test(part)) node = node[Number(part)];
    else if (!isMapping(node) || !Object.hasOwn(node, part)) return undefined;
    else node = node[part];
  }
  return node;
}

/** Sets a dotted path, replacing any non-mapping on the way. */
export function setPath(tree: Tree, dotted: string, value: unknown): void {
  const forbidden = forbiddenKeyOf(dotted);
  if (forbidden) throw new Error(`${dotted}: ${forbiddenKeyMessage(forbidden)}`);
  const parts = dotted.split('.');
  let node = tree;
  for (const part of parts.slice(0, -1)) {
    if (!isMapping(node[part])) node[part] = newTree();
    node = node[part] as Tree;
  }
  node[parts.at(-1)!] = value;
}

export function deletePath(tree: Tree, dotted: string): void {
  const parts = dotted.split('.');
  const parent = getPath(tree, parts.slice(0, -1).join('.'));
  const target = parts.length === 1 ? tree : parent;
  if (isMapping(target)) delete target[parts.at(-1)!];
}

/** Every leaf of a tree (a mapping that is empty counts as a leaf) with its dotted path. */
export function leaves(tree: Tree, prefix = ''): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (const [k, v] of Object.entries(tree)) {
    const p = prefix ? `${prefix}.${k}` : k;
    if (isMapping(v) && Object.keys(v).length > 0) out.push(...leaves(v, p));
    else out.push([p, v]);
  }
  return out;
}

/** Merges `child` over `base`: mappings merge key by key, anything else is replaced whole. */
export function deepMerge(base: Tree, child: Tree): Tree {
  const out: Tree = Object.assign(newTree(), base);
  for (const [k, v] of Object.entries(child)) {
    out[k] = isMapping(v) && isMapping(out[k]) ? deepMerge(out[k] as Tree, v) : structuredClone(v);
  }
  return out;
}
