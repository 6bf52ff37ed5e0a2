/**
 * The one split loader every dataset env uses (reference B.1 `SplitDataLoader`, §5.1).
 *
 * Three ways to get train / val / test:
 * - `files`: one file per split (the `tasks` env's `train_file`, `val_file`, `test_file`);
 * - `split_dir`: a directory with `train/`, `val/`, `test/` subdirectories, one data file each;
 * - `ratio`: one file (`data_path`), shuffled with `split_seed` and cut by `split_ratio` with
 *   largest-remainder counts; the split is written to `split_output_dir` (default
 *   `<run>/_generated_splits/<env>_<a-b-c>_seed<S>`) with a `split_manifest.json`.
 *
 * `split_mode` decides when both `data_path` and `split_dir` are set; when only one is set, it
 * is the one used. Every split must be non-empty and ids must be unique across all three. A
 * reader may leave a valid record out (`LeftOut`: it cannot be run with what the user has); the
 * records left out are counted in a warning and listed in a generated split's manifest, and a
 * split that loses every item is an error.
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../../errors.ts';
import type { EnvConfig } from '../../config/schema.ts';
import { writeJsonAtomic } from '../../run/atomic.ts';
import { Rng } from '../../util/random.ts';
import type { Item, Splits } from '../types.ts';
import { DataError, formatLocation, type Location } from './errors.ts';
import { describeLeftOut, LeftOut, listLeftOut, type LeftOutRecord } from './left-out.ts';
import type { SplitName } from '../types.ts';
import { dataFilesIn, readRecords, type RawRecord } from './read.ts';

export const SPLIT_NAMES: readonly SplitName[] = ['train', 'val', 'test'];

const ALIASES: Record<string, SplitName> = {
  train: 'train',
  val: 'val',
  valid: 'val',
  validation: 'val',
  valid_seen: 'val',
  selection: 'val',
  test: 'test',
  valid_unseen: 'test',
};

/** The split a name means (the original's aliases included); an unknown name is an error. */
export function canonicalSplit(name: string): SplitName {
  const split = ALIASES[name.trim().toLowerCase()];
  if (!split)
    throw new UserError(
      `unknown split '${name}': expected train, val or test (aliases: valid_seen, selection, valid_unseen)`,
    );
  return split;
}

/** How an env turns records into items. */
export interface ItemReader {
  /** One item from one record (or `LeftOut`); throws a DataError naming `rec.where` and the field. */
  toItem(rec: RawRecord, split: SplitName | undefined): Item | LeftOut | Promise<Item | LeftOut>;
  /** The raw records of `data_path` in ratio mode (default: the one data file there). */
  readRaw?(dataPath: string): Promise<RawRecord[]>;
  /** What a generated split file stores for an item (default: the item itself). */
  stored?(item: Item, rec: RawRecord): unknown;
  /** What the user can do about the records left out, added to the warning. */
  leftOutHint?(): string;
}

export interface SplitOptions {
  /** Env name, for the generated directory's name. */
  env: string;
  config: EnvConfig;
  /** A path-valued `env.<key>` made absolute (EnvContext.resolvePath). */
  resolve(key: string, value: string): string;
  /** What is said of a path-valued `env.<key>` that does not exist (EnvContext.missingPath; default: the path). */
  missing?(key: string, value: string): string;
  outRoot?: string;
  /** Explicit per-split files (all three, or none). */
  files?: Partial<Record<SplitName, string>>;
}

export interface LoadedSplits extends Splits {
  mode: 'files' | 'split_dir' | 'ratio';
  /** The data the splits came from (a file or a directory). */
  source: string;
  /** Where a ratio split was written. */
  generatedDir?: string;
  /** Records the reader left out. */
  leftOut: LeftOutRecord[];
  /** What the user should know about the data (items left out). */
  warnings: string[];
}

/** Parses `a:b:c` into three weights. */
export function parseRatio(ratio: string): [number, number, number] {
  const parts = ratio.split(':').map((p) => p.trim());
  const nums = parts.map(Number);
  if (
    parts.length !== 3 ||
    nums.some((n, i) => parts[i] === '' || !Number.isFinite(n) || n < 0) ||
    nums.reduce((a, b) => a + b, 0) <= 0
  ) {
    throw new UserError(
      `env.split_ratio: expected three non-negative numbers train:val:test such as "2:1:7", got "${ratio}"`,
    );
  }
  return nums as [number, number, number];
}

/**
 * Counts for `total` items by the largest-remainder method: floors first, then the remaining
 * units to the largest fractional parts (ties: larger weight first, then earlier split).
 */
export function largestRemainder(total: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  const raw = weights.map((w) => (total * w) / sum);
  const counts = raw.map(Math.floor);
  let left = total - counts.reduce((a, b) => a + b, 0);
  const order = weights
    .map((_, i) => i)
    .sort((a, b) => raw[b]! - counts[b]! - (raw[a]! - counts[a]!) || weights[b]! - weights[a]! || a - b);
  for (const i of order) {
    if (left <= 0) break;
    counts[i]! += 1;
    left--;
  }
  return counts;
}

