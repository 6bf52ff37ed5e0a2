/**
 * Items a benchmark cannot answer with what the user has (an OfficeQA question whose bulletin is
 * not in the document corpus): left out of the splits, counted and named, never silently lost.
 */
import type { SplitName } from '../types.ts';

/** Returned by an env's `toItem` instead of an item: this record is valid but cannot be run here. */
export class LeftOut {
  constructor(
    readonly id: string,
    /** Why, in a few words ("source file not in the document corpus: x.txt"). */
    readonly reason: string,
  ) {}
}

export interface LeftOutRecord {
  id: string;
  /** The split the record was in (none in ratio mode: left out before the split is cut). */
  split?: SplitName;
  reason: string;
}

const SHOWN = 5;

/** The first records left out, with their reasons. */
export function listLeftOut(left: readonly LeftOutRecord[]): string {
  const first = left.slice(0, SHOWN).map((l) => `${l.split ? `${l.split}:` : ''}${l.id} (${l.reason})`);
  return `${first.join(', ')}${left.length > SHOWN ? `, … ${left.length - SHOWN} more` : ''}`;
}

/** One line for the user: how many were left out of how many, and the first ones with their reasons. */
export function describeLeftOut(what: string, left: readonly LeftOutRecord[], total: number): string {
  return `${what}: ${left.length} of ${total} item${total === 1 ? '' : 's'} left out, ${total - left.length} kept: ${listLeftOut(left)}`;
}
