/**
 * The MCP tools of Sleep's night: its status (the staged proposal summarised), a night run, the
 * adoption of its proposals and its rollback (both asked of the user first), and the history.
 * Each runs the `skillopt sleep` command a user would type.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { UserError } from '../errors.ts';
import { pendingDocuments } from '../sleep/adoption/adopt.ts';
import { EXIT_HANDOFF_PENDING } from '../sleep/night/night-options.ts';
import { tilde } from '../sleep/harvest/report.ts';
import { safeLine } from '../sleep/staging/report.ts';
import { NIGHT_NAME, nightsDir } from '../sleep/staging/staging.ts';
import type { NightRecord } from '../sleep/state/state.ts';
import { formatStatus, historyRows, type StatusView } from '../sleep/state/status.ts';
import type { CliResult } from './cli-process.ts';
import { confirmWithUser } from './confirm.ts';
import { harvestArgs, harvestFlags } from './harvest-args.ts';
import { outcome, progressSender, text, type Extra } from './tool-results.ts';

export interface NightToolsContext {
  server: McpServer;
  project: string;
  sleepConfig?: string;
  cli: (args: string[], extra: Extra, onLine?: (line: string) => void) => Promise<CliResult>;
  guarded: (f: () => Promise<CallToolResult>) => Promise<CallToolResult>;
  actWithoutConfirmation: () => boolean;
}

/** How much of the staged diff a status call shows. */
const DIFF_CHARS = 12_000;

const nightName = z
  .string()
  .regex(NIGHT_NAME, "a night's name, YYYYMMDD-HHMMSS (as sleep_status and sleep_history show it)");
const score = (v: number | null) => (v === null ? '—' : v.toFixed(3));

/** The JSON a `--json` command printed, or a UserError with what it said instead. */
function json<T>(r: CliResult, what: string): T {
  if (r.exitCode !== 0)
    throw new UserError(`${what} failed (exit ${r.exitCode ?? r.signal}): ${(r.stderr || r.stdout).trim()}`);
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    throw new UserError(`${what} printed no JSON: ${r.stdout.slice(0, 200)}`);
  }
}

