// @ts-check
// One step: the gate's decision, every ranked edit with its fate (applied, or skipped and
// why), the merged edits the budget left out, the rejected edits with the scores that rejected
// them, the diff of the candidate against the current skill, and the step's rollouts.
import { PackagePanel } from './package-panel.js';
import { auditPanel } from './audit-panel.js';
import { DiffPanel } from './skills-panel.js';
import { TrajectoryBrowser } from './trajectories.js';
import {
  decisionBadge,
  api,
  append,
  badge,
  candidateScore,
  debounce,
  earlyStopText,
  h,
  int,
  isNum,
  put,
  runLink,
  score,
  secs,
  stepCost,
  stepTokens,
  usd,
} from './util.js';

/** Precision and recall of the skill's loading, on the gate's queries and the step's rollouts. */
function activationText(r) {
  const pr = (a) => `P ${score(a.precision)} R ${score(a.recall)}`;
  return [
    r.activation_val ? `selection ${pr(r.activation_val)}` : '',
    r.activation_train ? `train F1 ${score(r.activation_train.f1)}` : '',
    r.step_target === 'description' ? 'description step' : '',
  ]
    .filter(Boolean)
    .join(' · ');
}

export class StepView {
  constructor(runId, step, query) {
    this.runId = runId;
    this.step = step;
    this.query = query;
    this.refresh = debounce(() => this.reloadIfIncomplete(), 500);
  }

  async mount(el) {
    this.el = el;
    const [view, skills, run] = await Promise.all([
      api('step', { run: this.runId, step: this.step }),
      api('skills', { run: this.runId }),
      api('run', { run: this.runId }),
    ]);
    this.view = view;
    const s = this.step;
    const total = run.progress.completedSteps;
    append(
      el,
      h(
        'div.crumbs',
        h('a', { href: '#/' }, 'Runs'),
        ' / ',
        h('a', { href: runLink(this.runId) }, run.name),
        ` / step ${s}`,
      ),
      h(
        'div.row',
        h('h1', `Step ${s}`),
        view.gate ? decisionBadge(view.gate.decision) : badge('incomplete', 'in progress or not run'),
        view.record ? h('span.sub', `epoch ${view.record.epoch}`) : null,
        h('div.grow'),
        s > 1 ? h('a', { href: runLink(this.runId, `/step/${s - 1}`) }, `‹ step ${s - 1}`) : null,
        s < Math.max(total, s) || s < (run.progress.totalSteps ?? 0)
          ? h('a', { href: runLink(this.runId, `/step/${s + 1}`) }, `step ${s + 1} ›`)
          : null,
      ),
      ...view.problems.map((p) => h('div.callout', p)),
      this.summary(view),
      this.gate(view),
      this.pairedTest(view),
      this.poolLine(view),
      this.descriptionChange(view),
      auditPanel(view.audit),
      this.edits(view),
    );
    const diffBox = h(
      'div.panel#diff',
      h(
        'h3',
        view.gate?.pool
          ? `Candidate against its parent, ${view.gate.pool.parent}`
          : 'Candidate against the current skill',
      ),
    );
    append(el, diffBox);
    if (view.package) new PackagePanel(this.runId, view.package, view.record).mount(el);
    if (view.diff) await new DiffPanel(this.runId, skills.versions, view.diff.a, view.diff.b).mount(diffBox);
    else
      append(
        diffBox,
        h(
          'div.sub',
          view.gate?.decision.outcome === 'skipped'
            ? 'this step was skipped: no candidate skill'
            : 'no candidate skill saved for this step',
        ),
      );
    if (view.rollouts.length) {
      append(el, h('h2', 'Rollouts'));
      await new TrajectoryBrowser(this.runId, view.rollouts, this.query.get('dir')).mount(el);
    }
  }

  onLive(msg) {
    if (msg.type === 'run' && msg.run === this.runId) this.refresh();
  }

  /** A step still running gains its record and files: show them when they land. */
  async reloadIfIncomplete() {
    if (this.view?.record) return;
    const view = await api('step', { run: this.runId, step: this.step }).catch(() => null);
    if (view?.record) {
      put(this.el);
      await this.mount(this.el);
    }
  }

