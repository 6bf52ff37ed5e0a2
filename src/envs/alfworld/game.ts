/**
 * One ALFWorld game as a process of its own (bridge.py), spoken to in JSON lines over stdio: it
 * answers `ready` when started, then each request with one line. The process runs in a process
 * group of its own; a game that crashes, hangs past its time limit, answers something unreadable
 * or reports an error fails with a `GameError`, and the whole group is killed. Closing a game
 * asks the bridge to end and kills what is left of the group when it has.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import readline from 'node:readline';
import { z } from 'zod';
import { signalGroup } from '../../model/harness/process.ts';

/** The game process failed: an infrastructure error of that item, not a task failure. */
export class GameError extends Error {
  override name = 'GameError';
}

export interface GameCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
}

const ReadySchema = z.object({ ready: z.literal(true), world: z.string().optional() });
const ObservationSchema = z.object({ observation: z.string(), admissible: z.array(z.string()) });
const StepSchema = ObservationSchema.extend({ done: z.boolean(), won: z.boolean() });
const ErrorSchema = z.object({ error: z.string() });

export type Observation = z.infer<typeof ObservationSchema>;
export type StepResult = z.infer<typeof StepSchema>;

const STDERR_KEEP = 4000;

export class GameProcess {
  private readonly lines: string[] = [];
  private waiting?: () => void;
  private stderr = '';
  private exited?: string;

  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    readline.createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (line) => {
      this.lines.push(line);
      this.waiting?.();
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-STDERR_KEEP);
    });
    child.stdin.on('error', () => {
      // The game is gone; its exit says why.
    });
    child.on('error', (err) => this.end(`could not be started (${err.message})`));
    child.on('exit', (code, signal) => this.end(signal ? `ended by ${signal}` : `exited with code ${code}`));
  }

  private end(why: string): void {
    if (this.exited) return;
    this.exited = why;
    // Whatever the game started goes with it.
    if (this.child.pid !== undefined) signalGroup(this.child.pid, 'SIGKILL');
    this.waiting?.();
  }

  /** Starts a game process and waits for its `ready`. */
  static async start(cmd: GameCommand, timeoutMs: number, signal?: AbortSignal): Promise<GameProcess> {
    const child = spawn(cmd.command, cmd.args, {
      cwd: cmd.cwd,
      env: cmd.env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const game = new GameProcess(child);
    try {
      ReadySchema.parse(await game.next(timeoutMs, 'to start', signal));
    } catch (err) {
      game.kill();
      throw err;
    }
    return game;
  }

  /** The next line of the game, parsed; a `GameError` when it ends, hangs or answers with an error. */
  private async next(timeoutMs: number, what: string, signal?: AbortSignal): Promise<unknown> {
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    const onAbort = () => this.waiting?.();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      while (this.lines.length === 0 && !this.exited && !timedOut && !signal?.aborted) {
        await new Promise<void>((resolve) => {
          this.waiting = resolve;
          timer ??= setTimeout(() => {
            timedOut = true;
            this.waiting?.();
          }, timeoutMs);
        });
      }
    } finally {
      if (timer) clearTimeout(timer);
      this.waiting = undefined;
      signal?.removeEventListener('abort', onAbort);
    }
    const line = this.lines.shift();
    if (line === undefined) {
      this.kill();
      if (signal?.aborted) throw new GameError('the game was stopped: the run is ending');
      if (timedOut)
        throw new GameError(
          `the game process gave no answer ${what} in ${Math.round(timeoutMs / 1000)} s and was killed`,
        );
      throw new GameError(`the game process ${this.exited}${this.stderrTail()}`);
    }
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      this.kill();
      throw new GameError(`the game process wrote a line that is not JSON: ${line.slice(0, 200)}`);
    }
    const error = ErrorSchema.safeParse(value);
    if (error.success) throw new GameError(`the game reported an error ${what}: ${error.data.error}`);
    return value;
  }

  private stderrTail(): string {
    const tail = this.stderr.trim().split('\n').slice(-5).join('\n');
    return tail ? `; it said:\n${tail}` : '';
  }

  private send(message: unknown): void {
    if (this.exited) throw new GameError(`the game process ${this.exited}${this.stderrTail()}`);
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  private parse<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    this.kill();
    throw new GameError(`the game answered ${what} in an unexpected shape: ${JSON.stringify(value).slice(0, 200)}`);
  }

  async reset(gamefile: string, seed: number, timeoutMs: number, signal?: AbortSignal): Promise<Observation> {
    this.send({ op: 'reset', gamefile, seed });
    return this.parse(ObservationSchema, await this.next(timeoutMs, 'to reset', signal), 'reset');
  }

  async step(action: string, timeoutMs: number, signal?: AbortSignal): Promise<StepResult> {
    this.send({ op: 'step', action });
    return this.parse(StepSchema, await this.next(timeoutMs, `to the action '${action}'`, signal), 'a step');
  }

  /** Asks the bridge to end; what is left of its process group is killed when it has, or after `graceMs`. */
  close(graceMs = 2000): void {
    if (this.exited) return;
    try {
      this.send({ op: 'close' });
      this.child.stdin.end();
    } catch {
      // already gone
    }
    setTimeout(() => this.kill(), graceMs).unref();
  }

  /** Kills the game and its process group (once it has exited, its exit did that already). */
  kill(): void {
    if (!this.exited && this.child.pid !== undefined) signalGroup(this.child.pid, 'SIGKILL');
  }
}
