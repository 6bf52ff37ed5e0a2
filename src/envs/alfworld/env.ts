/**
 * ALFWorld (reference B.9): household tasks played as text, one game per item. Each game runs in
 * a process of its own (bridge.py, JSON lines over stdio) that loads the game file with ALFWorld's
 * `AlfredTWEnv` (the `alfworld` Python package and its data), or with a world of one's own
 * (`env.world`). Each step the target gets the observation (and, after the first, the task and
 * the last observation/action pairs) and answers `<think>…</think><action>…</action>`; a reply
 * without an action sends `look`. The episode ends when the game is done or after `max_steps`;
 * won = hard = soft = 1. A game process that crashes or hangs makes the item an infrastructure
 * error (not scored), and its process group is killed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import type { EnvConfig } from '../../config/schema.ts';
import type { AgentTrace } from '../../model/harness/trace.ts';
import type { Usage } from '../../model/types.ts';
import { DataError } from '../data/errors.ts';
import { LeftOut } from '../data/left-out.ts';
import type { RawRecord } from '../data/read.ts';
import { loadSplits, type LoadedSplits } from '../data/splits.ts';
import { envOptions } from '../options.ts';
import { envPrompt } from '../prompts.ts';
import { findPython, pythonEnvironment } from '../python.ts';
import { benchmarkSystem } from '../qa-env.ts';
import { addUsage } from '../qa.ts';
import { registerEnv } from '../registry.ts';
import type { ConversationEntry, Env, EnvContext, Item, RolloutContext, Trajectory } from '../types.ts';
import { parseReply, stepPrompt, TASK_TYPES, taskOf, taskTypeOf, type Turn } from './episode.ts';
import { GameError, GameProcess, type GameCommand } from './game.ts';

export const AlfworldOptions = z.object({
  /** Steps (actions) at most per game. */
  max_steps: z.number().int().min(1).default(50),
  /** Output token cap of each target call; unset = the role's `max_output_tokens`, else the backend's. */
  max_completion_tokens: z.number().int().positive().optional(),
  /** The folder ALFWorld's data was downloaded to (holding json_2.1.1/ and logic/); '' = $ALFWORLD_DATA. */
  data_root: z.string().default(''),
  /** A Python file with a `World` class, played instead of ALFWorld's AlfredTWEnv; '' = ALFWorld. */
  world: z.string().default(''),
  /** The Python interpreter of the game processes ('' = the first python3 that has what the world needs). */
  python: z.string().default(''),
  /** Seconds a game may take to start and load its game file, and to answer one action. */
  start_timeout: z.number().positive().default(300),
  /** Seconds a game may take to answer one action. */
  step_timeout: z.number().positive().default(60),
  /** Observation/action pairs each prompt after the first shows. */
  history_length: z.number().int().nonnegative().default(2),
});
type Options = z.infer<typeof AlfworldOptions>;

const BRIDGE = path.join(import.meta.dirname, 'bridge.py');
const FALLBACK_ACTION = 'look';

interface GameItem extends Item {
  gamefile: string;
}

/** `$VAR`, `${VAR}` and a leading `~` of a path, expanded. */
function expandPath(p: string, environment: NodeJS.ProcessEnv): string {
  const expanded = p.replace(
    /\$\{(\w+)\}|\$(\w+)/g,
    (m, a: string | undefined, b: string | undefined) => environment[(a ?? b)!] ?? m,
  );
  return expanded === '~' || expanded.startsWith('~/') ? path.join(os.homedir(), expanded.slice(1)) : expanded;
}

export class AlfworldEnv implements Env {
  readonly name = 'alfworld';
  private pythonPath?: string;

  constructor(
    private readonly config: EnvConfig,
    private readonly o: Options,
    private readonly ctx: EnvContext,
  ) {}

  get analystGuide(): string {
    return envPrompt(this.name, 'analyst');
  }

  taskTypes(): string[] {
    return [...TASK_TYPES];
  }

