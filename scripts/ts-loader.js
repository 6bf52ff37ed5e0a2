// The TypeScript loader of the test suite (`node --import ./scripts/ts-loader.js`): each .ts
// module is compiled by esbuild once and kept on disk, keyed by its path and content, so a test
// process loads the sources as plain JavaScript from then on. It does what the suite needs of tsx
// and no more (type stripping of ES modules; the imports name their .ts files), at about half of
// tsx's start-up CPU in each of the suite's few hundred processes (bench/test-cpu.ts).
// Stack traces point into the .ts sources (inline source maps).
import { register } from 'node:module';

process.setSourceMapsEnabled(true);
register('./ts-hooks.js', import.meta.url);

// A test file's process gets a cache directory of its own (the response cache, test seals), so
// that tests neither read nor change the machine's, nor one another's.
if (process.env.NODE_TEST_CONTEXT && !process.env.SKILLOPT_TEST_CACHE) {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = mkdtempSync(join(tmpdir(), 'skillopt-cache-'));
  process.env.XDG_CACHE_HOME = dir;
  process.env.SKILLOPT_TEST_CACHE = dir;
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
}
