/**
 * The simulated world: questions whose answers must follow hidden house conventions (dates as
 * YYYY-MM-DD, two decimals, no thousands separator, …). The simulated target knows every fact
 * but formats answers its own way unless the skill states a convention in words it recognises.
 * It also obeys harmful directives, and the longer the skill, the more often it overlooks a
 * rule. A rule in a reference file of a skill package counts only for the tasks `SKILL.md` says
 * to open that file for (`references.ts`). Everything here is deterministic.
 *
 * This is a simulation, made so that the training loop's mechanisms matter offline; its
 * scores say nothing about any real model.
 */
import { Rng, unitHash } from '../../util/random.ts';
import { CONVENTIONS, HARMFUL, KINDS, type Convention, type Directive, type Kind } from './rules.ts';

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const UNITS = ['kg', 'km', 'L', 'm'];
const PLACES = [
  'Maple Street Depot',
  'Harbor Point Clinic',
  'North Ridge Library',
  'Cedar Lane School',
  'Riverside Market',
  'Old Mill Museum',
  'Summit Park Station',
  'Lakeview Archive',
  'Granite Hall',
  'Willow Creek Farm',
  'Bayside Terminal',
  'Pine Hollow Lodge',
  'Eastgate Warehouse',
  'Silver Birch Studio',
  'Foxglove Gardens',
];

export type Fact =
  | { kind: 'date'; y: number; m: number; d: number }
  | { kind: 'money'; amount: number }
  | { kind: 'measurement'; value: number; unit: string }
  | { kind: 'count'; n: number }
  | { kind: 'name'; name: string }
  | { kind: 'percent'; p: number };

export interface SimTask {
  id: string;
  type: Kind;
  question: string;
  fact: Fact;
  /** Unsolvable: the recorded answer does not follow from the fact. */
  noise: boolean;
}

const QUESTIONS: Record<Kind, string[]> = {
  date: ['When did {place} open?', 'On what date was {place} last inspected?', 'When was the lease of {place} signed?'],
  money: [
    'What was the annual budget of {place}?',
    'How much did the repairs at {place} cost?',
    'What is the insured value of {place}?',
  ],
  measurement: [
    'How long is the access road to {place}?',
    'How heavy was the last delivery to {place}?',
    'How much water does {place} use a day?',
  ],
  count: [
    'How many visitors did {place} have last year?',
    'How many items does {place} hold?',
    'How many parcels passed through {place}?',
  ],
  name: ['Which site is twinned with {place}?', 'Which depot supplies {place}?', 'What is the sister site of {place}?'],
  percent: [
    'What share of the budget of {place} went to maintenance?',
    'By what percentage did visits to {place} grow?',
    'What is the occupancy rate of {place}?',
  ],
};

function makeFact(kind: Kind, rng: Rng): Fact {
  switch (kind) {
    case 'date':
      return { kind, y: rng.int(1960, 2024), m: rng.int(1, 12), d: rng.int(1, 28) };
    case 'money':
      // Always at least 1000 with a non-zero tenth and a zero hundredth, so that separators, decimals and symbols all matter.
      return { kind, amount: rng.int(1000, 99999) + rng.int(1, 9) / 10 };
    case 'measurement':
      return { kind, value: rng.int(1000, 9999) + rng.int(1, 9) / 10, unit: rng.pick(UNITS) };
    case 'count':
      return { kind, n: rng.int(1000, 999999) };
    case 'name':
      return { kind, name: rng.pick(PLACES) };
    case 'percent':
      return { kind, p: rng.int(1, 99) + rng.int(1, 9) / 10 };
  }
}

/** A data set of tasks, with kinds in rotation and a share of unsolvable items. */
export function makeTasks(prefix: string, n: number, seed: number, noise: number): SimTask[] {
  const rng = new Rng(`${prefix}:${seed}`);
  const tasks: SimTask[] = [];
  for (let i = 0; i < n; i++) {
    const kind = KINDS[i % KINDS.length]!;
    const place = rng.pick(PLACES);
    tasks.push({
      id: `${prefix}-${String(i).padStart(4, '0')}`,
      type: kind,
      question: rng.pick(QUESTIONS[kind]).replace('{place}', place),
      fact: makeFact(kind, rng),
      noise: rng.chance(noise),
    });
  }
  return rng.shuffle(tasks);
}

