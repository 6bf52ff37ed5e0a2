/** `1 edit`, `2 edits`; `plural` for nouns that do not just take an s. */
export function count(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}
