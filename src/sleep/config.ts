/**
 * The Sleep configuration: a YAML file in the user's config directory
 * (`$XDG_CONFIG_HOME/skillopt/sleep.yaml`, `~/.config/skillopt/sleep.yaml`, on Windows
 * `%APPDATA%\skillopt\sleep.yaml`), or the file named by `--config` / `SKILLOPT_SLEEP_CONFIG`.
 * Every key is checked as in a training config: an unknown key, a wrong type or a bad value is an
 * error naming the file and the key (with a suggestion for a likely typo). A missing default file
 * means the defaults; a missing named file is an error.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { AuditSchema } from '../config/audit-schema.ts';
import { ConfigError, errorMessage } from '../errors.ts';
import { formatIssues } from '../config/issues.ts';
import { BudgetSchema, CacheSchema, ModelSchema } from '../config/schema.ts';
import { isMapping, type Sources, type Tree } from '../config/tree.ts';
import { didYouMean } from '../util/suggest.ts';
import { SOURCE_NAMES, type SourceName } from './harvest/digest.ts';

const paths = z.union([z.string(), z.array(z.string())]);

export const HarvestConfigSchema = z
  .object({
    /** Which agents to read: 'all' (each that is installed) or a list of source names. */
    sources: z
      .union([z.literal('all'), z.array(z.string()).min(1)], {
        error: `expected 'all' or a list of agents (${SOURCE_NAMES.join(', ')})`,
      })
      .superRefine((value, ctx) => {
        if (value === 'all') return;
        value.forEach((name) => {
          if (!(SOURCE_NAMES as readonly string[]).includes(name))
            ctx.addIssue({
              code: 'custom',
              message: `unknown agent '${name}'${didYouMean(name, SOURCE_NAMES)}; the agents are ${SOURCE_NAMES.join(', ')}`,
            });
        });
      })
      .transform((value) => value as 'all' | SourceName[])
      .default('all'),
    /** 'invoked' (the project of the working directory), 'all', or a list of project folders. */
    projects: z
      .union([z.enum(['invoked', 'all']), z.array(z.string().min(1)).min(1)], {
        error: "expected 'invoked', 'all' or a list of project folders",
      })
      .default('invoked'),
    /** How far back to look when no --since is given; 0 = all history. */
    lookback_hours: z.number().nonnegative().default(72),
    /** The most sessions one harvest keeps (the newest); 0 = no limit. */
    max_sessions: z.number().int().nonnegative().default(120),
    /** Sessions whose first prompt contains one of these are not harvested (other tools' sub-agents). */
    exclude_markers: z.array(z.string().min(1)).default([]),
    claude_home: z.string().default(''),
    codex_home: z.string().default(''),
    copilot_home: z.string().default(''),
    copilot_cli_session_store: z.string().default(''),
    vscode_workspace_storage: paths.default(''),
    cursor_home: z.string().default(''),
    opencode_data: z.string().default(''),
    opencode_db: z.string().default(''),
    pi_home: z.string().default(''),
    devin_transcripts: z.string().default(''),
    devin_workspaces: z.array(z.string()).default([]),
  })
  .strict();

export const MineConfigSchema = z
  .object({
    /** `model`: the optimizer reads each session (the heuristic miner when it finds nothing); `heuristic`: no model. */
    miner: z.enum(['model', 'heuristic']).default('model'),
    /** The most tasks a night trains on. */
    max_tasks: z.number().int().positive().default(40),
    /** Share of tasks held out to validate (val) and to measure (test). */
    val_fraction: z.number().min(0).max(1).default(0.34),
    test_fraction: z.number().min(0).max(1).default(0),
    /** Seed of the split by hash. */
    seed: z.number().int().default(42),
    /** Put the tasks about the managed skill first (when it has text). */
    target_filter: z.boolean().default(true),
  })
  .strict()
  .refine((m) => m.val_fraction + m.test_fraction < 1, {
    message: 'val_fraction + test_fraction must be below 1 (nothing would be left to train on)',
    path: ['val_fraction'],
  });

export const ConsolidateConfigSchema = z
  .object({
    /** Most edits a night applies to one document (the learning rate). */
    edit_budget: z.number().int().positive().default(4),
    /** Attempts per task (K): a task passes when every attempt does. */
    samples: z.number().int().positive().default(1),
    /** Validate each candidate on the val tasks; off takes every edit unchecked. */
    gate: z.boolean().default(true),
    /**
     * The audit of a proposal before it is staged: `leak` (it carries the night's tasks: requests
     * copied, reference answers) and `scorer_gaming` (it mirrors what the tasks' rule judges check).
     */
    audit: AuditSchema.prefault({ checks: ['leak', 'scorer_gaming'] }),
    gate_metric: z.enum(['hard', 'soft', 'mixed']).default('mixed'),
    gate_mixed_weight: z.number().min(0).max(1).default(0.5),
    /** Refuse a candidate that does worse on any one val task, even if better on the whole. */
    no_regression: z.boolean().default(false),
    /** Trajectories per optimizer call. */
    minibatch_size: z.number().int().positive().default(8),
    /** Replays at once. */
    workers: z.number().int().positive().default(4),
  })
  .strict();