interface Style {
  conventions: Set<string>;
  harmful: Set<string>;
}

function formatNumber(x: number, style: Style, decimalsApply: boolean): string {
  let value = x;
  let text: string;
  if (style.harmful.has('round_whole')) {
    value = Math.round(x);
    text = String(value);
  } else if (decimalsApply && style.conventions.has('two_decimals')) {
    text = value.toFixed(2);
  } else {
    text = String(value);
  }
  const group = style.harmful.has('group_digits') || !style.conventions.has('no_thousands');
  if (group) {
    const [int, frac] = text.split('.');
    text = int!.replace(/\B(?=(\d{3})+(?!\d))/g, ',') + (frac !== undefined ? `.${frac}` : '');
  }
  return text;
}

/** How an answer looks under a set of conventions and directives. */
export function render(fact: Fact, style: Style): string {
  let out: string;
  switch (fact.kind) {
    case 'date':
      out =
        style.conventions.has('date_iso') && !style.harmful.has('spell_months')
          ? `${fact.y}-${String(fact.m).padStart(2, '0')}-${String(fact.d).padStart(2, '0')}`
          : `${MONTHS[fact.m - 1]} ${fact.d}, ${fact.y}`;
      break;
    case 'money': {
      const num = formatNumber(fact.amount, style, true);
      out = style.conventions.has('currency_code') ? `${num} USD` : `$${num}`;
      break;
    }
    case 'measurement': {
      const num = formatNumber(fact.value, style, true);
      out =
        style.conventions.has('unit_space') && !style.harmful.has('attach_unit')
          ? `${num} ${fact.unit}`
          : `${num}${fact.unit}`;
      break;
    }
    case 'count':
      out = formatNumber(fact.n, style, false);
      break;
    case 'name':
      out = style.conventions.has('lower_case') ? fact.name.toLowerCase() : fact.name;
      break;
    case 'percent':
      out = style.conventions.has('percent_symbol') ? `${fact.p}%` : `${fact.p} percent`;
      break;
  }
  return style.harmful.has('upper_case') ? out.toUpperCase() : out;
}

const ALL: Style = { conventions: new Set(CONVENTIONS.map((c) => c.id)), harmful: new Set() };

/** The recorded answer of a task: every convention applied (or, for noise, a different fact). */
export function expectedAnswer(task: SimTask): string {
  if (!task.noise) return render(task.fact, ALL);
  const f = task.fact;
  const shifted: Fact =
    f.kind === 'date'
      ? { ...f, y: f.y + 1 }
      : f.kind === 'money'
        ? { ...f, amount: f.amount + 100 }
        : f.kind === 'measurement'
          ? { ...f, value: f.value + 10 }
          : f.kind === 'count'
            ? { ...f, n: f.n + 7 }
            : f.kind === 'name'
              ? { ...f, name: `${f.name} Annex` }
              : { ...f, p: f.p + 1 };
  return render(shifted, ALL);
}

/** Conventions and directives a skill text states, in words the target recognises. */
export function recognise(text: string): Style {
  return {
    conventions: new Set(CONVENTIONS.filter((c) => c.recognise.test(text)).map((c) => c.id)),
    harmful: new Set(HARMFUL.filter((h) => h.recognise.test(text)).map((h) => h.id)),
  };
}

export function conventionOf(text: string): Convention | undefined {
  return CONVENTIONS.find((c) => c.recognise.test(text));
}

export function directiveOf(text: string): Directive | undefined {
  return HARMFUL.find((h) => h.recognise.test(text));
}

/**
 * Chance that the target overlooks one rule, growing with the skill's length: nothing up to
 * `freeTokens`, then linearly, capped at one half.
 */
export function overlookChance(tokens: number, freeTokens = 200, slope = 1 / 700): number {
  return Math.min(0.5, Math.max(0, (tokens - freeTokens) * slope));
}

/** A reference file the target opened for a task: its path, text and (exact, costly) token count. */
export interface OpenedFile {
  path: string;
  text: string;
  tokens: () => number;
}

/**
 * Whether a rule of `text` is overlooked on a draw: by the chance its length gives. A text has at
 * most as many tokens as UTF-8 bytes (a token is at least one byte), so the chance from its byte
 * length bounds the real one: the exact count (the tokenizer's tables take a fifth of a second to
 * load) is asked only for a draw that falls under that bound.
 */