interface Loaded {
  item: Item;
  rec: RawRecord;
}

async function toItems(
  records: RawRecord[],
  reader: ItemReader,
  split: SplitName | undefined,
  leftOut: LeftOutRecord[],
): Promise<Loaded[]> {
  const out: Loaded[] = [];
  for (const rec of records) {
    const item = await reader.toItem(rec, split);
    if (item instanceof LeftOut) leftOut.push({ id: item.id, ...(split ? { split } : {}), reason: item.reason });
    else out.push({ item, rec });
  }
  return out;
}

/** An empty split: an error that says whether its items were all left out. */
function checkLoaded(split: SplitName, loaded: Loaded[], leftOut: LeftOutRecord[], where: string, hint: string): void {
  if (loaded.length > 0) return;
  const lost = leftOut.filter((l) => l.split === split || !l.split);
  if (lost.length)
    throw new DataError(
      `split '${split}' has no item left (${where}): all ${lost.length} were left out: ${listLeftOut(lost)}`,
    );
  checkNonEmpty(split, loaded, where, hint);
}

function checkUniqueIds(groups: Loaded[][]): void {
  const seen = new Map<string, Location>();
  for (const group of groups) {
    for (const { item, rec } of group) {
      const before = seen.get(item.id);
      if (before)
        throw new DataError(
          `duplicate id '${item.id}' (also at ${formatLocation(before)}); every item needs its own id`,
          rec.where,
          'id',
        );
      seen.set(item.id, rec.where);
    }
  }
}

function checkNonEmpty(split: SplitName, items: unknown[], where: string, hint: string): void {
  if (items.length === 0) throw new DataError(`split '${split}' is empty (${where}); ${hint}`);
}

function exactlyOneDataFile(dir: string, what: string): string {
  const files = dataFilesIn(dir);
  if (files.length === 1) return files[0]!;
  if (files.length === 0)
    throw new DataError(`${what} ${dir} holds no data file (.jsonl, .json, .csv, .tsv or .parquet)`);
  throw new DataError(
    `${what} ${dir} holds several data files (${files.map((f) => path.basename(f)).join(', ')}); keep exactly one`,
  );
}

function resolveMode(config: EnvConfig): 'split_dir' | 'ratio' {
  const hasDir = Boolean(config.split_dir);
  const hasData = Boolean(config.data_path);
  if (hasDir && hasData) return config.split_mode;
  if (hasDir) return 'split_dir';
  if (hasData) return 'ratio';
  throw new UserError(
    'no data: set env.data_path (one file, split by env.split_ratio) or env.split_dir (a directory with train/, val/ and test/)',
  );
}

/** What is said of a path-valued `env.<key>` that does not exist. */
function notFound(opts: SplitOptions, key: string, value: string, resolved: string): string {
  return opts.missing?.(key, value) ?? `env.${key} not found: ${resolved}`;
}

export async function loadSplits(opts: SplitOptions, reader: ItemReader): Promise<LoadedSplits> {
  const { config, resolve } = opts;
  const files = opts.files && Object.values(opts.files).some(Boolean) ? opts.files : undefined;
  const leftOut: LeftOutRecord[] = [];
  let result: Omit<LoadedSplits, 'leftOut' | 'warnings'>;
  if (files) {
    const groups: Partial<Record<SplitName, Loaded[]>> = {};
    for (const split of SPLIT_NAMES) {
      const file = files[split];
      if (!file)
        throw new UserError(
          `env.${split}_file is not set: give all three of train_file, val_file and test_file, or use data_path / split_dir`,
        );
      const resolved = resolve(`${split}_file`, file);
      if (!fs.existsSync(resolved)) throw new DataError(notFound(opts, `${split}_file`, file, resolved));
      const loaded = await toItems(await readRecords(resolved), reader, split, leftOut);
      checkLoaded(split, loaded, leftOut, resolved, 'add items to it');
      groups[split] = loaded;
    }
    checkUniqueIds(SPLIT_NAMES.map((s) => groups[s]!));
    result = { mode: 'files', source: resolve('train_file', files.train!), ...itemsOf(groups) };
  } else if (resolveMode(config) === 'split_dir') {
    const dir = resolve('split_dir', config.split_dir);
    if (!fs.existsSync(dir)) throw new DataError(notFound(opts, 'split_dir', config.split_dir, dir));
    const groups: Partial<Record<SplitName, Loaded[]>> = {};
    for (const split of SPLIT_NAMES) {
      const sub = path.join(dir, split);
      if (!fs.existsSync(sub))
        throw new DataError(`env.split_dir ${dir} has no ${split}/ directory; it needs train/, val/ and test/`);
      const file = exactlyOneDataFile(sub, `split directory`);
      const loaded = await toItems(await readRecords(file), reader, split, leftOut);
      checkLoaded(split, loaded, leftOut, file, 'add items to it');
      groups[split] = loaded;
    }
    checkUniqueIds(SPLIT_NAMES.map((s) => groups[s]!));
    result = { mode: 'split_dir', source: dir, ...itemsOf(groups) };
  } else {
    result = await ratioSplit(opts, reader, leftOut);
  }
  if (config.limit > 0) {
    for (const split of SPLIT_NAMES) result[split] = result[split].slice(0, config.limit);
  }
  const warnings: string[] = [];
  if (leftOut.length) {
    const kept = SPLIT_NAMES.reduce((n, s) => n + result[s].length, 0);
    const listed = result.generatedDir
      ? `; all of them are listed in ${path.join(result.generatedDir, 'split_manifest.json')}`
      : '';
    const hint = reader.leftOutHint ? `. ${reader.leftOutHint()}` : '';
    warnings.push(`${describeLeftOut(`env '${opts.env}'`, leftOut, kept + leftOut.length)}${hint}${listed}`);
  }
  return { ...result, leftOut, warnings };
}

