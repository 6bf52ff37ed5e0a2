/**
 * `skillopt mcp`: skillopt's tools for an agent, over the Model Context Protocol (stdio). The
 * Sleep tools (status, dry run, harvest, a night, adopt, rollback, history, schedule) and the training tools (train, run progress, eval)
 * run the `skillopt` CLI's own commands as child processes, so they behave exactly as typed in a
 * terminal; long ones report progress and stop when the call is cancelled. Paths a client sends
 * must lie inside the project the server was started for; the tools that change the user's
 * system ask the user first (see confirm.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { UserError, errorMessage } from '../errors.ts';
import { loadSleepConfig } from '../sleep/config.ts';
import { VERSION } from '../version.ts';
import { runCli, type CliResult } from './cli-process.ts';
import { confirmWithUser } from './confirm.ts';
import { harvestArgs, harvestFlags } from './harvest-args.ts';
import { insideProject } from '../util/project-paths.ts';
import { checkOverrides } from './train-overrides.ts';
import { describeRun, readRun } from './run-progress.ts';
import { registerNightTools } from './sleep-night-tools.ts';
import { outcome, progressSender, tail, text, type Extra } from './tool-results.ts';

export interface McpOptions {
  /** The project the tools work in (default: the working directory). */
  project: string;
  /** The Sleep config file (default: the user's). */
  sleepConfig?: string;
  /** How often a running job's progress is read. */
  pollMs?: number;
}