  summary(view) {
    const r = view.record;
    if (!r) return h('div.panel.sub', 'This step has no record yet: it is running, or the run stopped before it.');
    const card = (k, v, d) => h('div.card', h('div.k', k), h('div.v', v), d ? h('div.d', d) : null);
    const cost = stepCost(r.tokens);
    return h(
      'div.cards',
      card(
        'Train batch',
        score(r.rollout_hard),
        isNum(r.rollout_soft) ? `soft ${score(r.rollout_soft)} · ${r.rollout_n ?? '?'} items` : null,
      ),
      card(
        'Candidate (selection)',
        candidateScore(r),
        [earlyStopText(r), r.gate_metric && `metric ${r.gate_metric}`].filter(Boolean).join(' · ') || null,
      ),
      card(
        'Current → best',
        `${score(r.current_score)} / ${score(r.best_score)}`,
        isNum(r.best_step) ? `best from step ${r.best_step}` : null,
      ),
      card(
        'Learning rate',
        r.edit_budget ?? '—',
        `${r.n_edits_merged ?? '—'} merged → ${r.n_edits_ranked ?? '—'} ranked`,
      ),
      card(
        'Gate rollouts',
        r.gate ? `${r.gate.rollouts_used} used` : '—',
        r.gate ? `${r.gate.rollouts_saved} saved${r.gate.early_stopped ? ' (stopped early)' : ''}` : null,
      ),
      r.activation_val || r.activation_train
        ? card('Activation F1', r.activation_val ? score(r.activation_val.f1) : '—', activationText(r))
        : null,
      card('Tokens', int(stepTokens(r.tokens)), cost === null ? null : usd(cost)),
      card(
        'Time',
        secs(r.wall_time_s),
        r.timing
          ? Object.entries(r.timing)
              .map(([k, v]) => `${k.replace(/_s$/, '')} ${secs(v)}`)
              .join(' · ')
          : null,
      ),
    );
  }

  gate(view) {
    const g = view.gate;
    if (!g) return null;
    const rejected = view.rejected;
    const metric = g.metric ? ` (${g.metric})` : '';
    const d = g.decision;
    if (d.outcome === 'rejected') {
      const before = rejected?.scoreBefore ?? g.before;
      const atMost = g.atMost ?? rejected?.scoreAfterAtMost;
      const after = rejected?.scoreAfter ?? g.candidate;
      const scored = isNum(atMost)
        ? `the candidate scored ≤ ${score(atMost)}${metric} on the selection split (${earlyStopText(view.record) ?? 'stopped early'}: it could no longer beat ${score(before)} for the current skill)`
        : `the candidate scored ${score(after)}${metric} on the selection split, not above ${score(before)} for the current skill`;
      return h(
        'div.callout#rejected',
        { dataset: { early: isNum(atMost) ? '1' : '0' } },
        h('strong', 'Rejected by the gate: '),
        `${scored}; the current skill stays.`,
        rejected?.edits?.length
          ? [
              h('div.sub', 'Rejected edits (kept in the step buffer so later reflections avoid them):'),
              h(
                'ol',
                rejected.edits.map((e) =>
                  h(
                    'li',
                    h('code', e.op ?? e.type ?? '?'),
                    ' ',
                    e.target ? h('span.target', `“${e.target}” → `) : null,
                    e.content ?? e.instruction ?? e.title ?? '',
                  ),
                ),
              ),
            ]
          : null,
      );
    }
    if (d.forced)
      return h(
        'div.callout.ok',
        h('strong', 'Accepted without the gate: '),
        `selection score ${score(g.candidate)}${metric}.`,
      );
    if (d.outcome === 'accepted') {
      const against = d.newBest
        ? `the best so far, ${score(g.bestBefore)}`
        : `the current skill's ${score(g.before)} (best ${score(g.bestBefore)})`;
      return h(
        'div.callout.ok',
        h('strong', d.newBest ? 'Accepted, new best: ' : 'Accepted: '),
        `the candidate scored ${score(g.candidate)}${metric} on the selection split, above ${against}.`,
      );
    }
    return h(
      'div.callout.warn',
      h('strong', 'Skipped: '),
      d.kind === 'skip_no_patches'
        ? 'reflection proposed no patches; the skill is unchanged.'
        : d.kind === 'skip_no_change'
          ? 'the selected changes left the skill as it was; it is unchanged and was not evaluated.'
          : d.kind === 'skip_invalid_package'
            ? `the edits broke the package, so the candidate was rejected before any rollout (${view.record?.skip_reason ?? 'see the package checks below'}).`
            : d.kind === 'skip_audit'
              ? `the audit rejected the candidate before any rollout (${view.record?.skip_reason ?? 'see the audit below'}).`
              : 'no rewrite was produced; the skill is unchanged.',
    );
  }

