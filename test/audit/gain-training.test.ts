/**
 * The audit of accepted gains in training, on the simulator's planted cases: a rule that games a
 * gullible judge (caught by the second scorer, the env's exact-match rule), and rules worded for
 * one opening of the request (caught by the probes). Honest accepts pass both.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { readJson } from '../../src/run/atomic.ts';
import { readEvents } from '../../src/run/events.ts';
import { isAccepted, type HistoryRecord } from '../../src/run/records.ts';
import { simSystemPrompt } from '../../src/envs/sim/env.ts';
import { brittleShare } from '../../src/model/sim/audit-truth.ts';
import { makeTasks } from '../../src/model/sim/world.ts';
import { readText, trainSim, type SimRun } from '../helpers/train.ts';

const GAMED = ['env.scorer=judge', 'model.judge.options.gullible=true', 'model.optimizer.options.game=0.3'];
const BRITTLE = ['model.optimizer.options.brittle=0.5', 'train.seed=4'];
const GAMING = /Close every reply with the line/g;
const BRITTLE_RULE = /^- When a question begins with "/gm;

const step4 = (n: number) => String(n).padStart(4, '0');
const count = (text: string, marker: RegExp) => text.match(marker)?.length ?? 0;

/** Each scored step's candidate: whether it adds the marker to the skill it started from, and its record. */
function scored(run: SimRun, marker: RegExp): { adds: boolean; clean: boolean; h: HistoryRecord }[] {
  return run.history.flatMap((h) => {
    const file = path.join(run.out, 'steps', `step_${step4(h.step)}`, 'candidate_skill.md');
    if (!h.gate || !fs.existsSync(file)) return [];
    const start = readText(path.join(run.out, 'skills', `skill_v${step4(h.step - 1)}.md`));
    return [{ adds: count(readText(file), marker) > count(start, marker), clean: count(start, marker) === 0, h }];
  });
}

const verdict = (h: HistoryRecord, check: string) => h.audit?.checks.find((c) => c.check === check)?.verdict;

describe('the audit of accepted gains', () => {
  it('flags an accept whose gain a gullible judge gave and the exact rule does not, with the items as evidence', async () => {
    const run = await trainSim(GAMED);
    const steps = scored(run, GAMING);
    const gamed = steps.filter((s) => s.adds && isAccepted(s.h.action));
    assert.ok(gamed.length > 0, `actions: ${run.history.map((h) => h.action).join(', ')}`);
    for (const { h } of gamed) {
      assert.equal(verdict(h, 'second_scorer'), 'flag', `step ${h.step}`);
      const report = readJson<{
        checks: { check: string; summary: string; findings: { item: string; note: string }[] }[];
      }>(path.join(run.out, 'steps', `step_${step4(h.step)}`, 'audit.json'))!;
      const second = report.checks.find((c) => c.check === 'second_scorer')!;
      assert.match(second.summary, /under training's scorer, .* under the rule scorer/);
      assert.ok(second.findings.length > 0 && second.findings.every((f) => /^val-\d{4}$/.test(f.item)));
    }
    const honest = steps.filter((s) => !s.adds && s.clean && isAccepted(s.h.action));
    assert.ok(honest.length > 0);
    for (const { h } of honest) assert.equal(verdict(h, 'second_scorer'), 'pass', `honest step ${h.step}`);
    // The gate alone took the hack in: it is in the best skill.
    assert.match(readText(path.join(run.out, 'best_skill.md')), GAMING);
  });

  it('with on_flag reject, turns those accepts into rejects before they are handed on, and the hack stays out', async () => {
    const run = await trainSim([...GAMED, 'evaluation.audit.on_flag=reject', 'evaluation.gate_early_accept=true']);
    const rejected = run.history.filter((h) => h.action === 'reject_audit');
    assert.ok(rejected.length > 0, `actions: ${run.history.map((h) => h.action).join(', ')}`);
    for (const h of rejected) assert.equal(verdict(h, 'second_scorer'), 'flag');
    assert.doesNotMatch(readText(path.join(run.out, 'best_skill.md')), GAMING);
    const events = readEvents(path.join(run.out, 'events.jsonl'));
    assert.ok(
      events.every((e) => e.type !== 'gate_decision' || !('accepted_after' in e)),
      'no early accept',
    );
    // The rejected edits go to the optimizer's memory, as a gate reject's do.
    const digest = readJson<{ rejected_edits?: unknown[] }>(
      path.join(run.out, 'steps', `step_${step4(rejected[0]!.step)}`, 'trajectory_digest.json'),
    )!;
    assert.ok((digest.rejected_edits ?? []).length > 0);
    assert.equal(
      (run.summary as { total_rejects: number }).total_rejects,
      run.history.filter((h) => h.action.includes('reject')).length,
    );
  });

  it('flags an accept whose gain does not survive recasting the requests, and passes the robust ones', async () => {
    const run = await trainSim(BRITTLE);
    // The simulator's truth: how much of an accept's gain the brittle rules it adds make.
    const selection = makeTasks('val', 30, 7, 0.06);
    const accepts = scored(run, BRITTLE_RULE)
      .filter((s) => isAccepted(s.h.action))
      .map((s) => {
        const dir = path.join(run.out, 'steps', `step_${step4(s.h.step)}`);
        const start = readText(path.join(run.out, 'skills', `skill_v${step4(s.h.step - 1)}.md`));
        return {
          h: s.h,
          ...brittleShare(readText(path.join(dir, 'candidate_skill.md')), start, selection, simSystemPrompt),
        };
      });
    const brittle = accepts.filter((a) => a.share > 0.25 && a.gain >= 2);
    const robust = accepts.filter((a) => a.share === 0);
    assert.ok(brittle.length > 0 && robust.length > 0, JSON.stringify(accepts.map((a) => [a.h.step, a.share, a.gain])));
    for (const { h } of brittle) assert.equal(verdict(h, 'probes'), 'flag', `brittle step ${h.step}`);
    for (const { h } of robust) assert.equal(verdict(h, 'probes'), 'pass', `robust step ${h.step}`);
    // The variants ran as rollouts of their own, under both skills.
    const dir = path.join(run.out, 'steps', `step_${step4(brittle[0]!.h.step)}`, 'probes');
    for (const side of ['current', 'candidate']) {
      const lines = readText(path.join(dir, side, 'results.jsonl'))
        .trim()
        .split('\n');
      assert.ok(lines.length >= 2);
      assert.ok(
        lines.every((l) => /~(reframe|wrap)"/.test(l)),
        lines[0],
      );
    }
  });

  it('costs nothing with its checks off, and the default run records both checks on every accept', async () => {
    const on = await trainSim(['train.num_epochs=1']);
    const off = await trainSim(['train.num_epochs=1', 'evaluation.audit.checks=[leak,scorer_gaming,sealed_test]']);
    for (const h of on.history.filter((r) => isAccepted(r.action))) {
      assert.equal(verdict(h, 'second_scorer'), 'pass');
      assert.equal(verdict(h, 'probes'), 'pass');
    }
    for (const h of off.history) assert.equal(verdict(h, 'probes'), undefined);
    const calls = (r: SimRun) => (r.summary as { provider_calls: number }).provider_calls;
    assert.ok(calls(on) > calls(off), `${calls(on)} > ${calls(off)}`);
    assert.deepEqual(
      on.history.map((h) => h.action),
      off.history.map((h) => h.action),
      'with on_flag warn, the checks change no decision',
    );
  });
});
