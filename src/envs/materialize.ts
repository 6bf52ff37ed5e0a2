/**
 * `skillopt data materialize`: turn a benchmark's published raw data into the split directories
 * its env reads (`<out>/{train,val,test}/items.json` plus `split_manifest.json`).
 *
 * With an id manifest (the original's `data/<bench>_id_split/{train,val,test}/items.json`,
 * records with at least an `id`) the splits are exactly the manifest's: same ids, same order;
 * ids the raw data lacks are listed (an error, unless `allowMissing`, which writes the rest and
 * records the missing ids in `split_manifest.json`). Manifest fields the raw data lacks are kept.
 * Without a manifest the split is a seeded shuffle cut by a ratio, as the split loader's ratio
 * mode does. A benchmark may leave out items that cannot be run with what the user has (OfficeQA
 * with `docs`: the items whose bulletins are not there); they are listed in the manifest, and a
 * split left with no item is an error.
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../errors.ts';
import { writeFileAtomic, writeJsonAtomic } from '../run/atomic.ts';
import { DataError, formatLocation, type Location } from './data/errors.ts';
import { listLeftOut, type LeftOutRecord } from './data/left-out.ts';
import { dataFilesIn, readRecords } from './data/read.ts';
import { SPLIT_NAMES, splitByRatio } from './data/splits.ts';
import type { SplitName } from './types.ts';

/** One raw item, normalised to what the env reads, plus files to write beside the split (images). */
export interface RawItem {
  id: string;
  record: Record<string, unknown>;
  where: Location;
  files?: { path: string; bytes: Uint8Array }[];
  /** Why this item cannot be run with what the user has; it is left out of the splits. */
  leftOut?: string;
}

/** What a benchmark's reader may use besides the raw data. */
export interface ReadOptions {
  /** Directories of the documents the items need (OfficeQA's bulletins). */
  docs?: string[];
}

export interface Materializer {
  benchmark: string;
  /** What `--raw` should point at, for help and errors. */
  rawHelp: string;
  /** Manifest fields tried in turn to find an item's raw id. */
  matchKeys: string[];
  defaultRatio: string;
  /** Whether `docs` applies (the items name documents that must exist). */
  usesDocs?: boolean;
  read(raw: string, options: ReadOptions): Promise<RawItem[]>;
}

const materializers = new Map<string, Materializer>();

export function registerMaterializer(m: Materializer): void {
  materializers.set(m.benchmark, m);
}

export function getMaterializer(name: string): Materializer | undefined {
  return materializers.get(name);
}

export function materializerNames(): string[] {
  return [...materializers.keys()].sort();
}

export interface MaterializeOptions {
  benchmark: string;
  raw: string;
  manifest?: string;
  out: string;
  ratio?: string;
  seed?: number;
  allowMissing?: boolean;
  /** Document directories: items naming a document not there are left out (OfficeQA). */
  docs?: string[];
}

export interface MaterializeReport {
  out: string;
  mode: 'manifest' | 'ratio';
  counts: Record<SplitName, number>;
  missing: Record<SplitName, string[]>;
  leftOut: LeftOutRecord[];
}

interface ManifestEntry {
  keys: string[];
  where: Location;
  fields: Record<string, unknown>;
}

/** The manifest's entries per split, in order; each names the ids it may match. */
async function readManifest(dir: string, matchKeys: string[]): Promise<Record<SplitName, ManifestEntry[]>> {
  if (!fs.existsSync(dir)) throw new DataError(`manifest directory not found: ${dir}`);
  const out = {} as Record<SplitName, ManifestEntry[]>;
  const seen = new Map<string, Location>();
  for (const split of SPLIT_NAMES) {
    const sub = path.join(dir, split);
    if (!fs.existsSync(sub))
      throw new DataError(
        `manifest ${dir} has no ${split}/ directory; an id manifest has train/, val/ and test/, each with an items.json`,
      );
    const files = dataFilesIn(sub);
    if (files.length !== 1)
      throw new DataError(
        `manifest split directory ${sub} should hold exactly one data file (items.json), found ${files.length}`,
      );
    out[split] = (await readRecords(files[0]!)).map((rec) => {
      const keys = matchKeys
        .map((k) => rec.fields[k])
        .filter((v) => v !== undefined && v !== null && v !== '')
        .map(String);
      if (keys.length === 0) throw new DataError(`manifest record has no '${matchKeys[0]}'`, rec.where, matchKeys[0]);
      const before = seen.get(keys[0]!);
      if (before)
        throw new DataError(
          `id '${keys[0]}' appears twice in the manifest (also at ${formatLocation(before)})`,
          rec.where,
          matchKeys[0],
        );
      seen.set(keys[0]!, rec.where);
      return { keys, where: rec.where, fields: rec.fields };
    });
  }
  return out;
}