function overlooker(text: string, tokens: () => number): (draw: number, share: number) => boolean {
  const most = overlookChance(Buffer.byteLength(text, 'utf8'));
  let p: number | undefined;
  return (draw, share) => draw < most * share && draw < (p ??= overlookChance(tokens())) * share;
}

/**
 * The simulated target's answer to a task under a skill. With `noise` > 0 the target is
 * stochastic: on each sample (and run seed), each convention slips with that chance, applied
 * though the skill does not state it or overlooked though it does, so the same skill scores
 * differently from one sample to the next.
 *
 * A convention stated in an `opened` reference file applies as one the skill states, overlooked
 * by the chance the file's own length gives: a file read only for the tasks it serves does not
 * lengthen the skill. Its directives are obeyed too.
 */
export function answer(
  task: Pick<SimTask, 'id' | 'fact'>,
  skill: string,
  opts: {
    tokens: () => number;
    skillKey: string;
    sample?: number;
    reminders?: Set<string>;
    noise?: number;
    seed?: number;
    opened?: OpenedFile[];
  },
): string {
  const stated = recognise(skill);
  const sample = opts.sample ?? 0;
  const share = (c: string) => (opts.reminders?.has(c) ? 0.5 : 1);
  const conventions = new Set<string>();
  const overlooks = overlooker(skill, opts.tokens);
  for (const c of stated.conventions) {
    if (!overlooks(unitHash('overlook', task.id, c, opts.skillKey, sample), share(c))) conventions.add(c);
  }
  const harmful = new Set(stated.harmful);
  for (const file of opts.opened ?? []) {
    const inFile = recognise(file.text);
    const overlooksInFile = overlooker(file.text, file.tokens);
    const fileKey = `${file.path}\n${file.text}`;
    for (const c of inFile.conventions) {
      if (!conventions.has(c) && !overlooksInFile(unitHash('overlook', task.id, c, fileKey, sample), share(c)))
        conventions.add(c);
    }
    for (const h of inFile.harmful) harmful.add(h);
  }
  const noise = opts.noise ?? 0;
  if (noise > 0) {
    for (const c of CONVENTIONS) {
      if (unitHash('slip', task.id, c.id, opts.skillKey, sample, opts.seed ?? 0) >= noise) continue;
      if (conventions.has(c.id)) conventions.delete(c.id);
      else conventions.add(c.id);
    }
  }
  return render(task.fact, { conventions, harmful });
}

/**
 * Which conventions a wrong answer missed, judged from the answer text alone (what an
 * optimizer reading a trajectory can see).
 */
export function diagnose(predicted: string, expected: string): string[] {
  const missed: string[] = [];
  const numPart = (s: string) => s.match(/\d[\d,]*(\.\d+)?/)?.[0] ?? '';
  const iso = /^\d{4}-\d{2}-\d{2}$/;
  if (iso.test(expected) && !iso.test(predicted)) missed.push('date_iso');
  if (/\.\d\d$/.test(numPart(expected)) && !/\.\d\d$/.test(numPart(predicted))) missed.push('two_decimals');
  if (/\d,\d{3}/.test(predicted) && !/\d,\d{3}/.test(expected)) missed.push('no_thousands');
  if (/\d [a-zA-Z]+$/.test(expected) && !expected.endsWith(' USD') && /\d[a-zA-Z]+$/.test(predicted))
    missed.push('unit_space');
  if (/[a-z]/.test(expected) && expected === expected.toLowerCase() && /[A-Z]/.test(predicted))
    missed.push('lower_case');
  if (expected.endsWith(' USD') && predicted.startsWith('$')) missed.push('currency_code');
  if (expected.endsWith('%') && /percent/i.test(predicted)) missed.push('percent_symbol');
  return missed;
}

/** The payload of a rollout request in the sim env: what the simulated target knows of the task. */
export interface SimTaskMeta {
  kind: 'sim_task';
  task: { id: string; fact: Fact };
}

/** The payload of a sim env's rollout request, or undefined for another kind of request. */
export function simTask(meta: unknown): SimTaskMeta | undefined {
  if (meta === null || typeof meta !== 'object' || !('kind' in meta) || meta.kind !== 'sim_task' || !('task' in meta))
    return undefined;
  return meta as SimTaskMeta;
}
