/**
 * A trigger eval set: queries a person might type, each saying whether the skill should load
 * for it. The shape is skill-creator's (`[{"query": ..., "should_trigger": true}]`), read as it
 * is from JSON, and with the same fields from JSON Lines, CSV or TSV (where `should_trigger` is
 * `true`/`false`, `yes`/`no` or `1`/`0`). Optional fields: `id`, `split` (`train`, `val`,
 * `test`: the item stays there), `files` (paths copied into the agent's workspace, relative to
 * the data file), `draft` (`true`: written by `skillopt tasks draft --triggers` and not reviewed
 * yet), `answer` (what a reply to a should-trigger query must give, one or a list: then the task
 * is scored too, and the objective is activation × task success). The queries without a `split` are divided per kind, so that each split holds
 * should- and should-not-trigger queries in the same proportion: `held_out` of each kind is held
 * out (skill-creator's 40% by default), half for the gate (val), half for the final report (test).
 */
import fs from 'node:fs';
import path from 'node:path';
import { DataError } from '../data/errors.ts';
import { readRecords, type RawRecord } from '../data/read.ts';
import { canonicalSplit, largestRemainder } from '../data/splits.ts';
import { Rng } from '../../util/random.ts';
import { goldList } from '../scoring/golds.ts';
import type { Item, SplitName, Splits } from '../types.ts';

export interface TriggerQuery extends Item {
  query: string;
  should_trigger: boolean;
  split?: SplitName;
  /** Absolute paths of the files the query's workspace starts with. */
  files?: string[];
  /** Drafted by a model (`skillopt tasks draft --triggers`) and not yet reviewed by a person. */
  draft?: boolean;
  /** The acceptable answers of a query whose task is scored too. */
  answer?: string[];
}

const TRUE = new Set(['true', 'yes', '1', 'y']);
const FALSE = new Set(['false', 'no', '0', 'n']);

function flag(value: unknown, rec: RawRecord): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number' && (value === 0 || value === 1)) return value === 1;
  const text = typeof value === 'string' ? value.trim().toLowerCase() : undefined;
  if (text !== undefined && TRUE.has(text)) return true;
  if (text !== undefined && FALSE.has(text)) return false;
  throw new DataError(
    `field 'should_trigger' must be true or false (got ${JSON.stringify(value) ?? 'nothing'})`,
    rec.where,
    'should_trigger',
  );
}

function fileList(value: unknown, rec: RawRecord): string[] | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const list = typeof value === 'string' ? value.split(/[;\n]/).map((s) => s.trim()) : value;
  if (!Array.isArray(list) || list.some((f) => typeof f !== 'string' || !f))
    throw new DataError(`field 'files' must be a list of paths (got ${JSON.stringify(value)})`, rec.where, 'files');
  const base = path.dirname(rec.where.file);
  return (list as string[]).map((f) => {
    const abs = path.resolve(base, f);
    if (!fs.existsSync(abs))
      throw new DataError(`field 'files' names ${f}, which is not there (looked for ${abs})`, rec.where, 'files');
    return abs;
  });
}

/** One query from one record; a record that is not one is a DataError naming the field. */
export function triggerQuery(rec: RawRecord): TriggerQuery {
  const f = rec.fields;
  if (typeof f.query !== 'string' || !f.query.trim())
    throw new DataError(
      `field 'query' must be the prompt as a person would type it (a non-empty string)`,
      rec.where,
      'query',
    );
  if (!('should_trigger' in f))
    throw new DataError(
      `missing field 'should_trigger' (true when the skill should load for this query)`,
      rec.where,
      'should_trigger',
    );
  const id =
    f.id === undefined || f.id === null || f.id === ''
      ? `${path.basename(rec.where.file, path.extname(rec.where.file))}:${rec.where.index ?? 0}`
      : String(f.id);
  const should = flag(f.should_trigger, rec);
  const split = typeof f.split === 'string' && f.split.trim() ? canonicalSplit(f.split) : undefined;
  const files = fileList(f.files, rec);
  const answer = f.answer === undefined || f.answer === null || f.answer === '' ? undefined : goldList(f.answer);
  if (answer && answer.length === 0)
    throw new DataError(
      `field 'answer' must be the expected answer, or a list of them (got ${JSON.stringify(f.answer)})`,
      rec.where,
      'answer',
    );
  return {
    id,
    type: should ? 'should_trigger' : 'should_not_trigger',
    query: f.query,
    should_trigger: should,
    ...(split ? { split } : {}),
    ...(files ? { files } : {}),
    ...(f.draft === true || f.draft === 'true' ? { draft: true } : {}),
    ...(answer ? { answer } : {}),
  };
}

/** Every query of a trigger eval set, checked; duplicate ids are refused. */
export async function readTriggerSet(file: string): Promise<TriggerQuery[]> {
  const queries = (await readRecords(file)).map(triggerQuery);
  const seen = new Set<string>();
  for (const q of queries) {
    if (seen.has(q.id)) throw new DataError(`id '${q.id}' appears twice`, { file }, 'id');
    seen.add(q.id);
  }
  if (queries.length === 0) throw new DataError('the trigger eval set holds no query', { file });
  return queries;
}

/**
 * The three splits: items with a `split` stay there; the rest are shuffled by `seed` and cut per
 * kind, `heldOut` of each kind held out and shared between val and test (val gets the odd one).
 */
export function splitTriggers(queries: TriggerQuery[], heldOut: number, seed: number): Splits {
  const out: Record<SplitName, TriggerQuery[]> = { train: [], val: [], test: [] };
  const free: TriggerQuery[] = [];
  for (const q of queries) (q.split ? out[q.split] : free).push(q);
  const rng = new Rng(seed);
  for (const should of [true, false]) {
    const kind = rng.shuffle(free.filter((q) => q.should_trigger === should));
    const held = Math.round(kind.length * heldOut);
    const [val, test] = largestRemainder(held, [1, 1]) as [number, number];
    out.val.push(...kind.slice(0, val));
    out.test.push(...kind.slice(val, val + test));
    out.train.push(...kind.slice(held));
  }
  const warnings: string[] = [];
  for (const split of ['train', 'val', 'test'] as const) {
    const kinds = new Set(out[split].map((q) => q.should_trigger));
    if (out[split].length && kinds.size < 2)
      warnings.push(
        `the ${split} split holds only ${kinds.has(true) ? 'should' : 'should-not'}-trigger queries: its precision or recall cannot be measured`,
      );
  }
  return { ...out, warnings };
}
