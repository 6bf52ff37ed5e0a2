/**
 * Dashboard responsiveness on a large run: 1,000 steps with 10 training trajectories each
 * (10,000 trajectories, each with its conversation), a test evaluation of 10,000 more in one
 * results.jsonl, and the event log and call ledger such a run writes. The generated run is
 * synthetic (made here, not trained); the server is the real one, over loopback HTTP.
 *
 * Prints, per API call, the median time of warm requests and its ratio to a trivial endpoint
 * (/api/ping) measured in the same process, plus the first (cold) request, which reads and
 * indexes the files.
 *
 *   npx tsx bench/dashboard.ts [--steps 1000] [--per-step 10] [--test-items 10000]
 *   npx tsx bench/dashboard.ts --write DIR    only writes the run to DIR (to open it in `skillopt ui`)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startDashboard } from '../src/web/server/server.ts';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const STEPS = arg('steps', 1000);
const PER_STEP = arg('per-step', 10);
const TEST_ITEMS = arg('test-items', 10000);
const REPEAT = 15;

const pad = (n: number, w = 4) => String(n).padStart(w, '0');
const KINDS = ['date', 'money', 'measurement', 'count', 'name', 'percent'];
const STAGES = ['rollout', 'analyst', 'merge', 'ranking'];

function generate(dir: string): void {
  const w = (rel: string, text: string) => {
    const f = path.join(dir, rel);
    fs.mkdirSync(path.dirname(f), { recursive: true });
    fs.writeFileSync(f, text);
  };
  const wj = (rel: string, v: unknown) => w(rel, `${JSON.stringify(v, null, 2)}\n`);
  const row = (id: string, i: number) => ({
    id,
    hard: i % 3 === 0 ? 0 : 1,
    soft: i % 3 === 0 ? 0.4 : 1,
    task_type: KINDS[i % KINDS.length],
    task: `Question ${id} about site ${i % 97}: what is the recorded value of item ${i}?`,
    predicted_answer: `value ${i}`,
    expected: `value ${i % 3 === 0 ? i + 1 : i}`,
    fail_reason: i % 3 === 0 ? `EM=0: predicted 'value ${i}' but expected 'value ${i + 1}'` : undefined,
    sample: 0,
  });
  wj('config.json', {
    config: {
      model: { target: { backend: 'sim', model: 'sim-1' }, optimizer: { backend: 'sim', model: 'sim-1' } },
      env: { name: 'sim' },
      train: { num_epochs: 10 },
    },
    derived: { steps_per_epoch: STEPS / 10, total_steps: STEPS },
  });
  const events: string[] = [];
  const calls: string[] = [];
  const history: unknown[] = [];
  const t0 = Date.parse('2026-05-01T00:00:00Z');
  const ev = (s: number, e: Record<string, unknown>) =>
    events.push(JSON.stringify({ time: new Date(t0 + s * 1000).toISOString(), ...e }));
  ev(0, {
    type: 'run_started',
    out_root: dir,
    env: 'sim',
    target: 'sim:sim-1',
    optimizer: 'sim:sim-1',
    epochs: 10,
    steps_per_epoch: STEPS / 10,
    total_steps: STEPS,
    resume_from: 1,
  });
  let skill = '# Skill\n\nAnswer with the value only.\n';
  w(`skills/skill_v0000.md`, skill);
  let best = 0.3;
  for (let s = 1; s <= STEPS; s++) {
    const epoch = Math.floor((s - 1) / (STEPS / 10)) + 1;
    const rel = `steps/step_${pad(s)}`;
    const rows = Array.from({ length: PER_STEP }, (_, i) => row(`train-${pad(s)}-${i}`, s * PER_STEP + i));
    w(`${rel}/rollout/results.jsonl`, rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
    for (const r of rows) {
      wj(`${rel}/rollout/predictions/${r.id}/conversation.json`, [
        { role: 'system', content: skill },
        { role: 'user', content: r.task },
        { role: 'assistant', content: r.predicted_answer },
      ]);
    }
    for (const stage of ['rollout', 'reflect', 'aggregate', 'select', 'update', 'evaluate']) {
      ev(s, { type: 'stage_started', step: s, epoch, stage });
      ev(s, { type: 'stage_finished', step: s, epoch, stage, seconds: 0.4 });
    }
    const edits = Array.from({ length: 4 }, (_, i) => ({
      op: 'append',
      content: `- Rule ${s}.${i}: write values as the house style asks.`,
      support_count: 4 - i,
      source_type: 'failure',
    }));
    wj(`${rel}/merged_patch.json`, { reasoning: 'synthetic', edits });
    wj(`${rel}/ranked_edits.json`, { reasoning: 'synthetic', edits: edits.slice(0, 3) });
    wj(
      `${rel}/edit_apply_report.json`,
      edits
        .slice(0, 3)
        .map((e, i) => ({ index: i + 1, op: e.op, target: '', content_preview: e.content, status: 'applied_append' })),
    );
    const candidate = `${skill}${edits
      .slice(0, 3)
      .map((e) => e.content)
      .join('\n')}\n`;
    w(`${rel}/candidate_skill.md`, candidate);
    const score = Math.min(0.95, 0.3 + 0.6 * (s / STEPS) + ((s * 7919) % 13) / 200);
    const action = score > best ? 'accept_new_best' : 'reject';
    if (action === 'accept_new_best') {
      best = score;
      skill = candidate.split('\n').slice(-40).join('\n'); // keep the synthetic skill from growing without bound
    }
    w(`skills/skill_v${pad(s)}.md`, skill);
    const tokens = Object.fromEntries(
      STAGES.map((st, i) => [
        st,
        { calls: 3 + i, prompt_tokens: 1000 * (i + 1), completion_tokens: 100 * (i + 1), cost_usd: 0.001 * (i + 1) },
      ]),
    );
    for (const st of STAGES)
      calls.push(
        JSON.stringify({
          time: new Date(t0 + s * 1000).toISOString(),
          key: `k${s}${st}`,
          role: st === 'rollout' ? 'target' : 'optimizer',
          model: 'sim:sim-1',
          purpose: st,
          usage: { input: 1000, output: 100, cached: 0, reasoning: 0 },
          latency_ms: 40,
          retries: 0,
          from: 'provider',
          cost_usd: 0.001,
          response: { text: 'x'.repeat(300) },
        }),
      );
    ev(s, {
      type: 'gate_decision',
      step: s,
      epoch,
      action,
      metric: 'hard',
      candidate_score: score,
      current_score: best,
      best_score: best,
      rollouts_used: 30,
      rollouts_saved: 0,
    });
    ev(s, {
      type: 'step_finished',
      step: s,
      epoch,
      action,
      current_score: best,
      best_score: best,
      seconds: 2.4,
      timing: { rollout_s: 0.4, reflect_s: 0.4, aggregate_s: 0.4, select_s: 0.4, update_s: 0.4, evaluate_s: 0.4 },
    });
    history.push({
      step: s,
      epoch,
      rollout_hard: 0.6,
      rollout_soft: 0.7,
      rollout_n: PER_STEP,
      tokens,
      n_edits_merged: 4,
      n_edits_ranked: 3,
      edit_budget: 3,
      edit_apply_summary: { total: 3, applied: 3, skipped: 0, errors: 0 },
      selection_hard: score,
      gate_metric: 'hard',
      candidate_gate_score: score,
      gate: { rollouts_used: 30, rollouts_saved: 0 },
      action,
      current_score: best,
      best_score: best,
      best_step: s,
    });
  }
  const test = Array.from({ length: TEST_ITEMS }, (_, i) => row(`test-${pad(i, 5)}`, i));
  w('test_eval/results.jsonl', test.map((r) => `${JSON.stringify(r)}\n`).join(''));
  wj('history.json', history);
  w('events.jsonl', `${events.join('\n')}\n`);
  w('calls.jsonl', `${calls.join('\n')}\n`);
  wj('runtime_state.json', { last_completed_step: STEPS, status: 'running' });
}

async function timeIt(url: string, n: number): Promise<{ ms: number[]; bytes: number }> {
  const ms: number[] = [];
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const res = await fetch(url);
    const body = await res.arrayBuffer();
    ms.push(performance.now() - t);
    if (!res.ok) throw new Error(`${url}: ${res.status} ${new TextDecoder().decode(body).slice(0, 200)}`);
    bytes = body.byteLength;
  }
  return { ms, bytes };
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'skillopt-bench-dashboard-'));
  process.on('exit', () => fs.rmSync(root, { recursive: true, force: true }));
  const dir = path.join(root, 'big');
  let t = performance.now();
  generate(dir);
  console.log(
    `generated ${STEPS} steps × ${PER_STEP} trajectories (+ ${TEST_ITEMS} test rows) in ${((performance.now() - t) / 1000).toFixed(1)} s`,
  );
  const size = (f: string) => (fs.statSync(path.join(dir, f)).size / 1e6).toFixed(1);
  console.log(
    `history.json ${size('history.json')} MB, events.jsonl ${size('events.jsonl')} MB, calls.jsonl ${size('calls.jsonl')} MB, test_eval/results.jsonl ${size('test_eval/results.jsonl')} MB`,
  );

  const dash = await startDashboard({ roots: [root], host: '127.0.0.1', port: 0 });
  const run = encodeURIComponent('0/big');
  const mid = Math.floor(STEPS / 2);
  const u = (p: string) => `${dash.url}api/${p}`;
  const cases: [string, string][] = [
    ['runs list', u('runs')],
    ['run detail', u(`run?run=${run}`)],
    [`history (all ${STEPS} steps)`, u(`history?run=${run}`)],
    ['history (new steps only)', u(`history?run=${run}&since=${STEPS - 1}`)],
    ['step detail', u(`step?run=${run}&step=${mid}`)],
    ['skill versions list', u(`skills?run=${run}`)],
    ['diff first vs last skill', u(`diff?run=${run}&a=v:0&b=v:${STEPS}`)],
    ['step trajectories page', u(`trajectories?run=${run}&dir=steps/step_${pad(mid)}/rollout`)],
    [`test trajectories page (${TEST_ITEMS} rows)`, u(`trajectories?run=${run}&dir=test_eval&limit=50`)],
    [
      'test trajectories, fail filter, page 40',
      u(`trajectories?run=${run}&dir=test_eval&outcome=fail&offset=2000&limit=50`),
    ],
    ['test trajectories, text search', u(`trajectories?run=${run}&dir=test_eval&q=site%2042`)],
    ['one trajectory (last of test)', u(`trajectory?run=${run}&dir=test_eval&n=${TEST_ITEMS - 1}`)],
    ['one trajectory with conversation', u(`trajectory?run=${run}&dir=steps/step_${pad(mid)}/rollout&n=3`)],
  ];

  // Cold: the first request of each kind reads and indexes the files.
  const cold = new Map<string, number>();
  for (const [label, url] of cases) cold.set(label, (await timeIt(url, 1)).ms[0]!);
  // Warm: rounds in which every request follows a ping, so that the load of the machine weighs
  // on both alike; the ratio is taken per round, then its median.
  const ratios = new Map<string, number[]>(cases.map(([l]) => [l, []]));
  const times = new Map<string, number[]>(cases.map(([l]) => [l, []]));
  const bytes = new Map<string, number>();
  const pings: number[] = [];
  for (let round = 0; round < REPEAT; round++) {
    for (const [label, url] of cases) {
      const ping = median((await timeIt(u('ping'), 3)).ms);
      const r = await timeIt(url, 1);
      pings.push(ping);
      ratios.get(label)!.push(r.ms[0]! / ping);
      times.get(label)!.push(r.ms[0]!);
      bytes.set(label, r.bytes);
    }
  }
  const floor = median(pings);
  console.log(
    `\nfloor: /api/ping median ${floor.toFixed(2)} ms over ${pings.length} rounds (load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} CPUs)\n`,
  );
  console.log(
    `${'request'.padEnd(42)} ${'cold ms'.padStart(9)} ${'warm ms'.padStart(9)} ${'× ping'.padStart(8)} ${'KB'.padStart(8)}`,
  );
  for (const [label] of cases) {
    console.log(
      `${label.padEnd(42)} ${cold.get(label)!.toFixed(1).padStart(9)} ${median(times.get(label)!).toFixed(2).padStart(9)} ${median(ratios.get(label)!).toFixed(1).padStart(8)} ${(bytes.get(label)! / 1024).toFixed(1).padStart(8)}`,
    );
  }

  // A live run: one more step lands; what a page open on it fetches next.
  const history = JSON.parse(fs.readFileSync(path.join(dir, 'history.json'), 'utf8')) as Record<string, unknown>[];
  history.push({ ...history.at(-1), step: STEPS + 1 });
  fs.writeFileSync(path.join(dir, 'history.json'), JSON.stringify(history));
  fs.appendFileSync(
    path.join(dir, 'events.jsonl'),
    `${JSON.stringify({ time: new Date().toISOString(), type: 'stage_started', step: STEPS + 2, epoch: 10, stage: 'rollout' })}\n`,
  );
  t = performance.now();
  await timeIt(u(`run?run=${run}`), 1);
  await timeIt(u(`history?run=${run}&since=${STEPS}`), 1);
  const update = performance.now() - t;
  console.log(
    `\nafter a new step: run detail + new history rows ${update.toFixed(1)} ms (${(update / floor).toFixed(1)} × ping; re-parses history.json once)`,
  );
  console.log(
    `server process RSS ${(process.memoryUsage().rss / 1e6).toFixed(0)} MB (the bench client runs in the same process)`,
  );

  // Two large skills that differ on every line (the diff's worst case): it runs in a worker
  // thread under a time limit, and the server goes on answering meanwhile.
  const other = path.join(root, 'diff');
  const lines = (tag: string) =>
    Array.from({ length: 12_000 }, (_, i) => `- ${tag} rule ${i}: ${(i * 7919) % 10007}`).join('\n');
  fs.mkdirSync(path.join(other, 'skills'), { recursive: true });
  fs.writeFileSync(path.join(other, 'skills', 'skill_v0000.md'), lines('alpha'));
  fs.writeFileSync(path.join(other, 'best_skill.md'), lines('beta'));
  fs.writeFileSync(path.join(other, 'history.json'), '[]');
  const kb = (fs.statSync(path.join(other, 'best_skill.md')).size / 1024).toFixed(0);
  t = performance.now();
  let settled = false;
  const diff = fetch(u(`diff?run=${encodeURIComponent('0/diff')}&a=v:0&b=best`)).then(async (res) => {
    settled = true;
    return { status: res.status, ms: performance.now() - t, body: (await res.json()) as { error?: string } };
  });
  const during: number[] = [];
  while (!settled) during.push((await timeIt(u('ping'), 1)).ms[0]!);
  const d = await diff;
  console.log(
    `\ndiff of two ${kb} KB skills differing on every line: ${d.status} after ${(d.ms / 1000).toFixed(1)} s${d.body.error ? ` (${d.body.error})` : ''}\n` +
      `/api/ping meanwhile: ${during.length} answers, median ${median(during).toFixed(2)} ms, slowest ${Math.max(...during).toFixed(1)} ms`,
  );
  await dash.close();
}

const writeTo = process.argv.indexOf('--write');
if (writeTo >= 0) {
  const dir = path.resolve(process.argv[writeTo + 1] ?? 'outputs/dashboard-bench');
  if (fs.existsSync(dir)) throw new Error(`${dir} exists; choose a new directory`);
  generate(dir);
  console.log(`wrote a synthetic run of ${STEPS} steps to ${dir}`);
} else {
  await main();
}
