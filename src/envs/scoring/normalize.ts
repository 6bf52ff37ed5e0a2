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

/** Python's `string.punctuation`. */
const PY_PUNCTUATION = new Set('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~');
/** The characters Python's `str.split()` splits on. */
const PY_WHITESPACE = /[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/;
/** The scale and currency words, as whole words by Python's (Unicode) word boundaries. */
const OFFICEQA_WORDS = /(?<![\p{L}\p{N}_])(?:millions?|billions?|dollars?|nominal)(?![\p{L}\p{N}_])/gu;

/**
 * OfficeQA's numeric-aware normalisation, character for character the original evaluator's:
 * lower case, commas dropped (thousands separators), ASCII punctuation deleted except '.', '-'
 * and '%', the words million(s) / billion(s) / dollar(s) / nominal removed, whitespace
 * collapsed. Deleting (not spacing out) punctuation is what makes "[8.124, 12.852]." two tokens,
 * the second "12.852." (the trailing period stays).
 */
export function officeqaNormalize(text: string): string {
  let kept = '';
  for (const ch of text.toLowerCase().replace(/,/g, ''))
    if (!PY_PUNCTUATION.has(ch) || ch === '.' || ch === '-' || ch === '%') kept += ch;
  return kept.replace(OFFICEQA_WORDS, ' ').split(PY_WHITESPACE).filter(Boolean).join(' ');
}

export type NormalizeMode = 'squad' | 'basic' | 'none';

export function normalizer(mode: NormalizeMode): (text: string) => string {
  if (mode === 'squad') return squadNormalize;
  if (mode === 'basic') return basicNormalize;
  return (t) => t.trim();
}