function indexRaw(items: RawItem[]): Map<string, RawItem> {
  const byId = new Map<string, RawItem>();
  for (const item of items) {
    const before = byId.get(item.id);
    if (before)
      throw new DataError(
        `duplicate id '${item.id}' in the raw data (also at ${formatLocation(before.where)})`,
        item.where,
        'id',
      );
    byId.set(item.id, item);
  }
  return byId;
}

export async function materialize(opts: MaterializeOptions): Promise<MaterializeReport> {
  const m = getMaterializer(opts.benchmark);
  if (!m) throw new UserError(`unknown benchmark '${opts.benchmark}'; known: ${materializerNames().join(', ')}`);
  const raw = path.resolve(opts.raw);
  if (!fs.existsSync(raw)) throw new DataError(`--raw not found: ${raw} (expected ${m.rawHelp})`);
  if (opts.docs?.length && !m.usesDocs)
    throw new UserError(`--docs does not apply to ${opts.benchmark}: its items name no documents`);
  const all = await m.read(raw, { docs: opts.docs?.map((d) => path.resolve(d)) });
  if (all.length === 0) throw new DataError(`no ${opts.benchmark} items in ${raw} (expected ${m.rawHelp})`);
  const byId = indexRaw(all);
  const leftOut: LeftOutRecord[] = [];
  const items = all.filter((i) => !i.leftOut);
  const groups = {} as Record<SplitName, RawItem[]>;
  const missing: Record<SplitName, string[]> = { train: [], val: [], test: [] };
  let mode: MaterializeReport['mode'];
  const ratio = opts.ratio ?? m.defaultRatio;
  const seed = opts.seed ?? 42;
  if (opts.manifest) {
    mode = 'manifest';
    const manifest = await readManifest(path.resolve(opts.manifest), m.matchKeys);
    for (const split of SPLIT_NAMES) {
      groups[split] = [];
      for (const entry of manifest[split]) {
        const hit = entry.keys.map((k) => byId.get(k)).find(Boolean);
        // The raw record wins; the manifest fills in fields the raw data lacks.
        if (hit?.leftOut) leftOut.push({ id: hit.id, split, reason: hit.leftOut });
        else if (hit) groups[split].push({ ...hit, record: { ...entry.fields, ...hit.record } });
        else missing[split].push(entry.keys[0]!);
      }
    }
    const absent = SPLIT_NAMES.flatMap((s) => missing[s].map((id) => `${s}:${id}`));
    if (absent.length && !opts.allowMissing) {
      const shown = absent.slice(0, 20).join(', ');
      throw new DataError(
        `${absent.length} manifest id${absent.length > 1 ? 's are' : ' is'} not in the raw data ${raw}: ${shown}${absent.length > 20 ? `, … (${absent.length - 20} more)` : ''}. Check --raw (it should hold every split of the published data), or pass --allow-missing to write the splits without them`,
      );
    }
    for (const split of SPLIT_NAMES) {
      const lost = leftOut.filter((l) => l.split === split);
      if (groups[split].length === 0 && lost.length)
        throw new DataError(
          `split '${split}' has no item left: all ${lost.length} were left out: ${listLeftOut(lost)}`,
        );
    }
  } else {
    mode = 'ratio';
    for (const i of all) if (i.leftOut) leftOut.push({ id: i.id, reason: i.leftOut });
    if (items.length === 0)
      throw new DataError(`no item of ${raw} is left: all ${leftOut.length} were left out: ${listLeftOut(leftOut)}`);
    Object.assign(groups, splitByRatio(items, ratio, seed).groups);
    for (const split of SPLIT_NAMES)
      if (groups[split].length === 0)
        throw new DataError(`split '${split}' would be empty: ${items.length} items cut ${ratio}; change --ratio`);
  }
  const out = path.resolve(opts.out);
  for (const split of SPLIT_NAMES) {
    for (const item of groups[split])
      for (const f of item.files ?? []) writeFileAtomic(path.join(out, f.path), f.bytes);
    writeJsonAtomic(
      path.join(out, split, 'items.json'),
      groups[split].map((i) => i.record),
    );
  }
  const counts = { train: groups.train.length, val: groups.val.length, test: groups.test.length };
  writeJsonAtomic(path.join(out, 'split_manifest.json'), {
    benchmark: opts.benchmark,
    source_raw: raw,
    ...(opts.manifest
      ? { source_manifest_dir: path.resolve(opts.manifest) }
      : { split_mode: 'ratio', split_ratio: ratio, split_seed: seed }),
    counts,
    ...(SPLIT_NAMES.some((s) => missing[s].length) ? { missing } : {}),
    ...(opts.docs?.length ? { docs: opts.docs.map((d) => path.resolve(d)) } : {}),
    ...(leftOut.length ? { left_out: leftOut } : {}),
    item_fields: [...new Set(items.flatMap((i) => Object.keys(i.record)))],
  });
  return { out, mode, counts, missing, leftOut };
}
