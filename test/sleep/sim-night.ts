/**
 * A user's home for whole Sleep nights on the simulator: the Claude Code sessions of
 * `test/fixtures/sleep-night/` (developer corrections of the agent's formats), a hand-written
 * skill they invoked, and a Sleep config; `sleep(...)` runs `skillopt sleep …` as that user.
 */
import fs from 'node:fs';
import path from 'node:path';
import { runCli } from '../helpers/cli.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';
import { homeEnvironment } from './fixture-home.ts';

const SESSIONS = path.resolve(import.meta.dirname, '../fixtures/sleep-night/claude/projects');
/** The project the sessions were held in. */
export const PROJECT = '/home/dev/depot';
export const DEPOT_SKILL =
  "---\nname: depot-records\ndescription: How to answer questions about the depot's records.\n---\n\n# Depot records\n\nLook the site up in the records before answering.\n";

export interface SimNightHome {
  home: string;
  env: Record<string, string>;
  sleep: (...args: string[]) => ReturnType<typeof runCli>;
}

export function simNightHome(config: string): SimNightHome {
  const h = fs.realpathSync(tmpDir('skillopt-night-'));
  fs.cpSync(SESSIONS, path.join(h, '.claude/projects'), { recursive: true });
  writeFiles(h, { '.claude/skills/depot-records/SKILL.md': DEPOT_SKILL, '.config/skillopt/sleep.yaml': config });
  // The user's SKILLOPT_HOME (the activity markers of its runs), apart from ~/.skillopt.
  const env = homeEnvironment(h, { SKILLOPT_HOME: path.join(h, 'skillopt-home') });
  return { home: h, env, sleep: (...args) => runCli(['sleep', ...args], { env, cwd: h }) };
}
