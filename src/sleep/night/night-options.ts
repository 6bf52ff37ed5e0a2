/** What a night is given (the config, the harvest, the state folder, the backend, the budget) and how it can end. */
import type { ChatModel } from '../../model/types.ts';
import type { LoadedSleepConfig } from '../config.ts';
import type { ResolvedHarvest } from '../harvest/options.ts';
import type { NightReport } from '../staging/report.ts';

/** Exit code of a handoff night whose prompts wait for answers (the original's): `skillopt sleep run` exits with it, and the MCP tool takes it for a result. */
export const EXIT_HANDOFF_PENDING = 3;

export interface NightOptions {
  loaded: LoadedSleepConfig;
  /** The harvest's sources, scope, window and limit (the window is the last night's end unless `--since` set it). */
  harvest: ResolvedHarvest;
  /** Whether `--since` was given (else the window starts where the project's last night ended). */
  sinceGiven: boolean;
  stateDir: string;
  /** `--backend`. */
  backend?: string;
  budget?: Partial<{ max_usd: number; max_tokens: number; max_minutes: number; max_calls: number }>;
  tasksFile?: string;
  environment?: Record<string, string | undefined>;
  /** The models to use instead of building them (tests). */
  override?: Partial<Record<'target' | 'optimizer' | 'judge', ChatModel>>;
  /** The command that runs this night again (for the handoff's instructions). */
  rerun: string;
  say: (line: string) => void;
  warn: (message: string) => void;
  forceUnlock?: boolean;
}

export type NightOutcome =
  | { status: 'staged'; dir: string; report: NightReport }
  | { status: 'no_tasks'; dir?: string; sessions: number }
  | { status: 'stopped'; dir?: string; message: string }
  | { status: 'handoff_pending'; dir: string; prompts: number; file: string }
  /** The machine was busy: a training run or an evaluation was going, or another night held the lock. Nothing ran. */
  | { status: 'skipped'; reason: string };

/** The project a night is for: the one folder in scope ('' for every project). */
export function nightProject(h: ResolvedHarvest): string {
  return h.scope.kind === 'projects' ? h.scope.roots[0]! : '';
}
