/** How a trajectory reads in the optimizer's prompts (reference §7.3). */
import type { ConversationEntry, Trajectory } from '../../envs/types.ts';
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

/** One trajectory block of an analyst prompt. */
export function renderTrajectory(t: Trajectory, position: number): string {
  const head = [`### Trajectory ${position} (id=${t.id})`, `Task: ${t.task ?? ''}`, `Task type: ${t.taskType ?? ''}`];
  if (t.failReason) head.push(`Failure reason: ${t.failReason}`);
  head.push(`Score: hard=${t.hard} soft=${t.soft.toFixed(2)}`);
  if (t.userPrompt && t.userPrompt !== t.task) head.push('', '#### Target User Prompt', t.userPrompt);
  if (t.feedback) head.push('', '#### Evaluation', t.feedback);
  return `${head.join('\n')}\n\n${renderConversation(t.conversation)}`;
}