  /** The world file of `env.world`, resolved; undefined for ALFWorld itself. */
  private worldFile(): string | undefined {
    if (!this.o.world.trim()) return undefined;
    const file = this.ctx.resolvePath('world', this.o.world.trim());
    if (!fs.existsSync(file))
      throw new DataError(`env.world: ${file} does not exist (expected a Python file defining a World class)`);
    return file;
  }

  /** The interpreter of the game processes, checked once (before any model call: `load` asks first). */
  private python(): string {
    this.pythonPath ??= findPython(this.o.python, {
      who: this.worldFile() ? 'ALFWorld (with env.world)' : 'ALFWorld',
      modules: this.worldFile() ? [] : ['alfworld'],
      install: this.worldFile()
        ? 'Install Python 3'
        : "Install ALFWorld's Python package (pip install alfworld, the original's `skillopt[alfworld]` extra) and download its games (alfworld-download; then set ALFWORLD_DATA or env.data_root to where they went)",
      optionKey: 'env.python',
    });
    return this.pythonPath;
  }

  /** Where relative game file paths are taken from: env.data_root, else $ALFWORLD_DATA. */
  private dataRoot(): string {
    if (this.o.data_root.trim())
      return this.ctx.resolvePath('data_root', expandPath(this.o.data_root.trim(), process.env));
    return expandPath(process.env.ALFWORLD_DATA?.trim() ?? '', process.env);
  }

  /** A game file path as the manifests write it (relative to the data folder), made absolute. */
  resolveGamefile(gamefile: string): string {
    const expanded = expandPath(gamefile, process.env);
    if (path.isAbsolute(expanded)) return expanded;
    const root = this.dataRoot();
    return path.resolve(root || '.', expanded);
  }

  toItem(rec: RawRecord): GameItem | LeftOut {
    const f = rec.fields;
    if (f.id === undefined || f.id === null || String(f.id).trim() === '')
      throw new DataError("missing field 'id'", rec.where, 'id');
    if (typeof f.gamefile !== 'string' || !f.gamefile.trim())
      throw new DataError(
        "missing field 'gamefile' (the game file, relative to the ALFWorld data folder)",
        rec.where,
        'gamefile',
      );
    const gamefile = this.resolveGamefile(f.gamefile.trim());
    if (!fs.existsSync(gamefile)) return new LeftOut(String(f.id), `game file not found: ${gamefile}`);
    return { id: String(f.id), type: taskTypeOf(f.gamefile), gamefile };
  }

  async load(): Promise<LoadedSplits> {
    this.python();
    return loadSplits(
      {
        env: this.name,
        config: this.config,
        resolve: this.ctx.resolvePath,
        missing: this.ctx.missingPath,
        outRoot: this.ctx.outRoot,
      },
      {
        toItem: (rec) => this.toItem(rec),
        stored: (_item, rec) => rec.fields,
        leftOutHint: () =>
          `Game files are looked for under ${this.dataRoot() || 'the working directory'} (env.data_root, else $ALFWORLD_DATA): run alfworld-download and point ALFWORLD_DATA (or env.data_root) at the folder it filled`,
      },
    );
  }

  private command(): GameCommand {
    const world = this.worldFile();
    const env: Record<string, string> = {
      ...pythonEnvironment(),
      HOME: os.homedir(),
      TMPDIR: os.tmpdir(),
      SKILLOPT_ALFWORLD_MAX_STEPS: String(this.o.max_steps),
    };
    const data = this.dataRoot();
    if (data) env.ALFWORLD_DATA = data;
    return { command: this.python(), args: [BRIDGE, ...(world ? ['--world', world] : [])], env, cwd: os.tmpdir() };
  }

  /** One call per game step, up to `max_steps`, whatever the target (an agent runs once per step). */
  maxTargetCalls(): number {
    return this.o.max_steps;
  }

