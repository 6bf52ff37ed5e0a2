/** Writes N entries to a response cache as fast as it can (one of two processes in a cache test). */
import { ResponseCache } from '../../src/model/cache.ts';

const [file, tag, n] = process.argv.slice(2);
const cache = new ResponseCache(file!);
for (let i = 0; i < Number(n); i++) {
  cache.put(`${tag}-${i}`, 'm', { text: `${tag}-${i}`, usage: { input: 1, output: 1, cached: 0, reasoning: 0 } });
  if (i % 50 === 0) await new Promise((r) => setImmediate(r));
}
cache.close();
