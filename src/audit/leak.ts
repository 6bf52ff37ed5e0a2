/**
 * The leak lint: does a skill's text carry the items it is measured on? Three kinds of evidence,
 * each tied to the item it leaks:
 *
 * - `input`: a long run of words (`INPUT_RUN`) copied from an item's request. Runs shared by
 *   more than two items are the data's boilerplate, not a leak.
 * - `answer`: an item's answer written near words only its request has (a question and its
 *   answer side by side), or anywhere when the answer is long and belongs to at most two items
 *   (a class label such as "yes" alone leaks nothing).
 * - `id`: an item's id, when it is distinctive enough not to be a word or a small number.
 *
 * Pure and deterministic; built once per run over every split, then asked about each text.
 */
import type { SplitName } from '../envs/types.ts';
import type { AuditItem } from './items.ts';
import { excerpt, ngrams, type Word, wordsOf } from './text.ts';

export type LeakKind = 'input' | 'answer' | 'id';

export interface LeakFinding {
  kind: LeakKind;
  item: string;
  split: SplitName;
  /** The package file it is in (`SKILL.md` for the document). */
  file: string;
  line: number;
  /** The leaking text as the file has it. */
  text: string;
}

export interface AuditText {
  file: string;
  text: string;
}

/** Words in a row copied from a request that count as a copy of it. */
export const INPUT_RUN = 12;
/** Words in a row that tie a place in the skill to one request. */
const ANCHOR = 4;
/** How far (in words) from its anchor an answer still counts as written beside it. */
const NEAR = 40;
/** More items than this share a run of words or an answer: it is the data's, not an item's. */
const SHARED = 2;
/** Answers longer than this (in words) are specific enough not to be counted in the requests. */
const MAX_COUNTED = 8;
/** Words of an item's request indexed (requests that are whole documents are read up to here). */
const INDEXED_WORDS = 2000;

const distinctiveId = (id: string) => id.length >= 5 && (/\d/.test(id) || /[-_:./]/.test(id) || id.length >= 8);

interface Indexed {
  item: AuditItem;
  answers: string[][];
  /** The request's words, up to `INDEXED_WORDS`. */
  words: Word[];
}

export class LeakIndex {
  private readonly items: Indexed[];
  /** Runs of `INPUT_RUN` words of at most `SHARED` requests, to those items. */
  private readonly runs = new Map<string, number[]>();
  private readonly anchors = new Map<string, number[]>();
  /** Answers long and rare enough to leak on their own, by their first word. */
  private readonly longAnswers = new Map<string, { at: number; words: string[] }[]>();

  constructor(items: readonly AuditItem[]) {
    this.items = items.map((item) => ({
      item,
      answers: item.answers.map((a) => wordsOf(a).map((w) => w.word)).filter((w) => w.length > 0),
      words: wordsOf(item.input).slice(0, INDEXED_WORDS),
    }));
    const runItems = new Map<string, Set<number>>();
    const anchorItems = new Map<string, Set<number>>();
    const answerItems = new Map<string, Set<number>>();
    this.items.forEach(({ answers, words }, i) => {
      for (const [g] of ngrams(words, INPUT_RUN)) addTo(runItems, g, i);
      for (const [g] of ngrams(words, ANCHOR)) addTo(anchorItems, g, i);
      for (const a of answers) addTo(answerItems, a.join(' '), i);
    });
    keepRare(runItems, this.runs);
    keepRare(anchorItems, this.anchors);
    const inInputs = countInInputs(this.items);
    this.items.forEach(({ answers }, i) => {
      for (const a of answers) {
        const long = a.length >= 3 || a.join(' ').length >= 16;
        const key = a.join(' ');
        // An answer many items share, or that many requests name (a place, a title), is the data's vocabulary.
        if (!long || (answerItems.get(key)?.size ?? 0) > SHARED || (inInputs.get(key) ?? 0) > SHARED) continue;
        const list = this.longAnswers.get(a[0]!) ?? [];
        list.push({ at: i, words: a });
        this.longAnswers.set(a[0]!, list);
      }
    });
  }