  async rollout(raw: Item, skill: string, ctx: RolloutContext): Promise<Trajectory> {
    const item = raw as GameItem;
    const system = benchmarkSystem(this.name, skill);
    const conversation: ConversationEntry[] = [];
    const history: Turn[] = [];
    // An agent target runs one agent per step: each step's trace is kept.
    const traces: AgentTrace[] = [];
    let usage: Usage = { input: 0, output: 0, cached: 0, reasoning: 0 };
    let task = '';
    let firstPrompt = '';
    let done = false;
    let won = false;
    let fallbacks = 0;
    let malformed = 0;
    const stepMs = this.o.step_timeout * 1000;
    let game: GameProcess | undefined;
    const infra = (err: GameError): Trajectory => ({
      id: item.id,
      hard: 0,
      soft: 0,
      taskType: item.type,
      ...(task ? { task } : {}),
      conversation,
      systemPrompt: system,
      userPrompt: firstPrompt,
      usage,
      ...(traces.length ? { traces } : {}),
      error: { kind: 'game_process', message: `${item.gamefile}: ${err.message}` },
    });
    try {
      game = await GameProcess.start(this.command(), this.o.start_timeout * 1000, ctx.signal);
      let view = await game.reset(item.gamefile, ctx.seed, this.o.start_timeout * 1000, ctx.signal);
      task = taskOf(view.observation);
      for (let step = 0; step < this.o.max_steps; step++) {
        const prompt = stepPrompt({
          task,
          history,
          observation: view.observation,
          admissible: view.admissible,
          historyLength: this.o.history_length,
        });
        if (step === 0) firstPrompt = prompt;
        const res = await ctx.target.complete({
          purpose: 'rollout',
          system,
          messages: [{ role: 'user', content: prompt }],
          skill,
          maxOutputTokens: this.o.max_completion_tokens,
          sample: ctx.sample,
          signal: ctx.signal,
        });
        usage = addUsage(usage, res.usage);
        if (res.trace) traces.push(res.trace);
        const reply = parseReply(res.text);
        if (!reply.wellFormed) malformed++;
        if (!reply.action) fallbacks++;
        const action = reply.action ?? FALLBACK_ACTION;
        const result = await game.step(action, stepMs, ctx.signal);
        conversation.push({
          step,
          action,
          env_feedback: result.observation,
          reasoning: reply.think ?? (res.text.trim() || '(empty reply)'),
        });
        history.push({ observation: view.observation, action });
        view = result;
        if (result.done || result.won) {
          done = true;
          won = result.won;
          break;
        }
      }
    } catch (err) {
      if (err instanceof GameError) return infra(err);
      throw err;
    } finally {
      game?.close();
    }
    const steps = history.length;
    const notes = [
      won
        ? `the task was completed in ${steps} step${steps === 1 ? '' : 's'}`
        : done
          ? `the game ended after ${steps} steps without the task done`
          : `the task was not done within ${this.o.max_steps} steps`,
      fallbacks
        ? `${fallbacks} repl${fallbacks === 1 ? 'y' : 'ies'} named no <action>; '${FALLBACK_ACTION}' was sent instead`
        : '',
      malformed ? `${malformed} repl${malformed === 1 ? 'y' : 'ies'} did not follow the <think>/<action> format` : '',
    ].filter(Boolean);
    return {
      id: item.id,
      hard: won ? 1 : 0,
      soft: won ? 1 : 0,
      taskType: item.type,
      task,
      predicted: won ? 'task done' : 'task not done',
      expected: 'task done',
      ...(won
        ? {}
        : {
            failReason: done ? 'Episode ended without completing the task' : `Timeout after ${this.o.max_steps} steps`,
          }),
      feedback: notes.join('\n'),
      conversation,
      systemPrompt: system,
      userPrompt: firstPrompt,
      usage,
      ...(traces.length ? { traces } : {}),
    };
  }
}

registerEnv({
  name: 'alfworld',
  optionsSchema: AlfworldOptions,
  unsupportedOptions: {
    max_api_workers:
      "each game plays its own episode here, so there is no per-step batch to spread over workers: env.workers games run at once, and the target role's concurrency bounds the model calls",
  },
  create: (config, ctx) => new AlfworldEnv(config, envOptions(AlfworldOptions, config), ctx),
});
