/** The fake OpenAI-compatible providers of the benches, each in its own process so its CPU is not counted. */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';

export interface FakeServerProcess {
  url: string;
  /** Stops the server; its request count and the most calls it had in flight. */
  stop(): Promise<{ requests: number; maxInFlight: number }>;
}

/** Runs `script` (a file of this folder that prints its URL, serves until stdin closes, then prints its counts). */
async function startProcess(script: string, args: string[]): Promise<FakeServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, script), ...args], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.done) throw new Error(`bench/${script} exited before it printed its URL`);
  const url = first.value as string;
  return {
    url,
    stop: async () => {
      child.stdin!.end();
      return JSON.parse((await lines.next()).value as string) as { requests: number; maxInFlight: number };
    },
  };
}

/** Starts `fake-server-process.ts` answering after `latencyMs`; `rule` as that file reads it. */
export function startFakeServerProcess(latencyMs: number, rule = ''): Promise<FakeServerProcess> {
  return startProcess('fake-server-process.ts', [String(latencyMs), rule]);
}

/** Starts `skillopt-server-process.ts`: the scripted training run of `skillopt-script.ts` on the sim env with `env` options. */
export function startScriptedServer(
  targetMs: number,
  optimizerMs: number,
  env: Record<string, number>,
): Promise<FakeServerProcess> {
  return startProcess('skillopt-server-process.ts', [String(targetMs), String(optimizerMs), JSON.stringify(env)]);
}
