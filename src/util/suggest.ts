import { distance } from 'fastest-levenshtein';

/** The closest candidate to `word`, if it is close enough to be a likely typo. */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const d = distance(word.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  const allowed = Math.max(2, Math.floor(word.length / 3));
  return bestDistance <= allowed ? best : undefined;
}

export function didYouMean(word: string, candidates: Iterable<string>): string {
  const match = closest(word, candidates);
  return match ? ` (did you mean '${match}'?)` : '';
}
