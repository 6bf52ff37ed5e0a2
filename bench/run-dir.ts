/**
 * How a run directory grows, and what a resume costs, with the number of rollouts and the
 * length of the skill. The journals are written by the classes a run writes them with (the score
 * cache and the call ledger), with records shaped like a run's: each step a new skill version and
 * R rollouts under it (the system prompt is the whole skill), each rollout one target call with a
 * short reply, and one optimizer call with a long reply per five rollouts. A resume (reading both
 * journals back) runs in a fresh process, for its time (the fastest of three) and peak memory. For comparison, the same
 * records are also written as the previous version wrote them (everything inline) and resumed.
 *   node --import tsx bench/run-dir.ts [rollouts per step = 50] [steps = 12] [skill KB = 50]
 * With `--large`: the case that could not be resumed before, a `scores.jsonl` of the previous
 * version holding 3,200 rollouts under a 200 KB skill (over 600 MB, more than one string can
 * hold), resumed by this version (about 650 MB of disk in the system's temporary directory).
 *   node --import tsx bench/run-dir.ts --large
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Trajectory } from '../src/envs/types.ts';
import { ScoreCache } from '../src/engine/scoring/score-cache.ts';
import { Ledger, type CallRecord } from '../src/model/ledger.ts';

if (process.argv[2] === '--resume') {
  // The child: read both journals back as a resumed run does, then report.
  const dir = process.argv[3]!;
  const started = performance.now();
  const scores = new ScoreCache(path.join(dir, 'scores.jsonl'));
  const ledger = new Ledger(path.join(dir, 'calls.jsonl'));
  const ms = performance.now() - started;
  const calls = ledger.totals().calls;
  scores.close();
  ledger.close();
  process.stdout.write(JSON.stringify({ ms, calls, maxRssMb: process.resourceUsage().maxRSS / 1024 }));
  process.exit(0);
}

if (process.argv[2] === '--large') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skillopt-bench-rundir-'));
  const fd = fs.openSync(path.join(dir, 'scores.jsonl'), 'w');
  let bytes = 0;
  for (let step = 1; step <= 16; step++) {
    const skill = skillOf(step, 200);
    for (let i = 0; i < 200; i++) {
      const t = trajectory(step, i, skill);
      const line = `${JSON.stringify({ skill: `v${step}`, item: t.id, target: 'openai_compatible:model', sample: 0, seed: 42, trajectory: t })}\n`;
      bytes += Buffer.byteLength(line);
      fs.writeSync(fd, line);
    }
  }
  fs.closeSync(fd);
  fs.writeFileSync(path.join(dir, 'calls.jsonl'), '');
  const r = resume(dir, 1);
  console.log(
    `inline scores.jsonl of the previous version: ${(bytes / 1024 / 1024).toFixed(0)} MB, 3200 rollouts, 200 KB skill; ` +
      `resumed in ${(r.ms / 1000).toFixed(1)} s, peak RSS ${r.maxRssMb.toFixed(0)} MB, ${fs.readdirSync(path.join(dir, 'blobs')).length} blobs written`,
  );
  fs.rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}

const perStep = Number(process.argv[2] ?? 50);
const steps = Number(process.argv[3] ?? 12);
const skillKb = Number(process.argv[4] ?? 50);
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'skillopt-bench-rundir-'));

function skillOf(version: number, kb: number): string {
  const rules = Array.from(
    { length: Math.ceil((kb * 1024) / 80) },
    (_, i) => `- Rule ${i}: state the unit after a space and round to two decimals (v${version}).`,
  );
  return `# Answering questions about our sites\n\n${rules.join('\n')}`.slice(0, kb * 1024);
}

function trajectory(step: number, i: number, system: string): Trajectory {
  const task = `What was the reading at site ${i} on day ${step}?`;
  const predicted = `${(i * 7.31).toFixed(1)}L`;
  return {
    id: `train-${String(i).padStart(4, '0')}`,
    hard: i % 3 === 0 ? 1 : 0,
    soft: 0.5,
    taskType: 'measurement',
    task,
    predicted,
    expected: `${(i * 7.31).toFixed(2)} L`,
    failReason: `EM=0: predicted '${predicted}' but expected '${(i * 7.31).toFixed(2)} L'`,
    conversation: [
      { role: 'user', content: task },
      { role: 'assistant', content: `The reading was <answer>${predicted}</answer>.` },
      { role: 'system', content: `evaluation: predicted '${predicted}', exact match 0` },
    ],
    systemPrompt: `${system}\n\n---\nReply with the answer alone, inside <answer></answer> tags.`,
    userPrompt: task,
    usage: { input: Math.round(system.length / 4), output: 12, cached: 0, reasoning: 0 },
  };
}

function call(purpose: string, text: string): CallRecord {
  return {
    time: new Date().toISOString(),
    key: crypto.randomBytes(32).toString('hex'),
    role: purpose === 'rollout' ? 'target' : 'optimizer',
    model: 'openai_compatible:model',
    purpose,
    usage: { input: 1000, output: Math.round(text.length / 4), cached: 0, reasoning: 0 },
    latency_ms: 800,
    retries: 0,
    from: 'provider',
    cost_usd: null,
    response: { text },
  };
}

/**
 * Writes one run's journals into `dir`, and the same records into `oldDir` as the previous
 * version wrote them (inline); returns the bytes of the latter.
 */
