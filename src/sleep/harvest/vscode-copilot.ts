/**
 * GitHub Copilot Chat in VS Code: `<workspaceStorage>/<workspace id>/chatSessions/<session>.jsonl`
 * (an edit log, replayed by `replayOpLog`; sessions that never changed after their start may be
 * a plain `.json` state), with the workspace's folder in `<workspace id>/workspace.json`
 * (`folder`, a file URI, or `workspace`, the URI of a `.code-workspace` file). Chats of a
 * window with no folder are in `globalStorage/emptyWindowChatSessions/` and belong to no
 * project. A session is `{sessionId, creationDate, requests: [{timestamp, agent, message: {text},
 * response: [parts], modelState: {completedAt}, isSystemInitiated}]}`. The prompt is
 * `message.text`; the answer is the response's markdown parts (`{value}` or `markdownContent`);
 * `toolInvocationSerialized` parts name tools. Requests the system started and requests to other
 * extensions' chat participants are not the user's conversation with Copilot; thinking, tool
 * inputs and outputs and the rendered context in `result` are never read.
 */
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DigestBuilder } from './builder.ts';
import { readJsonFile, subdirectories, walkFiles } from './files.ts';
import { field, str } from './jsonl.ts';
import {
  digestOrEmpty,
  fileCandidate,
  fileScan,
  type Candidate,
  type Locations,
  type ReadResult,
  type Source,
} from './source.ts';
import { replayOpLog } from './vscode-oplog.ts';

/** Chat participants that are Copilot's (its extension, or VS Code's core agent, which names no extension). */
const COPILOT_EXTENSIONS = new Set(['github.copilot-chat', 'github.copilot', 'nullextensiondescription', '']);

function extensionOf(request: unknown): string {
  const id = field(field(request, 'agent'), 'extensionId');
  if (typeof id === 'string') return id.toLowerCase();
  return (str(field(id, '_lower')) || str(field(id, 'value'))).toLowerCase();
}

function markdownOf(part: unknown): string {
  const kind = field(part, 'kind');
  if (kind !== undefined && kind !== 'markdownContent') return '';
  const value = field(part, 'value') ?? field(part, 'content');
  return typeof value === 'string' ? value : str(field(value, 'value'));
}

export function parseVscodeChat(text: string, file: string, project: string): ReadResult {
  const state = file.endsWith('.json') ? safeJson(text) : replayOpLog(text);
  const b = new DigestBuilder(
    'copilot',
    str(field(state, 'sessionId')) || path.basename(file).replace(/\.jsonl?$/, ''),
    file,
  );
  b.where(project);
  b.time(field(state, 'creationDate'));
  const requests = field(state, 'requests');
  for (const request of Array.isArray(requests) ? requests : []) {
    if (!request || typeof request !== 'object') continue;
    if (field(request, 'isSystemInitiated') === true || !COPILOT_EXTENSIONS.has(extensionOf(request))) continue;
    if (!b.userText(str(field(field(request, 'message'), 'text')))) continue;
    b.time(field(request, 'timestamp'));
    b.time(field(field(request, 'modelState'), 'completedAt'));
    const response = field(request, 'response');
    if (!Array.isArray(response) || response.length === 0) continue;
    for (const part of response) if (field(part, 'kind') === 'toolInvocationSerialized') b.tool(field(part, 'toolId'));
    b.assistantMessage(response.map(markdownOf).join(''));
  }
  return digestOrEmpty(b.build());
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The folder a workspace's `workspace.json` names, '' for none or a remote one. */
export function workspaceFolder(workspaceJson: unknown): string {
  const toPath = (uri: unknown) => {
    if (typeof uri !== 'string' || !uri.startsWith('file:')) return '';
    try {
      return fileURLToPath(uri);
    } catch {
      return '';
    }
  };
  const folder = toPath(field(workspaceJson, 'folder'));
  if (folder) return folder;
  const workspace = toPath(field(workspaceJson, 'workspace'));
  return workspace ? path.dirname(workspace) : '';
}

/** VS Code's workspace storage folders on this platform (stable and Insiders; a portable install first). */
export function defaultVscodeStorage(
  environment: Record<string, string | undefined>,
  platform = process.platform,
  home = os.homedir(),
): string[] {
  const bases: string[] = [];
  if (environment.VSCODE_PORTABLE) bases.push(path.join(environment.VSCODE_PORTABLE, 'user-data'));
  const appData =
    platform === 'win32'
      ? (environment.APPDATA ?? path.join(home, 'AppData', 'Roaming'))
      : platform === 'darwin'
        ? path.join(home, 'Library', 'Application Support')
        : environment.XDG_CONFIG_HOME || path.join(home, '.config');
  for (const name of ['Code', 'Code - Insiders']) bases.push(path.join(appData, name));
  return bases.map((b) => path.join(b, 'User', 'workspaceStorage'));
}

const isChatFile = (n: string) => n.endsWith('.jsonl') || n.endsWith('.json');

export const vscodeCopilotSource: Source = {
  name: 'copilot',
  scan(locations: Locations) {
    const candidates: Candidate[] = [];
    const roots: string[] = [];
    for (const storage of locations.vscodeStorage) {
      roots.push(storage);
      for (const ws of subdirectories(storage)) {
        const project = workspaceFolder(readJsonFile(path.join(ws, 'workspace.json')));
        for (const f of walkFiles(path.join(ws, 'chatSessions'), { file: isChatFile, maxDepth: 0 }))
          candidates.push(fileCandidate(f, (text, file) => parseVscodeChat(text, file, project)));
      }
      const empty = path.join(path.dirname(storage), 'globalStorage', 'emptyWindowChatSessions');
      for (const f of walkFiles(empty, { file: isChatFile, maxDepth: 0 }))
        candidates.push(fileCandidate(f, (text, file) => parseVscodeChat(text, file, '')));
    }
    return fileScan('copilot', roots, candidates);
  },
};