export const DocumentsConfigSchema = z
  .object({
    /** The managed skill: its SKILL.md, its folder, or an installed skill (`claude:NAME`, `user:codex:NAME`); '' = <claude_home>/skills/<skill_name>/SKILL.md. */
    skill: z.string().default(''),
    skill_name: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'expected a folder name (letters, digits, . _ -)')
      .default('skillopt-sleep-learned'),
    /** The project's memory file to train too: none, CLAUDE.md or AGENTS.md (in the project's folder). */
    memory: z.enum(['none', 'CLAUDE.md', 'AGENTS.md']).default('none'),
    /** Also train each skill that sessions invoked (found under the skill folders), on those sessions' tasks. */
    fanout: z.boolean().default(false),
    /** More folders holding skills (`<root>/<name>/SKILL.md`), for the fan-out. */
    skill_roots: z.array(z.string()).default([]),
  })
  .strict();

/** Sleep's budget: the training budget's keys, with a token cap by default. */
export const SleepBudgetSchema = BudgetSchema.extend({ max_tokens: z.number().int().nonnegative().default(400_000) });

export const McpConfigSchema = z
  .object({
    /**
     * Let the MCP tools that change things (adopt, rollback, schedule) act without asking when
     * the agent cannot ask the user (no elicitation support). Off: they are refused there.
     */
    act_without_confirmation: z.boolean().default(false),
  })
  .strict();

export const SleepConfigSchema = z
  .object({
    /** Where Sleep keeps its state, harvests and nights; '' = ~/.skillopt-sleep. */
    state_dir: z.string().default(''),
    harvest: HarvestConfigSchema.default(HarvestConfigSchema.parse({})),
    mine: MineConfigSchema.default(MineConfigSchema.parse({})),
    consolidate: ConsolidateConfigSchema.default(ConsolidateConfigSchema.parse({})),
    documents: DocumentsConfigSchema.default(DocumentsConfigSchema.parse({})),
    /** The models, as in a training config: `backend`, and `target`, `optimizer`, `judge` with their settings. */
    model: ModelSchema.default(ModelSchema.parse({})),
    budget: SleepBudgetSchema.default(SleepBudgetSchema.parse({})),
    cache: CacheSchema.default(CacheSchema.parse({})),
    mcp: McpConfigSchema.default(McpConfigSchema.parse({})),
  })
  .strict();

export type SleepConfig = z.infer<typeof SleepConfigSchema>;
export type HarvestConfig = z.infer<typeof HarvestConfigSchema>;

export interface LoadedSleepConfig {
  config: SleepConfig;
  /** Where each key was written, for errors about values checked later (the models). */
  sources: Sources;
  /** The file read, or where the default file would be. */
  file: string;
  exists: boolean;
}

/** The default config file of this user. */
export function defaultSleepConfigPath(
  environment: Record<string, string | undefined> = process.env,
  platform = process.platform,
  home = os.homedir(),
): string {
  const base =
    platform === 'win32'
      ? (environment.APPDATA ?? path.join(home, 'AppData', 'Roaming'))
      : environment.XDG_CONFIG_HOME || path.join(home, '.config');
  return path.join(base, 'skillopt', 'sleep.yaml');
}

/** `~` and `~/…` as the home folder. */
export function expandHome(p: string, home = os.homedir()): string {
  return p === '~' ? home : p.startsWith('~/') || p.startsWith('~\\') ? path.join(home, p.slice(2)) : p;
}

/** Every dotted path of a tree, list items included (`harvest.sources.1`), for naming a bad value. */
function keyPaths(value: unknown, prefix = ''): string[] {
  const entries = Array.isArray(value)
    ? value.map((v, i) => [String(i), v] as const)
    : isMapping(value)
      ? Object.entries(value)
      : [];
  return entries.flatMap(([k, v]) => {
    const p = prefix ? `${prefix}.${k}` : k;
    return [p, ...keyPaths(v, p)];
  });
}

export function loadSleepConfig(
  file?: string,
  environment: Record<string, string | undefined> = process.env,
): LoadedSleepConfig {
  const named = file || environment.SKILLOPT_SLEEP_CONFIG;
  const target = path.resolve(expandHome(named || defaultSleepConfigPath(environment)));
  if (!fs.existsSync(target)) {
    if (named) throw new ConfigError(`${target}: the Sleep config file does not exist`, target);
    return { config: SleepConfigSchema.parse({}), sources: new Map(), file: target, exists: false };
  }
  let raw: unknown;
  try {
    raw = parseYaml(fs.readFileSync(target, 'utf8'));
  } catch (err) {
    throw new ConfigError(`${target}: not valid YAML: ${errorMessage(err)}`, target);
  }
  const tree: Tree = raw === null || raw === undefined ? {} : (raw as Tree);
  if (!isMapping(tree))
    throw new ConfigError(
      `${target}: expected a mapping of keys (${Object.keys(SleepConfigSchema.shape).join(', ')}), got ${Array.isArray(raw) ? 'a list' : typeof raw}`,
      target,
    );
  const result = SleepConfigSchema.safeParse(tree);
  const sources: Sources = new Map(keyPaths(tree).map((p) => [p, { source: target, written: p }]));
  if (!result.success) {
    const key = result.error.issues[0]!.path.join('.');
    throw new ConfigError(formatIssues(result.error.issues, tree, sources, SleepConfigSchema), target, key);
  }
  return { config: result.data, sources, file: target, exists: true };
}