export function createMcpServer(options: McpOptions): McpServer {
  const project = fs.realpathSync(options.project);
  const pollMs = options.pollMs ?? 1000;
  const server = new McpServer({ name: 'skillopt', version: VERSION }, { capabilities: { tools: {} } });
  const cli = (args: string[], extra: Extra, onLine?: (l: string) => void) =>
    runCli(args, { cwd: project, signal: extra.signal, onLine });
  const guarded = (f: () => Promise<CallToolResult>) =>
    f().catch(
      (err: unknown): CallToolResult =>
        text(err instanceof UserError ? err.message : `failed: ${errorMessage(err)}`, true),
    );
  const configFlag = options.sleepConfig ? ['--config', options.sleepConfig] : [];

  server.registerTool(
    'sleep_dry_run',
    {
      title: 'Sleep: dry run',
      description:
        "What a Sleep harvest would read from your agents' sessions of this project, per agent (sessions, size, time span). Reads only; writes nothing, calls no model.",
      inputSchema: harvestArgs,
      annotations: { readOnlyHint: true },
    },
    (a, extra) =>
      guarded(async () =>
        outcome(
          await cli(['sleep', 'dry-run', '--json', ...harvestFlags(project, a, options.sleepConfig)], extra),
          'the dry run',
        ),
      ),
  );

  server.registerTool(
    'sleep_harvest',
    {
      title: 'Sleep: harvest',
      description:
        "Read your agents' sessions of this project (read-only, secrets redacted) and write their digests to a harvest file in Sleep's state folder.",
      inputSchema: harvestArgs,
    },
    (a, extra) =>
      guarded(async () =>
        outcome(
          await cli(['sleep', 'harvest', '--json', ...harvestFlags(project, a, options.sleepConfig)], extra),
          'the harvest',
        ),
      ),
  );

  const actWithoutConfirmation = () => loadSleepConfig(options.sleepConfig).config.mcp.act_without_confirmation;

  server.registerTool(
    'sleep_schedule',
    {
      title: 'Sleep: schedule the night',
      description:
        'Run Sleep every night for this project on the system scheduler (crontab or a systemd user timer, launchd on macOS). Asks the user to confirm.',
      inputSchema: {
        hour: z.number().int().min(0).max(23).default(3).describe('hour, 0-23'),
        minute: z.number().int().min(0).max(59).default(17).describe('minute, 0-59'),
      },
      annotations: { destructiveHint: false, idempotentHint: true },
    },
    (a, extra) =>
      guarded(async () => {
        const at = `${String(a.hour).padStart(2, '0')}:${String(a.minute).padStart(2, '0')}`;
        const consent = await confirmWithUser(
          server.server,
          `Schedule SkillOpt Sleep to run every night at ${at} for ${project}?`,
          actWithoutConfirmation(),
          extra.signal,
        );
        if (!consent.ok) return text(consent.reason, true);
        return outcome(
          await cli(
            [
              'sleep',
              'schedule',
              '--project',
              project,
              '--hour',
              String(a.hour),
              '--minute',
              String(a.minute),
              ...configFlag,
            ],
            extra,
          ),
          'scheduling',
        );
      }),
  );

  server.registerTool(
    'sleep_unschedule',
    {
      title: 'Sleep: unschedule',
      description: 'Remove the nightly job scheduled for this project (only that). Asks the user to confirm.',
      inputSchema: {},
      annotations: { destructiveHint: true },
    },
    (_a, extra) =>
      guarded(async () => {
        const consent = await confirmWithUser(
          server.server,
          `Remove the nightly SkillOpt Sleep job of ${project}?`,
          actWithoutConfirmation(),
          extra.signal,
        );
        if (!consent.ok) return text(consent.reason, true);
        return outcome(await cli(['sleep', 'unschedule', '--project', project, ...configFlag], extra), 'unscheduling');
      }),
  );

  registerNightTools({ server, project, sleepConfig: options.sleepConfig, cli, guarded, actWithoutConfirmation });

  server.registerTool(
    'train',
    {
      title: 'Train a skill',
      description:
        'Start a skillopt training run from a config file of this project and follow it to its end, reporting progress (steps, stage, scores). Cancelling the call stops the run at a safe point; it can be resumed.',
      inputSchema: {
        config: z.string().min(1).describe('the config file, relative to the project'),
        set: z
          .array(z.string().regex(/^[A-Za-z_][\w.]*=/, 'key=value'))
          .optional()
          .describe(
            "config overrides, key=value (as --set): settings, paths inside the project, and (asked of the user first) a role's backend, base_url or api_key_env",
          ),
        out: z
          .string()
          .min(1)
          .optional()
          .describe(
            'the run directory, relative to the project (default: outputs/mcp/<config name>-<time>); a run already there is resumed',
          ),
      },
    },
    (a, extra) =>
      guarded(async () => {
        const config = insideProject(project, a.config, 'config');
        if (!fs.existsSync(config)) throw new UserError(`config: no such file in the project: ${a.config}`);
        const set = checkOverrides(project, a.set ?? []);
        if (set.endpoints.length) {
          const consent = await confirmWithUser(
            server.server,
            `Train ${a.config} with requests sent elsewhere than its config says: ${set.endpoints.map((e) => JSON.stringify(e)).join(', ')}? A key variable named here is sent to that endpoint.`,
            actWithoutConfirmation(),
            extra.signal,
          );
          if (!consent.ok) return text(consent.reason, true);
        }
        const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
        const out = insideProject(
          project,
          a.out ?? path.join('outputs', 'mcp', `${path.basename(config).replace(/\.[^.]+$/, '')}-${stamp}`),
          'out',
        );
        const send = progressSender(extra);
        let last = '';
        // The run's state is read when the run prints a line (a stage began or ended) and every pollMs (a long stage).
        const update = () => {
          const o = readRun(out);
          if (!o) return;
          const line = describeRun(o);
          if (line === last) return;
          last = line;
          void send(line, o.progress.completedSteps, o.progress.totalSteps);
        };
        const timer = setInterval(update, pollMs);
        let r: CliResult;
        try {
          r = await cli(
            ['train', '--config', config, '--out', out, ...set.items.flatMap((s) => ['--set', s])],
            extra,
            update,
          );
        } finally {
          clearInterval(timer);
        }
        const o = readRun(out);
        const result = outcome(r, 'the training run');
        const head = `run directory: ${path.relative(project, out)}\n${o ? `${describeRun(o)}\n` : ''}`;
        return {
          ...result,
          content: [{ type: 'text', text: `${head}${(result.content[0] as { text: string }).text}` }],
        };
      }),
  );

  server.registerTool(
    'run_progress',
    {
      title: 'Training run progress',
      description:
        'The state of a training run of this project: status, steps done of the total, the stage it is in, validation and test scores.',
      inputSchema: { run: z.string().min(1).describe('the run directory, relative to the project') },
      annotations: { readOnlyHint: true },
    },
    (a) =>
      guarded(async () => {
        const dir = insideProject(project, a.run, 'run');
        const o = readRun(dir);
        if (!o)
          return text(`${a.run} is not a run directory (no config.json, events.jsonl or history.json there)`, true);
        return {
          content: [{ type: 'text', text: describeRun(o) }],
          structuredContent: {
            status: o.status,
            completed_steps: o.progress.completedSteps,
            total_steps: o.progress.totalSteps ?? null,
            best_score: o.bestScore ?? null,
            test: o.test,
          },
        };
      }),
  );

  server.registerTool(
    'eval',
    {
      title: 'Evaluate skills',
      description:
        "Score one or more skill files of this project on a split of a config's environment (skillopt eval); the first skill is the baseline the others are compared with.",
      inputSchema: {
        config: z.string().min(1).describe('the config file, relative to the project'),
        skills: z.array(z.string().min(1)).min(1).describe('skill files, relative to the project'),
        split: z.enum(['train', 'val', 'test', 'all']).default('test'),
        repeats: z.number().int().min(1).max(100).default(1),
        out: z
          .string()
          .min(1)
          .optional()
          .describe('the output directory, relative to the project (default: outputs/mcp/eval-<time>)'),
      },
    },
    (a, extra) =>
      guarded(async () => {
        const config = insideProject(project, a.config, 'config');
        const skills = a.skills.map((s, i) => insideProject(project, s, `skills[${i}]`));
        const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
        const out = insideProject(project, a.out ?? path.join('outputs', 'mcp', `eval-${stamp}`), 'out');
        const send = progressSender(extra);
        const r = await cli(
          [
            'eval',
            '--config',
            config,
            ...skills.flatMap((s) => ['--skill', s]),
            '--split',
            a.split,
            '--repeats',
            String(a.repeats),
            '--out',
            out,
          ],
          extra,
          (line) => void send(line),
        );
        const summary = path.join(out, 'eval_summary.md');
        const result = outcome(r, 'the evaluation');
        if (r.exitCode === 0 && fs.existsSync(summary))
          return text(`output: ${path.relative(project, out)}\n${tail(fs.readFileSync(summary, 'utf8'))}`);
        return result;
      }),
  );

  return server;
}
