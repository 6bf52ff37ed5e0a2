/**
 * A step's timeline, from a run directory's `events.jsonl` and `calls.jsonl`: when each stage
 * started and ended (seconds from the step's start), and how busy the target and optimizer
 * were meanwhile (calls in flight over the role's concurrency), so that the idle time of the
 * target workers, where more work could go, shows.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readEvents } from '../src/run/events.ts';

interface CallLine {
  time: string;
  role: string;
  latency_ms: number;
  from: string;
}

/** Seconds of overlap between [a0, a1] and [b0, b1]. */
const overlap = (a0: number, a1: number, b0: number, b1: number) => Math.max(0, Math.min(a1, b1) - Math.max(a0, b0));

export function stepTimeline(
  runDir: string,
  step: number,
  concurrency: { target: number; optimizer: number },
): string[] {
  const at = (iso: string) => Date.parse(iso) / 1000;
  const events = readEvents(path.join(runDir, 'events.jsonl'));
  const stages: { stage: string; start: number; end?: number }[] = [];
  let end: number | undefined;
  for (const e of events) {
    if (!('step' in e) || e.step !== step) continue;
    // The epoch boundary's and the final evaluation's stages carry the last step's number.
    if (e.type === 'stage_started' && end === undefined) stages.push({ stage: e.stage, start: at(e.time) });
    if (e.type === 'stage_finished') {
      const open = stages.findLast((s) => s.stage === e.stage);
      if (open) open.end = at(e.time);
    }
    if (e.type === 'step_finished') end = at(e.time);
  }
  const first = stages[0];
  if (!first || end === undefined) return [`  (step ${step} not found in ${runDir})`];
  const calls = fs
    .readFileSync(path.join(runDir, 'calls.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as CallLine)
    .filter((c) => c.from === 'provider')
    .map((c) => ({ role: c.role, end: at(c.time), start: at(c.time) - c.latency_ms / 1000 }));
  const busy = (role: 'target' | 'optimizer', s0: number, s1: number) =>
    s1 > s0
      ? calls.filter((c) => c.role === role).reduce((n, c) => n + overlap(c.start, c.end, s0, s1), 0) /
        (concurrency[role] * (s1 - s0))
      : 0;
  const t0 = first.start;
  const pct = (x: number) => `${Math.round(100 * x)}%`.padStart(5);
  const lines = [
    `  timeline of step ${step} (s from its start; busy = calls in flight / concurrency):`,
    '    stage        start    end   target busy  optimizer busy',
  ];
  for (const s of stages) {
    const e = s.end ?? end;
    lines.push(
      `    ${s.stage.padEnd(10)} ${(s.start - t0).toFixed(2).padStart(6)} ${(e - t0).toFixed(2).padStart(6)}  ${pct(busy('target', s.start, e)).padStart(11)}  ${pct(busy('optimizer', s.start, e)).padStart(14)}`,
    );
  }
  lines.push(
    `    step total        ${(end - t0).toFixed(2).padStart(6)}  ${pct(busy('target', t0, end)).padStart(11)}  ${pct(busy('optimizer', t0, end)).padStart(14)}`,
  );
  const next = events.find((e) => e.type === 'stage_started' && e.step === step + 1);
  if (next && at(next.time) < end)
    lines.push(
      `    the next step started at ${(at(next.time) - t0).toFixed(2)} s (the gate accepted early; its last selection items ran beside it)`,
    );
  return lines;
}