export function registerNightTools(c: NightToolsContext): void {
  const { server, project } = c;
  const configFlag = c.sleepConfig ? ['--config', c.sleepConfig] : [];
  const status = async (extra: Extra) =>
    json<StatusView>(
      await c.cli(['sleep', 'status', '--json', '--project', project, ...configFlag], extra),
      'skillopt sleep status',
    );

  server.registerTool(
    'sleep_status',
    {
      title: 'Sleep: status',
      description:
        "What Sleep's nights left for this project: the staged proposal (which skills, the gate's scores, the diff's size), when the last night ran and what it staged, a night skipped because the machine was busy, the nightly schedule. Reads only.",
      inputSchema: { diff: z.boolean().default(false).describe("include the staged proposal's diff") },
      annotations: { readOnlyHint: true },
    },
    (a, extra) =>
      c.guarded(async () => {
        const view = await status(extra);
        let body = formatStatus(view);
        const diff = view.latest?.pending.length ? view.latest.diff : null;
        if (a.diff && diff) {
          const patch = fs.readFileSync(diff.file, 'utf8');
          body += `\n\n${patch.slice(0, DIFF_CHARS)}${patch.length > DIFF_CHARS ? `\n… ${patch.length - DIFF_CHARS} more characters in ${tilde(diff.file)}` : ''}`;
        }
        return {
          content: [{ type: 'text', text: body }],
          structuredContent: view as unknown as Record<string, unknown>,
        };
      }),
  );

  server.registerTool(
    'sleep_run',
    {
      title: 'Sleep: run a night',
      description:
        "Run one night for this project: harvest your agents' sessions, mine tasks, replay them, consolidate the skills, gate on held-out tasks and stage the proposals. Nothing live changes (sleep_adopt does that). Reports progress; cancelling the call stops the night, and nothing is staged.",
      inputSchema: {
        ...harvestArgs,
        backend: z
          .string()
          .regex(/^[A-Za-z][\w.:/-]*$/, 'a backend name, optionally NAME:MODEL')
          .optional()
          .describe(
            'the models: sim (offline simulator), handoff, or a backend (openai_chat, anthropic, …), optionally NAME:MODEL; default: the Sleep config',
          ),
        budget_usd: z.number().min(0).optional().describe('stop the night at this many US dollars (0 = no limit)'),
      },
    },
    (a, extra) =>
      c.guarded(async () => {
        const send = progressSender(extra);
        const args = [
          'sleep',
          'run',
          ...harvestFlags(project, a, c.sleepConfig),
          ...(a.backend ? ['--backend', a.backend] : []),
          ...(a.budget_usd !== undefined ? ['--budget-usd', String(a.budget_usd)] : []),
        ];
        return outcome(await c.cli(args, extra, (line) => void send(line)), 'the night', [0, EXIT_HANDOFF_PENDING]);
      }),
  );

  server.registerTool(
    'sleep_adopt',
    {
      title: 'Sleep: adopt the proposals',
      description:
        "Apply the latest staged night's proposals (or those of the night named) to the live skill files, each backed up, all or nothing. Asks the user to confirm.",
      inputSchema: {
        night: nightName.optional().describe('the night (default: the latest staged for this project)'),
        skills: z
          .array(z.string().min(1))
          .optional()
          .describe('adopt only these documents (default: every staged one)'),
      },
      annotations: { destructiveHint: true },
    },
    (a, extra) =>
      c.guarded(async () => {
        const view = await status(extra);
        const dir = a.night ? path.join(nightsDir(view.state_dir), a.night) : view.latest?.dir;
        if (!dir || !fs.existsSync(dir))
          return text(
            a.night
              ? `no night ${a.night} in ${view.state_dir}`
              : 'nothing is staged for this project: run sleep_run first',
            true,
          );
        const pending = pendingDocuments(dir).filter((d) => !a.skills || a.skills.includes(d.name));
        if (!pending.length)
          return text(
            `nothing waits for adoption in ${tilde(dir)}${a.skills ? ` among ${a.skills.join(', ')}` : ''}`,
            true,
          );
        const what = pending
          .map(
            (d) =>
              `${d.kind} ${safeLine(d.name, 60)} (${tilde(d.live_path)}, val ${score(d.baseline)} → ${score(d.candidate)})`,
          )
          .join('; ');
        const consent = await confirmWithUser(
          server.server,
          `Adopt SkillOpt Sleep's proposals into your files: ${what}? Each file is backed up; sleep_rollback undoes it.`,
          c.actWithoutConfirmation(),
          extra.signal,
        );
        if (!consent.ok) return text(consent.reason, true);
        const args = [
          'sleep',
          'adopt',
          '--json',
          '--project',
          project,
          '--night',
          dir,
          ...(a.skills ?? []).map((s) => `--skill=${s}`),
          ...configFlag,
        ];
        return outcome(await c.cli(args, extra), 'the adoption');
      }),
  );

  server.registerTool(
    'sleep_rollback',
    {
      title: 'Sleep: roll back an adoption',
      description:
        'Put the files of the latest adoption (or the latest of the night named) back as they were, byte for byte. Asks the user to confirm.',
      inputSchema: {
        night: nightName
          .optional()
          .describe('roll back the latest adoption of this night (default: the latest adoption of all)'),
      },
      annotations: { destructiveHint: true },
    },
    (a, extra) =>
      c.guarded(async () => {
        const view = await status(extra);
        const adopted = (view.latest?.adopted ?? []).filter((d) => !d.rolled_back);
        const which = a.night ? `the latest adoption of night ${a.night}` : 'the latest SkillOpt Sleep adoption';
        const files =
          !a.night && adopted.length
            ? ` (this project's latest: ${adopted.map((d) => tilde(d.live_path)).join(', ')})`
            : '';
        const consent = await confirmWithUser(
          server.server,
          `Roll back ${which}${files}, putting the files back as they were before it?`,
          c.actWithoutConfirmation(),
          extra.signal,
        );
        if (!consent.ok) return text(consent.reason, true);
        const args = [
          'sleep',
          'rollback',
          '--json',
          ...(a.night ? ['--night', path.join(nightsDir(view.state_dir), a.night)] : []),
          ...configFlag,
        ];
        return outcome(await c.cli(args, extra), 'the rollback');
      }),
  );

  server.registerTool(
    'sleep_history',
    {
      title: 'Sleep: history',
      description:
        'Every night so far (of every project): when it ran, its outcome, sessions and tasks, and what each document became.',
      inputSchema: { limit: z.number().int().min(1).max(200).default(20).describe('the last N nights') },
      annotations: { readOnlyHint: true },
    },
    (a, extra) =>
      c.guarded(async () => {
        const nights = json<NightRecord[]>(
          await c.cli(['sleep', 'history', '--json', '--limit', String(a.limit), ...configFlag], extra),
          'skillopt sleep history',
        );
        return {
          content: [{ type: 'text', text: nights.length ? historyRows(nights).join('\n') : 'no night yet' }],
          structuredContent: { nights },
        };
      }),
  );
}
