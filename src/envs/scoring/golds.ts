/** The acceptable answers of an item, as a list of strings, from whatever shape the data gives. */

/**
 * A string, number or boolean gives one gold; a list gives one per element; a string that is a
 * JSON array of strings (as CSV cells and some exports store lists) gives its elements; an object
 * with `answers` / `ground_truth` / `answer` gives that; list elements that are objects give
 * their `text` / `answer` / `value`.
 */
export function goldList(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') {
    const t = value.trim();
    if (t.startsWith('[') && t.endsWith(']')) {
      try {
        const parsed: unknown = JSON.parse(t);
        if (Array.isArray(parsed)) return parsed.flatMap(goldList);
      } catch {
        // not a JSON list: the text itself is the answer
      }
    }
    return [value];
  }
  if (typeof value === 'number' || typeof value === 'boolean') return [String(value)];
  if (Array.isArray(value)) return value.flatMap(goldList);
  if (typeof value === 'object') {
    const o = value as Record<string, unknown>;
    for (const key of ['answers', 'ground_truth', 'answer', 'text', 'value']) if (key in o) return goldList(o[key]);
    return [JSON.stringify(value)];
  }
  return [String(value)];
}
