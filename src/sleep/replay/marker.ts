/**
 * How skillopt's own agent sessions are told from the user's, so that harvest never trains on
 * what skillopt itself ran. Every agent run of skillopt (a rollout, a replay, a chat call through
 * an agent CLI) works in a fresh folder `skillopt-<agent>-XXXXXX` in the system temp directory
 * (`model/harness/workspace.ts`), so a session whose working folder is such a folder is ours.
 * Replays that run elsewhere start their prompt with `REPLAY_PROMPT_MARKER`. Sessions marked by
 * the original SkillOpt-Sleep (its Cursor sentinel) are skipped too.
 */
import os from 'node:os';
import path from 'node:path';
import type { SessionDigest } from '../harvest/digest.ts';

/** The first line of every prompt a Sleep replay sends to an agent outside a harness folder. */
export const REPLAY_PROMPT_MARKER = '[skillopt-sleep replay]';

const PROMPT_MARKERS = [REPLAY_PROMPT_MARKER, '<skillopt_sleep_internal_replay_v1>'];

/** A harness folder's name: `skillopt-<agent>-` and the six characters `mkdtemp` adds. */
const HARNESS_FOLDER = /^skillopt-[a-z][a-z0-9-]*-[A-Za-z0-9]{6}$/;

function tempDirs(): Set<string> {
  const dirs = new Set(['/tmp', '/var/tmp', '/private/tmp', path.resolve(os.tmpdir())]);
  return dirs;
}

/** Whether a folder is (or is inside) a harness folder in a temp directory. */
export function isHarnessFolder(folder: string): boolean {
  if (!folder || !path.isAbsolute(folder)) return false;
  const temps = tempDirs();
  for (let cur = path.resolve(folder); path.dirname(cur) !== cur; cur = path.dirname(cur)) {
    if (!HARNESS_FOLDER.test(path.basename(cur))) continue;
    const parent = path.dirname(cur);
    if (temps.has(parent) || /^(?:T|Temp|tmp)$/i.test(path.basename(parent))) return true;
  }
  return false;
}

/** Whether a session is one of skillopt's own runs. */
export function isOwnSession(digest: Pick<SessionDigest, 'project' | 'user_prompts'>): boolean {
  if (isHarnessFolder(digest.project)) return true;
  const first = digest.user_prompts[0] ?? '';
  return PROMPT_MARKERS.some((m) => first.trimStart().startsWith(m));
}
