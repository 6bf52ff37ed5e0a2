/** The fake OpenAI-compatible provider of the benches, in its own process so its CPU is not counted. */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';

export interface FakeServerProcess {
  url: string;
  /** Stops the server; its request count and the most calls it had in flight. */
  stop(): Promise<{ requests: number; maxInFlight: number }>;
}

/** Starts `fake-server-process.ts` answering after `latencyMs`; `rule` as that file reads it. */
export async function startFakeServerProcess(latencyMs: number, rule = ''): Promise<FakeServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'fake-server-process.ts'), String(latencyMs), rule], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const url = (await lines.next()).value as string;
  return {
    url,
    stop: async () => {
      child.stdin!.end();
      return JSON.parse((await lines.next()).value as string) as { requests: number; maxInFlight: number };
    },
  };
}