function writeRun(dir: string, oldDir: string, nSteps: number, kb: number): number {
  fs.mkdirSync(dir, { recursive: true });
  fs.mkdirSync(oldDir, { recursive: true });
  const scores = new ScoreCache(path.join(dir, 'scores.jsonl'));
  const ledger = new Ledger(path.join(dir, 'calls.jsonl'));
  const oldScores = fs.openSync(path.join(oldDir, 'scores.jsonl'), 'w');
  const oldCalls = fs.openSync(path.join(oldDir, 'calls.jsonl'), 'w');
  let inlineBytes = 0;
  const writeInline = (fd: number, value: unknown) => {
    const line = `${JSON.stringify(value)}\n`;
    inlineBytes += Buffer.byteLength(line);
    fs.writeSync(fd, line);
  };
  for (let step = 1; step <= nSteps; step++) {
    const skill = skillOf(step, kb);
    const hash = crypto.createHash('sha256').update(skill).digest('hex').slice(0, 16);
    for (let i = 0; i < perStep; i++) {
      const t = trajectory(step, i, skill);
      scores.set(hash, t.id, 'openai_compatible:model', 0, t, 42);
      writeInline(oldScores, {
        skill: hash,
        item: t.id,
        target: 'openai_compatible:model',
        sample: 0,
        seed: 42,
        trajectory: t,
      });
      const rollout = call('rollout', t.predicted!);
      ledger.record(rollout);
      writeInline(oldCalls, rollout);
      if (i % 5 === 0) {
        const analysis = call(
          'analyst',
          `{"reasoning": "${`step ${step} item ${i}: the answers drop the space before the unit. `.repeat(80)}", "edits": []}`,
        );
        ledger.record(analysis);
        writeInline(oldCalls, analysis);
      }
    }
  }
  scores.close();
  ledger.close();
  fs.closeSync(oldScores);
  fs.closeSync(oldCalls);
  return inlineBytes;
}

function bytesOf(dir: string): number {
  let total = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    total += e.isDirectory() ? bytesOf(p) : fs.statSync(p).size;
  }
  return total;
}

