/**
 * What an ALFWorld episode shows the target and reads back (reference B.9): the observation as a
 * prompt (at step 0 the observation and the actions on offer; later also the task, the number of
 * steps taken and the last observation/action pairs), the action and reasoning of a reply, and
 * the task type of a game file.
 */
import { envPrompt } from '../prompts.ts';
import { render } from '../template.ts';

export const TASK_TYPES = [
  'pick_and_place',
  'pick_two_obj_and_place',
  'look_at_obj_in_light',
  'pick_heat_then_place_in_recep',
  'pick_cool_then_place_in_recep',
  'pick_clean_then_place_in_recep',
];

/** The task type a game's path names (its folder is `<task type>-<object>-…`), else 'other'. */
export function taskTypeOf(gamefile: string): string {
  return TASK_TYPES.find((t) => gamefile.includes(t)) ?? 'other';
}

/** What follows "Your task is to: " in a game's first observation. */
export function taskOf(observation: string): string {
  const at = observation.indexOf('Your task is to: ');
  return at < 0 ? '' : observation.slice(at + 'Your task is to: '.length).trim();
}

export interface Turn {
  /** The observation the action was chosen on. */
  observation: string;
  action: string;
}

/** The actions on offer, quoted, one a line, without `help`. */
function offered(admissible: string[]): string {
  return admissible
    .filter((a) => a !== 'help')
    .map((a) => `'${a}'`)
    .join('\n ');
}

export function stepPrompt(args: {
  task: string;
  history: Turn[];
  observation: string;
  admissible: string[];
  historyLength: number;
}): string {
  const { history, historyLength } = args;
  if (history.length === 0 || historyLength === 0)
    return render(envPrompt('alfworld', 'step_first'), {
      observation: args.observation,
      admissible: offered(args.admissible),
    });
  const recent = history.slice(-historyLength);
  const first = history.length - recent.length;
  const lines = recent.map(
    (t, i) => `[Observation ${first + i + 1}: '${t.observation}', Action ${first + i + 1}: '${t.action}']`,
  );
  return render(envPrompt('alfworld', 'step'), {
    task: args.task,
    step_count: String(history.length),
    history_length: String(recent.length),
    history: lines.join('\n'),
    current_step: String(history.length + 1),
    observation: args.observation,
    admissible: offered(args.admissible),
  });
}

export interface ParsedReply {
  /** The action to send (lower case), or undefined when the reply names none. */
  action?: string;
  /** The reasoning inside <think>, if any. */
  think?: string;
  /** Whether the reply follows the format (both tags, no CJK characters), as the original records it. */
  wellFormed: boolean;
}

const CJK = /[\u4e00-\u9fff]/;

export function parseReply(reply: string): ParsedReply {
  const action = /<action>([\s\S]*?)<\/action>/i.exec(reply)?.[1]?.trim().toLowerCase();
  const think = /<think>([\s\S]*?)<\/think>/i.exec(reply)?.[1]?.trim();
  return {
    ...(action ? { action } : {}),
    ...(think !== undefined ? { think } : {}),
    wellFormed: action !== undefined && think !== undefined && !CJK.test(reply),
  };
}
