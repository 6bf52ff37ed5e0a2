/**
 * The simulated world's rules: the house conventions an answer must follow (with the phrasings the
 * simulated target understands and those too vague to act on), the harmful directives it also
 * obeys, lines that change nothing, and which directive undoes which convention. A simulation:
 * see `world.ts`.
 */

export const KINDS = ['date', 'money', 'measurement', 'count', 'name', 'percent'] as const;
export type Kind = (typeof KINDS)[number];

export interface Convention {
  id: string;
  kinds: Kind[];
  /** Phrasings the target understands. */
  rules: string[];
  /** Phrasings too vague for the target to act on. */
  vague: string[];
  recognise: RegExp;
}

export const CONVENTIONS: Convention[] = [
  {
    id: 'date_iso',
    kinds: ['date'],
    rules: [
      'Write every date as YYYY-MM-DD.',
      'Dates use the ISO 8601 form, year-month-day (2024-03-05).',
      'Give dates in YYYY-MM-DD format, with zero-padded month and day.',
    ],
    vague: ['Be careful with how dates are written.'],
    recognise: /YYYY-MM-DD|ISO[- ]?8601|year-month-day/i,
  },
  {
    id: 'two_decimals',
    kinds: ['money', 'measurement'],
    rules: [
      'Write amounts and measurements with exactly two decimals (12.50, not 12.5).',
      'Always show two decimal places for money and measured quantities.',
      'Use two digits after the decimal point for amounts and measurements.',
    ],
    vague: ['Format numbers nicely.'],
    recognise: /two decimal|2 decimal|two digits after the decimal/i,
  },
  {
    id: 'no_thousands',
    kinds: ['money', 'measurement', 'count'],
    rules: [
      'Never use thousands separators: write 12345, not 12,345.',
      'Numbers are written without thousands separators.',
      'Do not group digits: no thousands separator in any number.',
    ],
    vague: ['Keep large numbers readable.'],
    recognise:
      /without thousands separators?|no thousands separators?|never use thousands separators?|do not group digits/i,
  },
  {
    id: 'unit_space',
    kinds: ['measurement'],
    rules: [
      'Put the unit symbol after the number, separated by a space (12.50 kg).',
      'Leave a space between the number and its unit.',
      'Measurements: number, one space, unit symbol.',
    ],
    vague: ['Pay attention to units.'],
    recognise: /separated by a space|space between the number and its unit|number, one space, unit/i,
  },
  {
    id: 'lower_case',
    kinds: ['name'],
    rules: [
      'Names are answered in lower case (maple street depot).',
      'Write names entirely in lower-case letters.',
      'Use lowercase for every name you give as an answer.',
    ],
    vague: ['Use consistent capitalisation.'],
    recognise: /lower[- ]?case/i,
  },
  {
    id: 'currency_code',
    kinds: ['money'],
    rules: [
      'Money: the amount followed by the three-letter currency code (1234.50 USD), no currency symbol.',
      'Write money with the ISO currency code after the amount, never a $ sign.',
      'Amounts of money end with a currency code such as USD.',
    ],
    vague: ['Be precise with money amounts.'],
    recognise: /currency code/i,
  },
  {
    id: 'percent_symbol',
    kinds: ['percent'],
    rules: [
      'Give percentages with the % sign and no space (12.5%).',
      'Percentages are written with the percent sign, never the word "percent".',
      'Use the % symbol for percentages.',
    ],
    vague: ['Format percentages properly.'],
    recognise: /% sign|percent sign|% symbol/i,
  },
];

export interface Directive {
  id: string;
  text: string;
  recognise: RegExp;
}

/** Over-generalisations an optimizer can propose; the target obeys them, to its cost. */
export const HARMFUL: Directive[] = [
  {
    id: 'upper_case',
    text: 'Always answer in upper case so that the answer stands out.',
    recognise: /answer in upper case/i,
  },
  { id: 'round_whole', text: 'Round every number to a whole value.', recognise: /round every number/i },
  {
    id: 'group_digits',
    text: 'Group digits with commas (1,234) for readability.',
    recognise: /group digits with commas/i,
  },
  { id: 'spell_months', text: 'Spell out month names in dates for clarity.', recognise: /spell out month names/i },
  { id: 'attach_unit', text: 'Attach the unit directly to the number.', recognise: /attach the unit directly/i },
];

/** Advice that changes nothing but the skill's length. */
export const IRRELEVANT = [
  'Be concise and professional.',
  'Double-check your reasoning before answering.',
  'Read the question carefully before you answer.',
  'Think about what the user is really asking.',
  'Prefer clear, direct answers.',
  'Stay focused on the question asked.',
  'Consider the context of each question.',
  'Answer confidently.',
];

/** The directive that undoes each convention. */
export const CONFLICTS: Record<string, string> = {
  date_iso: 'spell_months',
  two_decimals: 'round_whole',
  no_thousands: 'group_digits',
  unit_space: 'attach_unit',
  lower_case: 'upper_case',
};

/** How a kind of task is named where a skill says when to open a reference file. */
export interface Topic {
  /** Words naming the kind, as the target recognises them. */
  recognise: RegExp;
  /** The kind in the plural ("dates") and as one answer ("a date"), as an optimizer words a pointer. */
  plural: string;
  one: string;
  /** The reference file an optimizer puts the kind's rules in. */
  file: string;
}

export const TOPICS: Record<Kind, Topic> = {
  date: { recognise: /\bdates?\b/i, plural: 'dates', one: 'a date', file: 'references/dates.md' },
  money: {
    recognise: /\bmoney\b|\bprices?\b|\bcosts?\b|\bbudgets?\b|\bcurrenc(?:y|ies)\b/i,
    plural: 'amounts of money',
    one: 'an amount of money',
    file: 'references/money.md',
  },
  measurement: {
    recognise: /\bmeasure(?:ments?|d)?\b|\bunits?\b|\blengths?\b|\bweights?\b|\bdistances?\b/i,
    plural: 'measurements',
    one: 'a measurement',
    file: 'references/measurements.md',
  },
  count: { recognise: /\bcounts?\b|\bhow many\b/i, plural: 'counts', one: 'a count', file: 'references/counts.md' },
  name: { recognise: /\bnames?\b/i, plural: 'names', one: 'a name', file: 'references/names.md' },
  percent: {
    recognise: /\bpercent(?:ages?)?\b|\bshares?\b|\brates?\b/i,
    plural: 'percentages',
    one: 'a percentage',
    file: 'references/percentages.md',
  },
};

/** Verbs of a sentence that sends the reader to a file. */
export const OPEN_VERBS = /\b(?:read|open|see|consult|check|load|refer to|look (?:at|in|up)|turn to)\b/i;

/** Pointers the target understands: when to open `{file}` ({plural} and {one} name the kind). */
export const POINTERS = [
  'For {plural}, read {file}.',
  'When the answer is {one}, open {file} first.',
  'Before answering with {one}, consult {file}.',
];

/** Pointers that say where, not when: the target does not open the file by them. */
export const VAGUE_POINTERS = ['Further notes are kept in {file}.', 'There is more about this in {file}.'];
