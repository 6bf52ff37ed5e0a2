/**
 * Devin: the trajectories the Devin CLI writes (and exports) in the Agent Trajectory Interchange
 * Format, `<data dir>/devin/cli/transcripts/*.json`: `{schema_version: "ATIF-v1.x", session_id,
 * agent, steps: [{step_id, timestamp, source: "user" | "agent" | "system", message, tool_calls:
 * [{function_name, arguments}], observation, reasoning_content}]}`. `message` is a string (or, in
 * later versions, a list of content parts). Observations (tool results) and reasoning are never
 * read. A trajectory records no working folder unless its `extra` does (`cwd`, `workspace`);
 * otherwise it is matched to the configured Devin workspaces by name (the workspace whose folder
 * name its first prompt mentions, or the only one).
 */
import os from 'node:os';
import path from 'node:path';
import { DigestBuilder } from './builder.ts';
import { readJsonFile, walkFiles } from './files.ts';
import { field, str } from './jsonl.ts';
import {
  digestOrEmpty,
  fileScan,
  skipped,
  type Candidate,
  type Locations,
  type ReadResult,
  type Source,
} from './source.ts';
import { contentText } from './text.ts';

function workspaceFor(trajectory: unknown, firstPrompt: string, workspaces: string[]): string {
  for (const holder of [field(trajectory, 'extra'), field(field(trajectory, 'agent'), 'extra')]) {
    const dir = str(field(holder, 'cwd')) || str(field(holder, 'workspace')) || str(field(holder, 'working_directory'));
    if (dir) return dir;
  }
  const named = workspaces.find((w) => {
    const name = path.basename(w);
    return (
      name &&
      new RegExp(`(?:^|[^\\w-])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:$|[^\\w-])`, 'i').test(firstPrompt)
    );
  });
  return named ?? (workspaces.length === 1 ? workspaces[0]! : '');
}

export function parseDevinTrajectory(trajectory: unknown, file: string, workspaces: string[] = []): ReadResult {
  const steps = field(trajectory, 'steps');
  if (!str(field(trajectory, 'schema_version')).startsWith('ATIF') || !Array.isArray(steps))
    return skipped('unreadable');
  const b = new DigestBuilder('devin', str(field(trajectory, 'session_id')) || path.basename(file, '.json'), file);
  let firstPrompt = '';
  for (const step of steps) {
    b.time(field(step, 'timestamp'));
    const text = contentText(field(step, 'message'));
    const source = field(step, 'source');
    if (source === 'user') {
      if (b.userText(text) && !firstPrompt) firstPrompt = text;
    } else if (source === 'agent') {
      b.assistantMessage(text);
      const calls = field(step, 'tool_calls');
      if (Array.isArray(calls)) for (const c of calls) b.tool(field(c, 'function_name'));
    }
  }
  b.where(workspaceFor(trajectory, firstPrompt, workspaces));
  return digestOrEmpty(b.build());
}

/** Where the Devin CLI keeps its trajectories on this platform. */
export function defaultDevinTranscripts(
  environment: Record<string, string | undefined>,
  platform = process.platform,
  home = os.homedir(),
): string {
  const data =
    platform === 'win32'
      ? (environment.LOCALAPPDATA ?? path.join(home, 'AppData', 'Local'))
      : platform === 'darwin'
        ? path.join(home, 'Library', 'Application Support')
        : environment.XDG_DATA_HOME || path.join(home, '.local', 'share');
  return path.join(data, 'devin', 'cli', 'transcripts');
}

export const devinSource: Source = {
  name: 'devin',
  scan(locations: Locations) {
    const root = locations.devinTranscripts;
    const candidates: Candidate[] = walkFiles(root, { file: (n) => n.endsWith('.json'), maxDepth: 1 }).map((f) => ({
      where: f.path,
      updatedMs: f.mtimeMs,
      bytes: f.size,
      read: () => {
        const json = readJsonFile(f.path);
        return json === undefined
          ? skipped('unreadable')
          : parseDevinTrajectory(json, f.path, locations.devinWorkspaces);
      },
    }));
    return fileScan('devin', [root], candidates);
  },
};
