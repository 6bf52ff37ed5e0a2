/**
 * The scripted provider of `skillopt-script.ts` in a process of its own, on 127.0.0.1, for the
 * engine bench. Usage: tsx bench/skillopt-server-process.ts <target ms> <optimizer ms> <sim env
 * options as JSON>; prints its URL on the first line, serves until stdin closes, then prints its
 * request count.
 */
import { startFakeProvider } from '../test/helpers/fake-provider.ts';
import { scriptedResponder, taskRecords } from './skillopt-script.ts';
import { countTokens } from '../src/skill/document.ts';

const [targetMs, optimizerMs, env] = process.argv.slice(2);
// The simulated target counts a skill's tokens for some answers: the tokenizer's tables load
// here, before the first request, not as a fifth of a second added to whatever is in flight then.
countTokens('warm');
const { train, val, test } = await taskRecords(JSON.parse(env ?? '{}') as Record<string, number>);
const server = await startFakeProvider({
  respond: scriptedResponder([...train, ...val, ...test], Number(targetMs), Number(optimizerMs)),
});
// The bench may be gone when the server stops.
process.stdout.on('error', () => {});
process.stdout.write(`${server.url}\n`);
process.stdin.resume();
process.stdin.on('end', async () => {
  process.stdout.write(`${JSON.stringify({ requests: server.requests.length, maxInFlight: server.maxInFlight() })}\n`);
  await server.close();
  process.exit(0);
});
