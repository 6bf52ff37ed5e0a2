/** The Markdown tables of `skillopt eval`: skills down, targets across, then types and comparisons. */
import type { CellStats, EvalSummary } from './summary.ts';
import type { PairedTest } from '../../util/stats.ts';

const f3 = (x: number) => x.toFixed(3);

function cellText(s: CellStats | undefined, key: 'hard' | 'soft'): string {
  if (!s || s.n === 0) return '–';
  const ci = key === 'hard' ? s.hard_ci95 : s.soft_ci95;
  return `${f3(s[key])}${ci ? ` [${f3(ci[0])}, ${f3(ci[1])}]` : ''} (n=${s.n})`;
}

function table(header: string[], rows: string[][]): string {
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

function testText(t: PairedTest): string {
  const sign = t.diff > 0 ? '+' : '';
  const ci = t.ci ? ` [${t.ci[0] > 0 ? '+' : ''}${f3(t.ci[0])}, ${t.ci[1] > 0 ? '+' : ''}${f3(t.ci[1])}]` : '';
  const p = t.p === null ? 'n/a' : t.p < 0.001 ? '<0.001' : f3(t.p);
  const method = t.method === 'mcnemar_exact' ? 'McNemar exact' : t.method === 'paired_t' ? 'paired t' : '–';
  return `${sign}${f3(t.diff)}${ci} | ${p} (${method})`;
}

export function evalMarkdown(s: EvalSummary, envName: string): string {
  const skills = [...new Set(s.cells.map((c) => c.skill_label))];
  const targets = [...new Set(s.cells.map((c) => c.target))];
  const cell = (skill: string, target: string) => s.cells.find((c) => c.skill_label === skill && c.target === target);
  const out: string[] = [];
  out.push(
    `## Evaluation: ${envName}, split ${s.split}, ${s.items} items${s.repeats > 1 ? `, ${s.repeats} repeats (item scores averaged over repeats)` : ''}`,
  );
  out.push('');
  out.push(
    "Mean score over items, 95% confidence interval in brackets (Wilson for 0/1 scores, Student's t otherwise).",
  );
  for (const key of ['hard', 'soft'] as const) {
    out.push(
      '',
      `### ${key}`,
      '',
      table(
        ['skill', ...targets],
        skills.map((sk) => [sk, ...targets.map((t) => cellText(cell(sk, t), key))]),
      ),
    );
  }
  const errors = s.cells.filter((c) => c.errors > 0);
  if (errors.length) {
    out.push(
      '',
      `Not scored (infrastructure errors): ${errors.map((c) => `${c.skill_label} on ${c.target}: ${c.errors}`).join('; ')}.`,
    );
  }
  for (const target of targets) {
    const types = [...new Set(skills.flatMap((sk) => Object.keys(cell(sk, target)?.by_type ?? {})))].sort();
    if (types.length < 2) continue;
    out.push(
      '',
      `### hard by type, ${target}`,
      '',
      table(
        ['type', ...skills],
        types.map((ty) => [ty, ...skills.map((sk) => cellText(cell(sk, target)?.by_type[ty], 'hard'))]),
      ),
    );
  }
  const activated = s.cells.filter((c) => c.activation);
  if (activated.length) {
    out.push(
      '',
      '### Activation (each rollout a trial; a query passes when its load rate is on the right side of 0.5)',
      '',
    );
    // Queries with answers score the task too: its success and activation × task success.
    const tasks = activated.some((c) => c.activation!.task !== undefined);
    out.push(
      table(
        [
          'skill',
          'target',
          'precision',
          'recall',
          'F1',
          'TP',
          'FP',
          'FN',
          'TN',
          'queries passed',
          ...(tasks ? ['task', 'activation × task'] : []),
        ],
        activated.map((c) => {
          const a = c.activation!;
          return [
            c.skill_label,
            c.target,
            f3(a.precision),
            f3(a.recall),
            f3(a.f1),
            ...[a.tp, a.fp, a.fn, a.tn].map(String),
            `${a.passed} of ${a.queries}`,
            ...(tasks ? [a.task === undefined ? '–' : f3(a.task), a.joint === undefined ? '–' : f3(a.joint)] : []),
          ];
        }),
      ),
    );
  }
  const costed = s.cells.filter((c) => c.per_task);
  if (costed.length) {
    out.push('', "### Cost per task (means over the scored rollouts; USD at the target's prices)", '');
    const agents = costed.some((c) => c.per_task!.turns !== undefined);
    const latency = costed.some((c) => c.per_task!.call_latency_p50_ms !== undefined);
    const ms = (v: number | undefined) => (v === undefined ? '–' : `${v} ms`);
    out.push(
      table(
        [
          'skill',
          'target',
          'input',
          'cached',
          'output',
          'reasoning',
          'USD',
          ...(agents ? ['turns', 'tool calls'] : []),
          ...(latency ? ['call p50', 'call p95'] : []),
        ],
        costed.map((c) => {
          const p = c.per_task!;
          return [
            c.skill_label,
            c.target,
            ...[p.input, p.cached, p.output, p.reasoning].map((v) => String(Math.round(v))),
            p.usd === null ? 'unknown' : `$${p.usd.toFixed(5)}`,
            ...(agents ? [String(p.turns ?? '–'), String(p.tool_calls ?? '–')] : []),
            ...(latency ? [ms(p.call_latency_p50_ms), ms(p.call_latency_p95_ms)] : []),
          ];
        }),
      ),
    );
  }
  if (s.comparisons.length) {
    out.push('', '### Paired comparisons (candidate − baseline, on the items both scored)', '');
    out.push(
      table(
        ['target', 'baseline', 'candidate', 'n', 'Δ hard [95% CI]', 'p (hard)', 'Δ soft [95% CI]', 'p (soft)'],
        s.comparisons.map((c) => [
          c.target,
          c.baseline,
          c.candidate,
          String(c.hard.n),
          ...testText(c.hard).split(' | '),
          ...testText(c.soft).split(' | '),
        ]),
      ),
    );
  }
  return `${out.join('\n')}\n`;
}
