/**
 * What SkillOpt-Sleep asks models, as the structured payloads its prompts are rendered from
 * (`ChatRequest.meta`): mining a session into tasks, attempting a task under the documents, and
 * judging an answer against a rubric. Providers never read these; the simulator answers from
 * them, as it answers the trainer's requests from theirs.
 */

/** A rule check of a mined task: an operator and its argument. */
export interface CheckView {
  op: string;
  arg: string | number | null;
}

export interface SleepMineMeta {
  kind: 'sleep_mine';
  project: string;
  prompts: string[];
  final: string;
  feedback: string[];
  /** Most tasks the reply may hold. */
  maxTasks: number;
}

export interface SleepAttemptMeta {
  kind: 'sleep_attempt';
  task: {
    id: string;
    intent: string;
    context: string;
    reference_kind: string;
    reference: string;
    checks: CheckView[];
  };
}

export interface SleepJudgeMeta {
  kind: 'sleep_judge';
  rubric: string;
  response: string;
}

export type SleepMeta = SleepMineMeta | SleepAttemptMeta | SleepJudgeMeta;

const KINDS: readonly unknown[] = ['sleep_mine', 'sleep_attempt', 'sleep_judge'];

/** The payload of a Sleep request, or undefined for another kind of request. */
export function sleepRequest(meta: unknown): SleepMeta | undefined {
  if (meta === null || typeof meta !== 'object' || !('kind' in meta)) return undefined;
  return KINDS.includes(meta.kind) ? (meta as SleepMeta) : undefined;
}
