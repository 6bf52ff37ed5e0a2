/**
 * Scores of an answer against a reference text, with no model: `exactScore` (the reference, as
 * words, appears in the answer) and `keywordSoft` (the share of the reference's words that do).
 */

/** Lower case, everything but letters and digits as spaces, spaces collapsed. */
export function normalizeWords(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_]+/gu, ' ')
    .trim();
}

/** 1 when the normalized reference is (in) the normalized answer, else 0. */
export function exactScore(reference: string, response: string): number {
  const ref = normalizeWords(reference);
  if (!ref) return 0;
  return ` ${normalizeWords(response)} `.includes(` ${ref} `) ? 1 : 0;
}

/** The share of the reference's distinct words (longer than two characters) found in the answer. */
export function keywordSoft(reference: string, response: string): number {
  const words = [
    ...new Set(
      normalizeWords(reference)
        .split(' ')
        .filter((w) => w.length > 2),
    ),
  ];
  if (words.length === 0) return 0;
  const answer = normalizeWords(response);
  return words.filter((w) => answer.includes(w)).length / words.length;
}
