/**
 * Text as the audit compares it: words (letters and digits, lower case) with where they are, so
 * that a match found between normalized words can be shown as the text it came from.
 */

export interface Word {
  word: string;
  /** Offset of its first character in the text. */
  start: number;
  end: number;
}

const WORD = /[\p{L}\p{N}]+/gu;

export function wordsOf(text: string): Word[] {
  const out: Word[] = [];
  for (const m of text.matchAll(WORD))
    out.push({ word: m[0].toLowerCase(), start: m.index, end: m.index + m[0].length });
  return out;
}

/** The words of a text joined by single spaces: how two texts are compared. */
export function normalized(text: string): string {
  return wordsOf(text)
    .map((w) => w.word)
    .join(' ');
}

/** Every run of `n` consecutive words, as one string, with the index of its first word. */
export function* ngrams(words: readonly Word[], n: number): Generator<[string, number]> {
  for (let i = 0; i + n <= words.length; i++)
    yield [
      words
        .slice(i, i + n)
        .map((w) => w.word)
        .join(' '),
      i,
    ];
}

/** Where the words `from..to` (inclusive) sit in the text: its line number (1-based) and the text itself. */
export function excerpt(
  text: string,
  words: readonly Word[],
  from: number,
  to: number,
): { line: number; text: string } {
  const start = words[from]!.start;
  const end = words[to]!.end;
  const line = text.slice(0, start).split('\n').length;
  const shown = text.slice(start, end).replace(/\s+/g, ' ');
  return { line, text: shown.length > 160 ? `${shown.slice(0, 157)}...` : shown };
}
