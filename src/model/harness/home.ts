/**
 * The configuration home a CLI runs with. By default a fresh one per harness (per run of
 * skillopt), under the system temp directory, so the user's own settings, skills, instructions,
 * plugins and MCP servers stay out of the rollouts and the rollouts stay out of the user's
 * history; the user's login is carried over (the login file linked, so a token the CLI refreshes
 * is written through to the user's own file). `home: user` runs with the user's own home; any
 * other value is a directory to use as it is. The temporary home is in this process's folder of
 * agent files (temp-root.ts), removed when skillopt exits, or by the next run if it was killed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { agentTempRoot } from './temp-root.ts';

export interface HomeSpec {
  /** 'codex', 'claude', 'copilot': part of the folder name. */
  agent: string;
  /** The user's own home of this CLI (~/.codex), where the login lives. */
  userHome: string;
  /** Files of the user's home linked into the isolated one (the login). */
  link: string[];
  /** Files copied into it (state the CLI keeps beside the login, which it may rewrite). */
  copy?: string[];
}

/** The home to run with: `option` '' = isolated, 'user' = the user's own, else that directory. */
export function cliHome(option: string, spec: HomeSpec): { dir: string; isolated: boolean } {
  if (option === 'user') return { dir: spec.userHome, isolated: false };
  if (option) return { dir: path.resolve(option.replace(/^~(?=$|\/)/, os.homedir())), isolated: false };
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(agentTempRoot(), `skillopt-${spec.agent}-home-`)));
  for (const name of spec.link) {
    const from = path.join(spec.userHome, name);
    if (fs.existsSync(from)) fs.symlinkSync(from, path.join(dir, name));
  }
  for (const name of spec.copy ?? []) {
    const from = path.join(spec.userHome, name);
    if (fs.existsSync(from)) fs.copyFileSync(from, path.join(dir, name));
  }
  return { dir, isolated: true };
}
