/**
 * What every source does to the text it reads: telling a user's own prompt from a command or
 * injected context, spotting the user's feedback, and naming tools.
 */

/** A whole text that is one tag block: `<environment_context>…</environment_context>`, `<command-name>…`. */
const WRAPPED = /^<([A-Za-z_][\w:-]*)(?:\s[^>]*)?>[\s\S]*<\/\1>$/;

/**
 * Whether a user text is not a prompt the user wrote for the task: empty, one tag block of
 * injected context, a slash command (`/clear`, `/model opus`), a local command's output or
 * caveat, an interruption notice, a pasted-text placeholder.
 */
export function isMetaPrompt(text: string): boolean {
  const t = text.trim();
  if (!t) return true;
  if (WRAPPED.test(t)) return true;
  if (/^\/[\w:.-]+(?:\s+\S+){0,2}$/.test(t)) return true;
  if (/^(?:Caveat:|\[Request interrupted|\[Pasted text)/.test(t)) return true;
  return /<(?:command-name|command-message|command-args|local-command-stdout|local-command-stderr)>/.test(
    t.slice(0, 300),
  );
}

/** Removes `<system-reminder>…</system-reminder>` blocks, which agents add to the user's turn. */
export function withoutReminders(text: string): string {
  return text.replace(/<system-reminder>[\s\S]*?<\/system-reminder>/g, '').trim();
}

const NEGATIVE = [
  'still broken',
  'still not working',
  'still wrong',
  'still failing',
  'still fails',
  "doesn't work",
  'does not work',
  'not working',
  "that's wrong",
  'thats wrong',
  'wrong',
  'incorrect',
  'nope',
  'fix it',
  'not fixed',
  'broken',
  'revert',
  'undo that',
  'error again',
  'try again',
];
const POSITIVE = [
  'thanks',
  'thank you',
  'perfect',
  'great',
  'works now',
  'that works',
  'it works',
  'lgtm',
  'looks good',
  'nice',
  'awesome',
  'exactly',
];

function phraseList(extra: string | undefined, builtIn: string[]): string[] {
  const more = (extra ?? '')
    .split(',')
    .map((p) => p.trim().toLowerCase())
    .filter(Boolean);
  return [...builtIn, ...more];
}

function mentions(text: string, phrase: string): boolean {
  const escaped = phrase.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(?:^|[^\\p{L}\\p{N}_'])${escaped}(?=$|[^\\p{L}\\p{N}_'])`, 'iu').test(text);
}

/**
 * The user's feedback in one prompt: `neg:<phrase>` and `pos:<phrase>` for each phrase it holds
 * as whole words ("nice" in "service" is not praise). `SKILLOPT_SLEEP_NEG_FEEDBACK` and
 * `SKILLOPT_SLEEP_POS_FEEDBACK` add comma-separated phrases.
 */
export function feedbackSignals(text: string, environment: Record<string, string | undefined> = process.env): string[] {
  const out: string[] = [];
  for (const phrase of phraseList(environment.SKILLOPT_SLEEP_NEG_FEEDBACK, NEGATIVE))
    if (mentions(text, phrase)) out.push(`neg:${phrase}`);
  for (const phrase of phraseList(environment.SKILLOPT_SLEEP_POS_FEEDBACK, POSITIVE))
    if (mentions(text, phrase)) out.push(`pos:${phrase}`);
  return out;
}

/** A tool's name as a plain identifier (runs of other characters become `_`), at most 80 characters. */
export function toolName(name: string): string {
  return name
    .trim()
    .replace(/[^A-Za-z0-9_.:-]+/g, '_')
    .slice(0, 80);
}

/** At most `max` characters, with a marker saying how much was cut. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)} …[${text.length - max} more characters]`;
}

/** The text of a message content: a string, or the `text` of its text blocks joined by blank lines. */
export function contentText(content: unknown, blockTypes: string[] = ['text']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((b) => {
      if (typeof b === 'string') return b;
      if (
        b &&
        typeof b === 'object' &&
        blockTypes.includes(String((b as { type?: unknown }).type)) &&
        typeof (b as { text?: unknown }).text === 'string'
      )
        return (b as { text: string }).text;
      return '';
    })
    .filter(Boolean)
    .join('\n\n');
}
