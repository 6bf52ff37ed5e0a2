/**
 * A reply cut off by the output token limit. Before any answer (a reasoning model that spent its
 * tokens thinking) the call fails at once, naming the setting to raise: a retry would be cut off
 * too. In the middle of a structured reply, the call is made once more with twice the room, and
 * the answer pays for both replies; cut off again, it fails the same way.
 */
import type { CallFailure } from './failure.ts';
import { addUsage, InfraError, type ChatRequest, type ChatResponse, type Usage } from './types.ts';

/** The output limit to ask again with after a structured reply was cut off (twice the last), if one can be given. */
export function moreRoom(failure: CallFailure): number | undefined {
  if (failure.kind !== 'truncated' || !failure.cutOff) return undefined;
  const last = failure.cutOff.outputLimit ?? failure.cutOff.usage.output;
  return last > 0 ? 2 * last : undefined;
}

/** An answer that also pays for an earlier attempt's reply (one cut off by the output limit). */
export function withCost(answer: ChatResponse, usage: Usage, costUsd: number | null): ChatResponse {
  const cost =
    answer.costUsd === undefined || answer.costUsd === null || costUsd === null ? null : answer.costUsd + costUsd;
  return { ...answer, usage: addUsage(answer.usage, usage), costUsd: cost };
}

/**
 * The setting that gave a call its output token limit: the call's own (the env's for rollouts,
 * the judge's, the optimizer's for its calls), else the role's.
 */
function outputLimitSetting(label: string, req: ChatRequest): string {
  if (req.maxOutputTokens === undefined) return `${label}.max_output_tokens`;
  if (req.purpose === 'judge') return 'env.scorer.max_output_tokens';
  if (label === 'model.target') return 'env.max_completion_tokens';
  return /rewrite/.test(req.purpose) ? 'model.rewrite_max_completion_tokens' : 'model.optimizer_max_completion_tokens';
}

/** The error of a call given up as cut off; `retried`: it was asked for again with more room. */
export function cutOffError(
  label: string,
  req: ChatRequest,
  failure: CallFailure,
  attempt: number,
  retried?: { room: number; again: CallFailure },
): InfraError {
  const again = retried
    ? retried.again.kind === 'truncated'
      ? `, and again with ${retried.room} output tokens`
      : `; a retry with ${retried.room} output tokens was refused (${retried.again.message})`
    : '';
  return new InfraError(
    `${label}: ${failure.message}${again}: raise ${outputLimitSetting(label, req)}`,
    'truncated',
    attempt,
  );
}
