/**
 * The fake provider in a process of its own, so that the benchmark's CPU figures are the client's
 * alone. Usage: tsx bench/fake-server-process.ts <latency ms> [rpm=N | max-in-flight=K]; prints
 * its URL on the first line, serves until stdin closes.
 */
import { startFakeProvider, type FakeProvider } from '../test/helpers/fake-provider.ts';

const [latency, rule] = process.argv.slice(2);
const [kind, value] = (rule ?? '').split('=');
const limit = Number(value);
const starts: number[] = [];
let server: FakeProvider | undefined;
server = await startFakeProvider({
  latencyMs: Number(latency),
  fault: (r) => {
    if (kind === 'rpm') {
      starts.push(r.at);
      return starts.filter((t) => t > r.at - 60_000).length > limit ? { status: 429 } : undefined;
    }
    if (kind === 'max-in-flight') return server!.inFlight() > limit ? { status: 429 } : undefined;
    return undefined;
  },
});
process.stdout.write(`${server.url}\n`);
process.stdin.resume();
process.stdin.on('end', async () => {
  process.stdout.write(
    `${JSON.stringify({ requests: server!.requests.length, maxInFlight: server!.maxInFlight() })}\n`,
  );
  await server!.close();
  process.exit(0);
});