  /** What each text leaks: one finding per item and kind, the first place it is found. */
  find(texts: readonly AuditText[]): LeakFinding[] {
    const found = new Map<string, LeakFinding>();
    const add = (kind: LeakKind, at: number, file: string, where: { line: number; text: string }) => {
      const { item } = this.items[at]!;
      const key = `${kind}\u0000${item.id}`;
      if (!found.has(key)) found.set(key, { kind, item: item.id, split: item.split, file, ...where });
    };
    for (const { file, text } of texts) {
      const words = wordsOf(text);
      for (const [g, i] of ngrams(words, INPUT_RUN))
        for (const at of this.runs.get(g) ?? []) add('input', at, file, excerpt(text, words, i, i + INPUT_RUN - 1));
      for (const [g, i] of ngrams(words, ANCHOR))
        for (const at of this.anchors.get(g) ?? []) {
          const hit = this.answerNear(words, i, this.items[at]!.answers);
          if (hit)
            add('answer', at, file, excerpt(text, words, Math.min(i, hit.from), Math.max(i + ANCHOR - 1, hit.to)));
        }
      words.forEach((w, i) => {
        for (const { at, words: a } of this.longAnswers.get(w.word) ?? [])
          if (matchesAt(words, i, a)) add('answer', at, file, excerpt(text, words, i, i + a.length - 1));
      });
      this.items.forEach(({ item }, at) => {
        const where = idIn(text, item.id);
        if (where !== undefined) add('id', at, file, lineAt(text, where, item.id));
      });
    }
    return [...found.values()];
  }

  /** An answer of the item within `NEAR` words of the anchor at `i`, outside the anchor itself. */
  private answerNear(words: Word[], i: number, answers: string[][]): { from: number; to: number } | undefined {
    const from = Math.max(0, i - NEAR);
    const to = Math.min(words.length, i + ANCHOR + NEAR);
    for (const a of answers)
      for (let j = from; j + a.length <= to; j++) {
        const inside = j + a.length > i && j < i + ANCHOR;
        if (!inside && matchesAt(words, j, a)) return { from: j, to: j + a.length - 1 };
      }
    return undefined;
  }
}

/** For each answer of up to `MAX_COUNTED` words, how many requests contain it. */
function countInInputs(items: readonly Indexed[]): Map<string, number> {
  const byLength = new Map<number, Set<string>>();
  for (const { answers } of items)
    for (const a of answers)
      if (a.length <= MAX_COUNTED) {
        const set = byLength.get(a.length) ?? new Set<string>();
        set.add(a.join(' '));
        byLength.set(a.length, set);
      }
  const counts = new Map<string, number>();
  for (const { words } of items) {
    const seen = new Set<string>();
    for (const [n, wanted] of byLength)
      for (const [g] of ngrams(words, n)) if (wanted.has(g) && !seen.has(g)) seen.add(g);
    for (const g of seen) counts.set(g, (counts.get(g) ?? 0) + 1);
  }
  return counts;
}

function addTo(map: Map<string, Set<number>>, key: string, i: number): void {
  const set = map.get(key);
  if (set) set.add(i);
  else map.set(key, new Set([i]));
}

function keepRare(from: Map<string, Set<number>>, into: Map<string, number[]>): void {
  for (const [k, v] of from) if (v.size <= SHARED) into.set(k, [...v]);
}

function matchesAt(words: readonly Word[], i: number, seq: readonly string[]): boolean {
  for (let k = 0; k < seq.length; k++) if (words[i + k]?.word !== seq[k]) return false;
  return true;
}

/** Where a distinctive id stands alone in the text (not inside a longer name). */
function idIn(text: string, id: string): number | undefined {
  if (!distinctiveId(id)) return undefined;
  for (let at = text.indexOf(id); at >= 0; at = text.indexOf(id, at + 1)) {
    const before = text[at - 1];
    const after = text[at + id.length];
    if (!isNameChar(before) && !isNameChar(after)) return at;
  }
  return undefined;
}

const isNameChar = (c: string | undefined) => c !== undefined && /[\p{L}\p{N}_-]/u.test(c);

function lineAt(text: string, at: number, id: string): { line: number; text: string } {
  return { line: text.slice(0, at).split('\n').length, text: id };
}
