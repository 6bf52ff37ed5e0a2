/**
 * Cursor's agent transcripts: `<cursor home>/projects/<workspace slug>/agent-transcripts/<id>/<id>.jsonl`
 * (earlier builds: `agent-transcripts/<id>.jsonl`, and plain-text `<id>.txt`). A line is
 * `{role, message: {content: [text and tool_use blocks]}}`, or `{type: "turn_ended", status}`,
 * or `{type: "metadata"}`. The user's words are inside `<user_query>…</user_query>`, after the
 * context Cursor attaches (open files, rules). Transcripts have no times: the session ends when
 * its file was last written. The workspace's folder is in `<workspace slug>/.workspace-trusted`
 * (`{workspacePath}`); without it, the slug (the path with every other character a `-`) is
 * matched against the project.
 */
import path from 'node:path';
import { DigestBuilder } from './builder.ts';
import { readJsonFile, subdirectories, walkFiles, type FoundFile } from './files.ts';
import { field, parseJsonl, str } from './jsonl.ts';
import {
  digestOrEmpty,
  fileCandidate,
  fileScan,
  type Candidate,
  type Locations,
  type ReadResult,
  type Source,
} from './source.ts';
import { contentText } from './text.ts';

/** The user's words: the last `<user_query>` block when there is one, else the whole text. */
function userQuery(text: string): string {
  const queries = [...text.matchAll(/<user_query>([\s\S]*?)<\/user_query>/g)];
  return queries.length ? queries.at(-1)![1]!.trim() : text;
}

function sessionIdOf(file: string): string {
  return path.basename(file).replace(/\.(jsonl|txt)$/, '');
}

export function parseCursorTranscript(text: string, file: string, project: string, mtimeMs: number): ReadResult {
  const b = new DigestBuilder('cursor', sessionIdOf(file), file);
  b.where(project);
  b.time(mtimeMs);
  if (file.endsWith('.txt')) return parseCursorText(b, text);
  for (const r of parseJsonl(text).records) {
    if (r.type === 'turn_ended') {
      if (r.status === 'error') b.signal('neg:cursor_turn_error');
      continue;
    }
    const role = r.role ?? field(r.message, 'role');
    const content = field(r.message, 'content');
    if (role === 'user') b.userText(userQuery(contentText(content)));
    else if (role === 'assistant') {
      b.assistantMessage(contentText(content));
      if (Array.isArray(content))
        for (const block of content) if (field(block, 'type') === 'tool_use') b.tool(field(block, 'name'));
    }
  }
  return digestOrEmpty(b.build());
}

/** The plain-text transcripts: `user:` and `assistant:` lines open each turn; `[Tool call] Name` lines name tools. */
function parseCursorText(b: DigestBuilder, text: string): ReadResult {
  const turns = text.split(/^(user|assistant):[ \t]*$/m);
  for (let i = 1; i < turns.length; i += 2) {
    const body = turns[i + 1] ?? '';
    if (turns[i] === 'user') b.userText(userQuery(body));
    else {
      const visible = body
        .split('\n')
        .filter((l) => !/^\[(?:Tool call|Tool result|Thinking)\]/.test(l) && !/^\s{2,}\S/.test(l))
        .join('\n');
      b.assistantMessage(visible);
      for (const m of body.matchAll(/^\[Tool call\]\s+(\S+)/gm)) b.tool(m[1]);
    }
  }
  return digestOrEmpty(b.build());
}

/** A path as Cursor names its workspace folders: every run of other characters than letters and digits becomes `-`. */
export function cursorSlug(p: string): string {
  return p.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
}

export const cursorSource: Source = {
  name: 'cursor',
  scan(locations: Locations) {
    const root = path.join(locations.cursorHome, 'projects');
    const candidates: Candidate[] = [];
    for (const ws of subdirectories(root)) {
      const project = str(field(readJsonFile(path.join(ws, '.workspace-trusted')), 'workspacePath'));
      const files: FoundFile[] = walkFiles(path.join(ws, 'agent-transcripts'), {
        file: (n) => n.endsWith('.jsonl') || n.endsWith('.txt'),
        skipDir: (n) => n === 'subagents',
        maxDepth: 1,
      });
      for (const f of files)
        candidates.push(
          fileCandidate(
            f,
            (text, file) => parseCursorTranscript(text, file, project, f.mtimeMs),
            project ? undefined : path.basename(ws),
          ),
        );
    }
    return fileScan('cursor', [root], candidates);
  },
};
