/**
 * The documents a replayed task runs under: the skill being trained and the fixed ones beside
 * it (the project's memory file, other skills), as a chat model reads them (in the system
 * prompt) and as an agent target gets them (the skill installed where the agent reads skills,
 * the memory file in its workspace).
 */
import type { WorkspaceFile } from '../../model/types.ts';

export interface ReplayDocument {
  /** A skill's name, or the memory file's name (`CLAUDE.md`, `AGENTS.md`). */
  name: string;
  kind: 'skill' | 'memory';
  text: string;
}

/** The documents as the system prompt shows them. */
export function documentsText(docs: ReplayDocument[]): string {
  const shown = docs.filter((d) => d.text.trim());
  if (shown.length === 0) return '(no guidance yet)';
  return shown
    .map((d) => `## ${d.kind === 'skill' ? `Skill: ${d.name}` : `Project notes (${d.name})`}\n\n${d.text.trim()}`)
    .join('\n\n');
}

/** What an agent target installs: the first skill as its skill, memory files in its workspace. */
export function agentDocuments(docs: ReplayDocument[]): { skill?: string; workspaceFiles: WorkspaceFile[] } {
  const skill = docs.find((d) => d.kind === 'skill' && d.text.trim());
  const workspaceFiles = docs
    .filter((d) => d.kind === 'memory' && d.text.trim())
    .map((d) => ({ path: d.name, content: d.text }));
  return { skill: skill ? documentsText([skill]) : undefined, workspaceFiles };
}
