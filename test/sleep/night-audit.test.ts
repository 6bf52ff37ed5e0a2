/**
 * The audit before a night is staged: an optimizer that memorises the night's tasks into the
 * skill gets a proposal the gate would take, and the audit keeps it from being staged, naming
 * the task; the same night with the audit off stages it.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { PROJECT, simNightHome } from './sim-night.ts';

const LEAKY = 'mine:\n  seed: 3\nmodel:\n  optimizer:\n    options:\n      leak: 1\n';

interface Report {
  documents: {
    document: string;
    staged: boolean;
    accepted: boolean;
    reason: string;
    audit?: { verdict: string; findings: string[] };
  }[];
}

function night(config: string): { report: Report; md: string; stdout: string } {
  const { home, sleep } = simNightHome(config);
  const run = sleep('run', '--project', PROJECT, '--since', '2026-11-01', '--backend', 'sim');
  assert.equal(run.status, 0, run.stderr);
  const nights = path.join(home, '.skillopt-sleep/nights');
  const dir = path.join(nights, fs.readdirSync(nights)[0]!);
  return {
    report: JSON.parse(fs.readFileSync(path.join(dir, 'report.json'), 'utf8')) as Report,
    md: fs.readFileSync(path.join(dir, 'report.md'), 'utf8'),
    stdout: run.stdout,
  };
}

test('a proposal that memorised a task is not staged, and the report says which task', () => {
  const audited = night(LEAKY);
  const doc = audited.report.documents[0]!;
  assert.equal(doc.accepted, true, 'the gate alone would take it');
  assert.equal(doc.staged, false);
  assert.equal(doc.audit?.verdict, 'fail');
  assert.match(doc.reason, /^not staged: the audit found leak fail: carries \d+ items? of the data/);
  assert.ok(
    doc.audit!.findings.some((f) => /of (train|val|test) item \S+ at SKILL\.md:\d+/.test(f)),
    doc.audit!.findings.join('\n'),
  );
  assert.match(audited.md, /- audit: \*\*fail\*\*/);
  assert.match(
    audited.stdout,
    /skillopt-sleep-learned: accept_new_best \(val [\d.]+ → [\d.]+\), not staged: the audit found leak fail/,
  );

  const open = night(`${LEAKY}consolidate:\n  audit:\n    checks: []\n`);
  const plain = open.report.documents[0]!;
  assert.equal(plain.staged, true);
  assert.equal(plain.audit, undefined);
});