  /** A description step's change: the description the agent chooses the skill by, before and after. */
  descriptionChange(view) {
    const c = view.record?.description_change;
    if (!c) return null;
    return h(
      'div.panel#description-change',
      h('h3', 'Description'),
      h('div.diff', h('div.del', c.before), h('div.add', c.after)),
      view.record.activation_val?.flipped?.fixed.length
        ? h('div.sub', `gate queries now right: ${view.record.activation_val.flipped.fixed.join(', ')}`)
        : null,
      view.record.activation_val?.flipped?.broke.length
        ? h('div.sub', `gate queries now wrong: ${view.record.activation_val.flipped.broke.join(', ')}`)
        : null,
      view.record.activation_val?.failing.length
        ? h('div.sub', `gate queries still wrong: ${view.record.activation_val.failing.join(', ')}`)
        : null,
    );
  }

  /** The paired gate's verdict: effect per item and one-sided p-value against alpha. */
  pairedTest(view) {
    const t = view.gate?.test;
    if (!t) return null;
    const sign = t.effect >= 0 ? '+' : '';
    const method =
      { mcnemar_exact: "McNemar's exact test", paired_t: 'paired t-test', none: 'no paired items' }[t.method] ??
      t.method;
    const discordant = t.discordant
      ? ` · discordant: ${t.discordant.candidate_only} for the candidate, ${t.discordant.current_only} against`
      : '';
    return h(
      'div.panel#paired-test',
      { dataset: { p: String(t.p), effect: String(t.effect), passed: t.passed ? '1' : '0' } },
      h('strong', `Paired gate: ${t.passed ? 'passed' : 'not passed'}. `),
      `effect ${sign}${t.effect.toFixed(3)} per item, p = ${t.p < 0.001 ? t.p.toExponential(1) : t.p.toFixed(3)} (one-sided, α ${t.alpha}${t.min_delta ? `, minimum effect ${t.min_delta}` : ''})`,
      h(
        'div.sub',
        `${method} on ${t.n} item(s)${t.repeats > 1 ? `, ${t.repeats} samples each` : ''}${discordant}${t.stopped_early ? ' · stopped early: the test could no longer pass' : ''}`,
      ),
    );
  }

  /** With a candidate pool: the member this step improved, and the merge tried after it. */
  poolLine(view) {
    const p = view.gate?.pool;
    if (!p) return null;
    const merge = p.merge ? ` · merge of ${p.merge.parents.join(' + ')}: ${p.merge.action.replace(/_/g, ' ')}` : '';
    return h(
      'div.panel.sub#pool-step',
      `Pool: improved ${p.parent}; members after the step: ${p.members.join(', ')}${p.dropped.length ? ` · dropped ${p.dropped.join(', ')}` : ''}${merge}`,
    );
  }

  edits(view) {
    if (!view.edits.length && !view.notSelected.length) return view.failurePatterns.length ? this.patterns(view) : null;
    const row = (e) =>
      h(
        'tr.edit',
        { dataset: { status: e.status, applied: e.applied ? '1' : '0' } },
        h('td.num', e.index),
        h(
          'td',
          h('code', e.op),
          isNum(e.support_count) ? h('div.sub', `support ${e.support_count}`) : null,
          e.source_type ? h('div.sub', e.source_type) : null,
        ),
        h(
          'td',
          e.title ? h('div', h('strong', e.title)) : null,
          e.target ? h('div.target', `target: ${e.target}`) : null,
          h('div.content', e.content ?? ''),
        ),
        h(
          'td',
          badge(
            e.applied
              ? 'applied'
              : e.status === 'not_selected'
                ? 'not_selected'
                : e.status === 'selected'
                  ? 'selected'
                  : 'skipped',
            e.status.replace(/_/g, ' '),
          ),
          e.match === 'whitespace' ? h('div.reason', 'target matched ignoring whitespace') : null,
          e.reason ? h('div.reason', e.reason) : null,
        ),
      );
    const head = h('thead', h('tr', h('th.num', '#'), h('th', 'Op'), h('th', 'Edit'), h('th', 'Result')));
    return h(
      'div.panel',
      h('h3', 'Ranked edits'),
      view.reasoning ? h('div.sub', { style: 'margin-bottom:8px' }, view.reasoning) : null,
      h(
        'table#edits',
        head,
        h('tbody', view.edits.map(row)),
        view.notSelected.length
          ? h(
              'tbody#not-selected',
              h('tr', h('th', { colspan: 4 }, 'Merged but not selected')),
              view.notSelected.map(row),
            )
          : null,
      ),
      view.failurePatterns.length ? this.patterns(view) : null,
    );
  }

  patterns(view) {
    return h(
      'div',
      h('h3', 'Failure patterns'),
      h(
        'ul',
        view.failurePatterns.map((p) =>
          h(
            'li',
            `${p.pattern} ×${p.count}`,
            p.task_ids?.length
              ? h('span.sub', ` (${p.task_ids.slice(0, 12).join(', ')}${p.task_ids.length > 12 ? ', …' : ''})`)
              : null,
          ),
        ),
      ),
    );
  }
}