/** The fastest of `times` resumes (the machine may be busy), with the largest peak memory. */
function resume(dir: string, times = 3): { ms: number; maxRssMb: number } {
  const runs = Array.from({ length: times }, () => {
    const r = spawnSync(
      process.execPath,
      ['--import', 'tsx', path.join(import.meta.dirname, 'run-dir.ts'), '--resume', dir],
      { encoding: 'utf8' },
    );
    if (r.status !== 0) throw new Error(r.stderr);
    return JSON.parse(r.stdout) as { ms: number; maxRssMb: number };
  });
  return { ms: Math.min(...runs.map((r) => r.ms)), maxRssMb: Math.max(...runs.map((r) => r.maxRssMb)) };
}

const cases = [
  { name: `N=${perStep * steps} rollouts, skill ${skillKb} KB`, steps, kb: skillKb },
  { name: `4N=${4 * perStep * steps} rollouts, skill ${skillKb} KB`, steps: 4 * steps, kb: skillKb },
  { name: `N=${perStep * steps} rollouts, skill ${4 * skillKb} KB`, steps, kb: 4 * skillKb },
];
const MB = 1024 * 1024;
const results = cases.map((c, k) => {
  const dir = path.join(root, `run${k}`);
  const old = path.join(root, `old${k}`);
  const inlineBytes = writeRun(dir, old, c.steps, c.kb);
  const bytes = bytesOf(dir);
  const rollouts = perStep * c.steps;
  const blobs = fs.readdirSync(path.join(dir, 'blobs')).length;
  const fresh = resume(dir);
  // The previous version's files, read by this version (their long strings move to blobs/ as they are read).
  const oldResume = resume(old);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(old, { recursive: true, force: true });
  return { ...c, rollouts, bytes, inlineBytes, blobs, fresh, oldResume };
});

console.log(
  `run directory journals (scores.jsonl, calls.jsonl, blobs/): ${perStep} rollouts per step, one skill version per step\n`,
);
for (const r of results) {
  console.log(
    `${r.name.padEnd(34)} ${(r.bytes / MB).toFixed(2).padStart(8)} MB (${(r.bytes / r.rollouts / 1024).toFixed(2)} KB/rollout, ${r.blobs} blobs) | ` +
      `inline as before: ${(r.inlineBytes / MB).toFixed(1).padStart(7)} MB | resume ${r.fresh.ms.toFixed(0).padStart(5)} ms, peak RSS ${r.fresh.maxRssMb.toFixed(0)} MB | ` +
      `resume of the inline files ${r.oldResume.ms.toFixed(0)} ms, peak RSS ${r.oldResume.maxRssMb.toFixed(0)} MB`,
  );
}
const [n, n4, l4] = results as [(typeof results)[0], (typeof results)[0], (typeof results)[0]];
const perRollout = (r: typeof n) => r.bytes / r.rollouts;
const skillBytes = (kb: number, versions: number) => kb * 1024 * versions;
console.log(`\nsize per rollout, 4x skill / 1x skill: ${(perRollout(l4) / perRollout(n)).toFixed(2)}`);
console.log(
  `  beyond one copy of each skill version: ${((l4.bytes - skillBytes(l4.kb, l4.steps)) / l4.rollouts / ((n.bytes - skillBytes(n.kb, n.steps)) / n.rollouts)).toFixed(2)}` +
    ` (inline as before: ${(l4.inlineBytes / n.inlineBytes).toFixed(2)})`,
);
console.log(`size, 4N / N rollouts: ${(n4.bytes / n.bytes).toFixed(2)}`);
console.log(
  `resume time, 4N / N: ${(n4.fresh.ms / n.fresh.ms).toFixed(2)}; 4x skill / 1x: ${(l4.fresh.ms / n.fresh.ms).toFixed(2)}`,
);
console.log(
  `peak RSS of a resume, 4N / N: ${(n4.fresh.maxRssMb / n.fresh.maxRssMb).toFixed(2)}; 4x skill / 1x: ${(l4.fresh.maxRssMb / n.fresh.maxRssMb).toFixed(2)}`,
);
fs.rmSync(root, { recursive: true, force: true });
