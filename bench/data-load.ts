/**
 * How fast the tasks env loads data: N records written as JSONL, CSV and Parquet, loaded through
 * the env (read, check every record, split, write the generated split), against a floor measured
 * in the same run: reading the same JSONL with fs + JSON.parse alone.
 *   node --import tsx bench/data-load.ts [N]
 */
import '../src/builtins.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parquetWriteFile } from 'hyparquet-writer';
import { loadConfig } from '../src/config/load.ts';
import { createEnv } from '../src/envs/build.ts';

const n = Number(process.argv[2] ?? 50_000);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skillopt-bench-'));
const rows = Array.from({ length: n }, (_, i) => ({
  id: `r${i}`,
  question: `What is item ${i} about? ${'lorem ipsum '.repeat(8)}`,
  answer: `answer ${i % 97}`,
  kind: `k${i % 5}`,
}));
fs.writeFileSync(path.join(dir, 'd.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n'));
fs.writeFileSync(
  path.join(dir, 'd.csv'),
  `id,question,answer,kind\n${rows.map((r) => `${r.id},"${r.question}",${r.answer},${r.kind}`).join('\n')}\n`,
);
parquetWriteFile({
  filename: path.join(dir, 'd.parquet'),
  columnData: ['id', 'question', 'answer', 'kind'].map((name) => ({
    name,
    data: rows.map((r) => r[name as keyof typeof r]),
    type: 'STRING' as const,
  })),
});

function time(f: () => unknown): number {
  const t = performance.now();
  f();
  return performance.now() - t;
}
async function timeAsync(f: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await f();
  return performance.now() - t;
}

const floor = time(() =>
  fs
    .readFileSync(path.join(dir, 'd.jsonl'), 'utf8')
    .split('\n')
    .map((l) => JSON.parse(l)),
);
console.log(`records: ${n}; floor (fs + JSON.parse of the JSONL): ${floor.toFixed(0)} ms`);
for (const ext of ['jsonl', 'csv', 'parquet']) {
  fs.writeFileSync(
    path.join(dir, `c-${ext}.yaml`),
    `model:\n  backend: sim\nenv:\n  name: tasks\n  data_path: d.${ext}\n  fields:\n    input: question\n    type: kind\n`,
  );
  const loaded = loadConfig(path.join(dir, `c-${ext}.yaml`), { environment: {} });
  const env = createEnv(loaded, path.join(dir, `run-${ext}`));
  const before = process.memoryUsage().heapUsed;
  const ms = await timeAsync(() => env.load());
  const mb = (process.memoryUsage().heapUsed - before) / 1e6;
  console.log(
    `${ext.padEnd(8)} load + check + split + write: ${ms.toFixed(0)} ms (${(ms / floor).toFixed(1)}x the floor), ${((ms * 1000) / n).toFixed(1)} µs/record, heap +${mb.toFixed(0)} MB`,
  );
}
fs.rmSync(dir, { recursive: true, force: true });