function itemsOf(groups: Partial<Record<SplitName, Loaded[]>>): Splits {
  return {
    train: groups.train!.map((l) => l.item),
    val: groups.val!.map((l) => l.item),
    test: groups.test!.map((l) => l.item),
  };
}

/** A seeded shuffle cut by `ratio` (largest-remainder counts), in order train | val | test. */
export function splitByRatio<T>(
  items: readonly T[],
  ratio: string,
  seed: number,
): { groups: Record<SplitName, T[]>; counts: number[] } {
  const shuffled = new Rng(seed).shuffle(items);
  const counts = largestRemainder(shuffled.length, parseRatio(ratio));
  return {
    counts,
    groups: {
      train: shuffled.slice(0, counts[0]),
      val: shuffled.slice(counts[0], counts[0]! + counts[1]!),
      test: shuffled.slice(counts[0]! + counts[1]!),
    },
  };
}

async function ratioSplit(
  opts: SplitOptions,
  reader: ItemReader,
  leftOut: LeftOutRecord[],
): Promise<Omit<LoadedSplits, 'leftOut' | 'warnings'>> {
  const { config, resolve } = opts;
  const dataPath = resolve('data_path', config.data_path);
  if (!fs.existsSync(dataPath)) throw new DataError(notFound(opts, 'data_path', config.data_path, dataPath));
  let records: RawRecord[];
  if (reader.readRaw) {
    records = await reader.readRaw(dataPath);
  } else if (fs.statSync(dataPath).isDirectory()) {
    if (SPLIT_NAMES.every((s) => fs.existsSync(path.join(dataPath, s)))) {
      throw new DataError(
        `env.data_path ${dataPath} already holds train/, val/ and test/: use it as env.split_dir (split_mode: split_dir) instead`,
      );
    }
    records = await readRecords(exactlyOneDataFile(dataPath, 'env.data_path directory'));
  } else {
    records = await readRecords(dataPath);
  }
  const loaded = await toItems(records, reader, undefined, leftOut);
  if (loaded.length === 0 && leftOut.length)
    throw new DataError(`no item of ${dataPath} is left: all ${leftOut.length} were left out: ${listLeftOut(leftOut)}`);
  checkUniqueIds([loaded]);
  const { groups, counts } = splitByRatio(loaded, config.split_ratio, config.split_seed);
  for (const split of SPLIT_NAMES) {
    checkNonEmpty(
      split,
      groups[split],
      `${loaded.length} items of ${dataPath} cut ${config.split_ratio}`,
      'add data or change env.split_ratio',
    );
  }
  const ratioTag = config.split_ratio
    .split(':')
    .map((p) => p.trim())
    .join('-');
  const outDir = config.split_output_dir
    ? resolve('split_output_dir', config.split_output_dir)
    : opts.outRoot
      ? path.join(opts.outRoot, '_generated_splits', `${opts.env}_${ratioTag}_seed${config.split_seed}`)
      : undefined;
  if (outDir) {
    for (const split of SPLIT_NAMES) {
      writeJsonAtomic(
        path.join(outDir, split, 'items.json'),
        groups[split].map(({ item, rec }) => (reader.stored ? reader.stored(item, rec) : item)),
      );
    }
    writeJsonAtomic(path.join(outDir, 'split_manifest.json'), {
      source_data_path: dataPath,
      split_mode: 'ratio',
      split_ratio: config.split_ratio,
      split_seed: config.split_seed,
      counts: { train: counts[0], val: counts[1], test: counts[2] },
      ids: Object.fromEntries(SPLIT_NAMES.map((s) => [s, groups[s].map((l) => l.item.id)])),
      ...(leftOut.length ? { left_out: leftOut } : {}),
    });
  }
  return { mode: 'ratio', source: dataPath, generatedDir: outDir, ...itemsOf(groups) };
}
