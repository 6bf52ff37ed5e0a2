/** Text normalisations used before comparing an answer with the expected one. */

const ASCII_PUNCTUATION = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g;

/** Lower case, whitespace collapsed, trimmed. */
export function basicNormalize(text: string): string {
  return text.toLowerCase().replace(/\s+/g, ' ').trim();
}

/**
 * The SQuAD evaluation's normalisation: lower case, ASCII punctuation removed, the articles
 * a / an / the removed, whitespace collapsed.
 */
export function squadNormalize(text: string): string {
  return text
    .toLowerCase()
    .replace(ASCII_PUNCTUATION, '')
    .replace(/\b(a|an|the)\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * OfficeQA's numeric-aware normalisation: lower case, commas dropped (thousands separators),
 * punctuation dropped except '.', '-' and '%', the words million(s) / billion(s) / dollar(s) /
 * nominal removed, whitespace collapsed.
 */
export function officeqaNormalize(text: string): string {
  return text
    .toLowerCase()
    .replace(/,/g, '')
    .replace(/[!"#$&'()*+/:;<=>?@[\\\]^_`{|}~]/g, ' ')
    .replace(/\b(millions?|billions?|dollars?|nominal)\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

export type NormalizeMode = 'squad' | 'basic' | 'none';

export function normalizer(mode: NormalizeMode): (text: string) => string {
  if (mode === 'squad') return squadNormalize;
  if (mode === 'basic') return basicNormalize;
  return (t) => t.trim();
}
