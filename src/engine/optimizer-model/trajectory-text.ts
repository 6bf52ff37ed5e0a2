/** How a trajectory reads in the optimizer's prompts (reference §7.3). */
import type { ConversationEntry, Trajectory } from '../../envs/types.ts';
import { traceText } from '../../model/harness/trace.ts';
import type { TrajectoryView } from '../../protocol/optimizer.ts';

function line(entry: ConversationEntry): string {
  if ('cmd' in entry) return `[action] ${entry.cmd}\n[obs]    ${entry.obs}`;
  if ('step' in entry) {
    const think = entry.reasoning ? `[step ${entry.step} think] ${entry.reasoning}\n` : '';
    return `${think}[step ${entry.step} action] ${entry.action}\n[step ${entry.step} obs]    ${entry.env_feedback}`;
  }
  if (entry.role === 'system') return `[verification] ${entry.content}`;
  return `[${entry.role}] ${entry.content}`;
}

export function renderConversation(conversation: ConversationEntry[] | undefined): string {
  return (conversation ?? []).map(line).join('\n');
}

const show = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

export function trajectoryView(t: Trajectory): TrajectoryView {
  return {
    id: t.id,
    task: t.task ?? '',
    taskType: t.taskType ?? '',
    predicted: show(t.predicted ?? ''),
    expected: show(t.expected ?? ''),
    hard: t.hard,
    soft: t.soft,
    failReason: t.failReason ?? '',
    text: renderConversation(t.conversation),
  };
}

/** What an agent target did, run by run: the tools it called, the files it named, what failed. */
export function renderTraces(t: Trajectory): string {
  const traces = t.traces ?? [];
  return traces
    .map((trace, i) => {
      const head = `${traces.length > 1 ? `Run ${i + 1} of ${traces.length}: ` : ''}${trace.agent}, ${trace.steps.length} tool call${trace.steps.length === 1 ? '' : 's'}${trace.exitCode ? `, exit code ${trace.exitCode}` : ''}`;
      return `${head}\n${traceText(trace)}`;
    })
    .join('\n\n');
}

/** One trajectory block of an analyst prompt; with `traces`, an agent target's trace too (before its conversation). */
export function renderTrajectory(t: Trajectory, position: number, options: { traces?: boolean } = {}): string {
  const head = [`### Trajectory ${position} (id=${t.id})`, `Task: ${t.task ?? ''}`, `Task type: ${t.taskType ?? ''}`];
  if (t.failReason) head.push(`Failure reason: ${t.failReason}`);
  head.push(`Score: hard=${t.hard} soft=${t.soft.toFixed(2)}`);
  if (t.userPrompt && t.userPrompt !== t.task) head.push('', '#### Target User Prompt', t.userPrompt);
  if (t.feedback) head.push('', '#### Evaluation', t.feedback);
  const traces = options.traces ? renderTraces(t) : '';
  if (traces) head.push('', '#### Agent Trace', traces);
  return `${head.join('\n')}\n\n${renderConversation(t.conversation)}`;
}
