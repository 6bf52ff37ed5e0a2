/**
 * Claude Code: `<claude home>/projects/<project slug>/<session id>.jsonl`, one record a line.
 * `user` and `assistant` records carry the conversation (`message.content` a string or a list of
 * blocks; one API message is often written as several records sharing `message.id`, one block
 * each); everything else (`summary`, `attachment`, `system`, `queue-operation`, `last-prompt`,
 * `mode`, `ai-title`, types of newer versions) is bookkeeping, except the files listed by
 * `file-history-snapshot` (`snapshot.trackedFileBackups`) and `file-history-delta`. Sub-agents'
 * transcripts (`<session>/subagents/agent-*.jsonl`, and `isSidechain` records of older versions)
 * belong to their parent session and are not sessions of their own. Tool results, thinking,
 * skill bodies and other injected turns (`isMeta`, compaction summaries) are never read.
 */
import path from 'node:path';
import { DigestBuilder } from './builder.ts';
import { walkFiles } from './files.ts';
import { field, parseJsonl, str, type JsonRecord } from './jsonl.ts';
import { digestOrEmpty, fileCandidate, fileScan, type Locations, type ReadResult, type Source } from './source.ts';
import { contentText, withoutReminders } from './text.ts';

function userTurn(b: DigestBuilder, r: JsonRecord, message: unknown): void {
  if (r.isMeta === true || r.isCompactSummary === true || r.isVisibleInTranscriptOnly === true) return;
  const content = field(message, 'content');
  const text = withoutReminders(contentText(content));
  if (text) b.userText(text);
}

function assistantTurn(b: DigestBuilder, r: JsonRecord, message: unknown, seen: Set<string>): void {
  if (r.isApiErrorMessage === true) {
    b.signal('neg:claude_api_error');
    return;
  }
  if (field(message, 'model') === '<synthetic>') return;
  const id = str(field(message, 'id')) || str(r.uuid);
  if (!seen.has(id)) {
    seen.add(id);
    b.assistantMessage();
  }
  const content = field(message, 'content');
  if (typeof content === 'string') {
    b.assistantText(content, id);
    return;
  }
  if (!Array.isArray(content)) return;
  for (const block of content) {
    const type = field(block, 'type');
    if (type === 'text') b.assistantText(str(field(block, 'text')), id);
    else if (type === 'tool_use') {
      const name = field(block, 'name');
      b.tool(name);
      if (name === 'Skill') b.skill(field(field(block, 'input'), 'skill'));
    }
  }
}

export function parseClaudeTranscript(text: string, file: string): ReadResult {
  const b = new DigestBuilder('claude', path.basename(file, '.jsonl'), file);
  const seen = new Set<string>();
  for (const r of parseJsonl(text).records) {
    if (r.isSidechain === true) continue;
    const type = r.type;
    if (type === 'file-history-snapshot') {
      const tracked = field(field(r, 'snapshot'), 'trackedFileBackups');
      if (tracked && typeof tracked === 'object') for (const f of Object.keys(tracked)) b.file(f);
      continue;
    }
    if (type === 'file-history-delta') {
      b.file(r.trackingPath);
      continue;
    }
    if (type !== 'user' && type !== 'assistant') continue;
    b.where(r.cwd, r.gitBranch);
    b.time(r.timestamp);
    const message = r.message;
    const role = field(message, 'role') ?? type;
    if (role === 'user') userTurn(b, r, message);
    else if (role === 'assistant') assistantTurn(b, r, message, seen);
  }
  return digestOrEmpty(b.build());
}

export const claudeSource: Source = {
  name: 'claude',
  scan(locations: Locations) {
    const root = path.join(locations.claudeHome, 'projects');
    const files = walkFiles(root, {
      file: (n) => n.endsWith('.jsonl') && !n.startsWith('agent-'),
      skipDir: (n) => n === 'subagents',
      maxDepth: 1,
    });
    return fileScan(
      'claude',
      [root],
      files.map((f) => fileCandidate(f, parseClaudeTranscript)),
    );
  },
};
