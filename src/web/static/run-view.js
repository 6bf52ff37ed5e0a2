// One run: its header, score / learning-rate / token / cost / timing / gate charts per step with
// epoch boundaries, the epochs, the final test table and the step table (overview tab); the
// skill versions and their diffs (skills tab); the baseline and test rollouts (evaluations
// tab); the configuration (config tab). Step records arrive incrementally while it runs.
import { createChart, COLORS, stageColor } from './charts.js';
import { EvalsPanel } from './evals-panel.js';
import { LineagePanel } from './lineage-view.js';
import { RunActions } from './run-actions.js';
import { SkillsPanel } from './skills-panel.js';
import { TrajectoryBrowser } from './trajectories.js';
import {
  decisionBadge,
  ago,
  api,
  append,
  badge,
  candidateScore,
  costOf,
  debounce,
  earlyStopText,
  errorBox,
  h,
  int,
  isNum,
  pct,
  progressBar,
  put,
  runLink,
  score,
  secs,
  stageLine,
  statusBadge,
  stepCost,
  stepTokens,
  usd,
} from './util.js';

const PAGE = 50;
/** What a slow update or a meta skill did at an epoch boundary. */
const epochBadge = (result) => (!result ? '—' : result.decision ? decisionBadge(result.decision) : badge('done'));

const TABS = [
  ['overview', 'Overview'],
  ['skills', 'Skills'],
  ['candidates', 'Candidates'],
  ['evals', 'Evaluations'],
  ['config', 'Config'],
];

export class RunView {
  constructor(id, tab, query) {
    this.id = id;
    this.tab = TABS.some(([t]) => t === tab) ? tab : 'overview';
    this.query = query;
    this.rows = [];
    this.charts = {};
    this.page = 0;
    this.refresh = debounce(() => this.reload(), 300);
  }

  async mount(el) {
    this.el = el;
    const [detail, history] = await Promise.all([api('run', { run: this.id }), api('history', { run: this.id })]);
    this.detail = detail;
    this.rows = history.rows;
    this.head = h('div#run-head');
    this.body = h('div');
    this.actions = new RunActions(this.id);
    const actionsBox = h('div');
    append(
      el,
      h('div.crumbs', h('a', { href: '#/' }, 'Runs'), ' / ', detail.name),
      this.head,
      actionsBox,
      h(
        'div.tabs',
        TABS.map(([t, label]) =>
          h(
            'a',
            { href: runLink(this.id, t === 'overview' ? '' : `/${t}`), class: t === this.tab ? 'active' : '' },
            label,
          ),
        ),
      ),
      this.body,
    );
    this.renderHead();
    await this.actions.mount(actionsBox);
    if (this.tab === 'overview') this.renderOverview();
    else if (this.tab === 'skills') await new SkillsPanel(this.id, this.query).mount(this.body);
    else if (this.tab === 'candidates') await new LineagePanel(this.id).mount(this.body);
    else if (this.tab === 'evals') await this.renderEvals();
    else if (this.tab === 'config')
      append(
        this.body,
        h('div.panel', h('pre', JSON.stringify(detail.config ?? { note: 'this run has no config.json' }, null, 2))),
      );
  }

  unmount() {
    for (const c of Object.values(this.charts)) c.destroy();
    this.charts = {};
  }

  onLive(msg) {
    if (msg.type === 'run' && msg.run === this.id) {
      this.refresh();
      this.actions?.refresh();
    }
  }

  /** One reload at a time; a change that arrives meanwhile is read right after. */
  async reload() {
    if (this.loading) {
      this.again = true;
      return;
    }
    this.loading = true;
    try {
      await this.reloadOnce();
    } finally {
      this.loading = false;
      if (this.again) {
        this.again = false;
        this.refresh();
      }
    }
  }

  async reloadOnce() {
    try {
      const last = this.rows.at(-1)?.step ?? 0;
      const [detail, history] = await Promise.all([
        api('run', { run: this.id }),
        api('history', { run: this.id, since: last }),
      ]);
      this.detail = detail;
      if (detail.progress.completedSteps < last) {
        this.rows = (await api('history', { run: this.id })).rows; // the history was rewritten
      } else {
        this.rows = this.rows.concat(history.rows.filter((r) => r.step > last));
      }
      this.renderHead();
      if (this.tab === 'overview') this.updateOverview();
    } catch (err) {
      this.head.prepend(errorBox(err));
    }
  }

  renderHead() {
    const d = this.detail;
    const p = d.progress;
    put(
      this.head,
      h(
        'div.row',
        h('h1', d.name),
        statusBadge(d),
        d.layout === 'python' ? badge('incomplete', 'Python SkillOpt layout') : null,
        h('div.grow'),
        h(
          'div',
          { style: 'min-width:220px' },
          progressBar(p.completedSteps, p.totalSteps),
          h(
            'div.sub',
            `step ${p.completedSteps}${p.totalSteps ? ` of ${p.totalSteps}` : ''}${p.epochs ? ` · epoch ${p.epoch ?? '—'} of ${p.epochs}` : ''}`,
          ),
          stageLine(p.stage),
        ),
      ),
      h(
        'div.sub',
        [
          d.env && `env ${d.env}`,
          d.target && `target ${d.target}`,
          d.optimizer && `optimizer ${d.optimizer}`,
          `updated ${ago(d.updatedAt)}`,
        ]
          .filter(Boolean)
          .join(' · '),
      ),
      d.statusDetail ? h('div.callout.warn', d.statusDetail) : null,
      ...d.problems.map((pr) => h('div.callout', { dataset: { problem: '1' } }, pr)),
    );
  }

  // ---- overview ----------------------------------------------------------------------------

  renderOverview() {
    this.cardsEl = h('div.cards');
    const charts = h('div.charts');
    this.tablesEl = h('div');
    this.stepsEl = h('div.panel');
    append(this.body, this.cardsEl, charts, this.tablesEl, h('h2', 'Steps'), this.stepsEl);
    this.charts.scores = createChart(charts, {
      id: 'scores',
      title: 'Scores per step',
      yLabel: 'score',
      yRange: [0, 1.02],
      series: [
        { label: 'train batch', color: COLORS.train, kind: 'line', width: 1.5 },
        { label: 'candidate (selection)', color: COLORS.candidate, kind: 'line', width: 1, dash: [4, 3] },
        { label: 'current', color: COLORS.current, kind: 'line' },
        { label: 'best', color: COLORS.best, kind: 'line', width: 2.5 },
        { label: 'accepted', color: COLORS.accept, kind: 'points' },
        { label: 'rejected', color: COLORS.reject, kind: 'points' },
        // The gate stopped once a reject was certain: the marker sits at the most the candidate could have scored.
        { label: 'rejected (at most)', color: COLORS.reject, kind: 'points', hollow: true },
        { label: 'skipped', color: COLORS.skip, kind: 'points', size: 7 },
      ],
    });
    this.charts.lr = createChart(charts, {
      id: 'lr',
      title: 'Learning rate (edit budget) and edits applied',
      yLabel: 'edits',
      series: [
        { label: 'edit budget', color: COLORS.lr, kind: 'line' },
        { label: 'edits applied', color: COLORS.applied, kind: 'bars' },
      ],
    });
    this.stageCharts = charts;
    this.updateOverview();
  }

  /** Stacked charts whose series (stages) are known only from the data; rebuilt when they change. */
  stackedChart(key, spec, stages) {
    const sig = stages.join('|');
    if (this.charts[key] && this.charts[key].sig === sig) return this.charts[key];
    this.charts[key]?.destroy();
    const chart = createChart(this.stageCharts, {
      ...spec,
      id: key,
      stacked: true,
      series: stages.map((s, i) => ({ label: s, color: stageColor(i) })),
    });
    chart.sig = sig;
    this.charts[key] = chart;
    return chart;
  }

  updateOverview() {
    const d = this.detail;
    const rows = this.rows;
    this.renderCards();
    const base = isNum(d.baselineSelection) ? d.baselineSelection : null;
    const xs = (base !== null ? [0] : []).concat(rows.map((r) => r.step));
    const pad = (arr) => (base !== null ? [null] : []).concat(arr);
    const val = (f) => rows.map((r) => (isNum(f(r)) ? f(r) : null));
    const lines = this.epochLines();
    this.charts.scores.setData(
      xs,
      [
        pad(val((r) => r.rollout_hard)),
        pad(val((r) => r.candidate_gate_score)),
        (base !== null ? [base] : []).concat(val((r) => r.current_score)),
        (base !== null ? [base] : []).concat(val((r) => r.best_score)),
        pad(val((r) => (r.decision.outcome === 'accepted' ? (r.candidate_gate_score ?? r.current_score) : null))),
        pad(val((r) => (r.decision.outcome === 'rejected' ? r.candidate_gate_score : null))),
        pad(
          val((r) =>
            r.decision.outcome === 'rejected' && !isNum(r.candidate_gate_score) ? r.candidate_gate_upper_bound : null,
          ),
        ),
        pad(val((r) => (r.decision.outcome === 'skipped' ? r.current_score : null))),
      ],
      lines,
    );
    const sx = rows.map((r) => r.step);
    this.charts.lr.setData(sx, [val((r) => r.edit_budget), val((r) => r.edit_apply_summary?.applied)], lines);

    const tokenStages = [...new Set(rows.flatMap((r) => Object.keys(r.tokens ?? {})))];
    if (tokenStages.length) {
      this.stackedChart(
        'tokens',
        { title: 'Tokens per step, by stage', yLabel: 'tokens', fmt: (v) => (v == null ? '—' : int(v)), axisFmt: int },
        tokenStages,
      ).setData(
        sx,
        tokenStages.map((s) =>
          rows.map((r) =>
            r.tokens?.[s] ? (r.tokens[s].prompt_tokens ?? 0) + (r.tokens[s].completion_tokens ?? 0) : null,
          ),
        ),
        lines,
      );
      const priced = rows.some((r) => (stepCost(r.tokens) ?? 0) > 0);
      if (priced) {
        this.stackedChart(
          'cost',
          {
            title: 'Cost per step, by stage (USD)',
            yLabel: 'USD',
            fmt: (v) => (v == null ? '—' : usd(v)),
            axisFmt: (v) => usd(v),
          },
          tokenStages,
        ).setData(
          sx,
          tokenStages.map((s) => rows.map((r) => (isNum(r.tokens?.[s]?.cost_usd) ? r.tokens[s].cost_usd : null))),
          lines,
        );
      }
    }
    const timeStages = [...new Set(rows.flatMap((r) => Object.keys(r.timing ?? {})))];
    if (timeStages.length) {
      this.stackedChart(
        'timing',
        { title: 'Stage timings per step (seconds)', yLabel: 's', fmt: (v) => (v == null ? '—' : `${v.toFixed(1)}s`) },
        timeStages.map((s) => s.replace(/_s$/, '')),
      ).setData(
        sx,
        timeStages.map((s) => val((r) => r.timing?.[s])),
        lines,
      );
    }
    if (rows.some((r) => r.gate)) {
      this.stackedChart('gate', { title: 'Gate: selection rollouts used and saved', yLabel: 'rollouts' }, [
        'used',
        'saved',
      ]).setData(sx, [val((r) => r.gate?.rollouts_used), val((r) => r.gate?.rollouts_saved)], lines);
    }
    this.renderTables();
    this.renderSteps();
  }

  /** A dashed line where each epoch ends (its slow update and meta skill ran there). */
  epochLines() {
    const out = [];
    const lastStep = this.rows.at(-1)?.step;
    for (const e of this.detail.epochs ?? []) {
      if (!isNum(e.lastStep) || e.lastStep === lastStep) continue;
      const applied = e.slowUpdate?.decision?.outcome === 'accepted';
      out.push({ x: e.lastStep + 0.5, label: `epoch ${e.epoch + 1}${applied ? ' · slow update' : ''}` });
    }
    return out;
  }

  renderCards() {
    const d = this.detail;
    const rows = this.rows;
    const count = (outcome) => rows.filter((r) => r.decision.outcome === outcome).length;
    const wall = rows.reduce((a, r) => a + (r.wall_time_s ?? 0), 0);
    const card = (k, v, sub) => h('div.card', h('div.k', k), h('div.v', v), sub ? h('div.d', sub) : null);
    const u = d.usage;
    put(
      this.cardsEl,
      card('Best selection score', score(d.bestScore), d.bestStep !== undefined ? `step ${d.bestStep}` : null),
      card('Initial selection score', score(d.baselineSelection)),
      card(
        'Test: initial → best',
        `${score(d.test.baseline)} → ${score(d.test.best)}`,
        isNum(d.test.baseline) && isNum(d.test.best)
          ? `${d.test.best >= d.test.baseline ? '+' : ''}${((d.test.best - d.test.baseline) * 100).toFixed(1)} points`
          : null,
      ),
      card('Test: final skill', score(d.test.final)),
      card(
        'Steps',
        `${count('accepted')} / ${count('rejected')} / ${count('skipped')}`,
        'accepted / rejected / skipped',
      ),
      card(
        'Tokens',
        int(u.promptTokens + u.completionTokens),
        `${int(u.promptTokens)} in · ${int(u.completionTokens)} out${u.source !== 'calls' ? ` · from ${u.source}` : ''}`,
      ),
      card(
        'Cost',
        costOf(u),
        u.unpricedCalls > 0 && u.unpricedCalls < u.calls
          ? `${u.unpricedCalls} call(s) without a price`
          : u.reusedCalls
            ? `${u.reusedCalls} call(s) reused from cache`
            : null,
      ),
      card('Step time', secs(wall), rows.length ? `${secs(wall / rows.length)} per step` : null),
    );
  }

  /** The initial and best skills on other targets (evaluation.transfer_targets), as skillopt eval reports them. */
  transferTable(t) {
    const ci = (c) => (c.hard_ci95 ? h('div.sub', `${pct(c.hard_ci95[0])}–${pct(c.hard_ci95[1])}`) : null);
    const diff = (d) => `${d.diff >= 0 ? '+' : ''}${(d.diff * 100).toFixed(1)}`;
    return h(
      'div.panel',
      h('h3', `Transfer (${t.split} split, ${t.n_items} items)`),
      h(
        'table#transfer',
        h(
          'thead',
          h(
            'tr',
            h('th', 'Target'),
            h('th.num', 'Initial skill'),
            h('th.num', 'Best skill'),
            h('th.num', 'Best − initial'),
            h('th.num', 'p'),
          ),
        ),
        h(
          'tbody',
          t.rows.map((r) =>
            h(
              'tr',
              { dataset: { target: r.target } },
              h('td', r.target),
              h('td.num', pct(r.initial.hard), ci(r.initial)),
              h('td.num', pct(r.best.hard), ci(r.best)),
              h(
                'td.num',
                diff(r.hard),
                r.hard.ci ? h('div.sub', `${diff({ diff: r.hard.ci[0] })}…${diff({ diff: r.hard.ci[1] })}`) : null,
              ),
              h(
                'td.num',
                r.hard.p === null ? '—' : r.hard.p < 0.001 ? r.hard.p.toExponential(1) : r.hard.p.toFixed(3),
                h('div.sub', r.hard.method.replace('_', ' ')),
              ),
            ),
          ),
        ),
      ),
    );
  }

  renderTables() {
    const d = this.detail;
    const parts = [];
    if (d.tests.length) {
      const cell = (b) => (b && isNum(b.hard_acc) ? pct(b.hard_acc) : '—');
      parts.push(
        h(
          'div.panel',
          h('h3', 'Test (held-out split)'),
          h(
            'table#tests',
            h(
              'thead',
              h(
                'tr',
                h('th', 'Task type'),
                h('th.num', 'Items'),
                h('th.num', 'Initial skill'),
                h('th.num', 'Best skill'),
                h('th.num', 'Final skill'),
                h('th.num', 'Best − initial'),
              ),
            ),
            h(
              'tbody',
              d.tests.map((t) =>
                h(
                  'tr',
                  h('td', t.type === 'overall' ? h('strong', 'overall') : t.type),
                  h('td.num', t.best?.total ?? t.baseline?.total ?? '—'),
                  h('td.num', cell(t.baseline)),
                  h('td.num', cell(t.best)),
                  h('td.num', cell(t.final)),
                  h(
                    'td.num',
                    isNum(t.best?.hard_acc) && isNum(t.baseline?.hard_acc)
                      ? `${t.best.hard_acc >= t.baseline.hard_acc ? '+' : ''}${((t.best.hard_acc - t.baseline.hard_acc) * 100).toFixed(1)}`
                      : '—',
                  ),
                ),
              ),
            ),
          ),
        ),
      );
    }
    if (d.transfer) parts.push(this.transferTable(d.transfer));
    if (d.epochs.length) {
      const excerpt = (o, key) =>
        typeof o?.[key] === 'string'
          ? h('div.sub', { title: o[key] }, o[key].length > 160 ? `${o[key].slice(0, 160)}…` : o[key])
          : null;
      parts.push(
        h(
          'div.panel',
          h('h3', 'Epoch boundaries'),
          h(
            'table#epochs',
            h('thead', h('tr', h('th', 'Epoch'), h('th', 'Last step'), h('th', 'Slow update'), h('th', 'Meta skill'))),
            h(
              'tbody',
              d.epochs.map((e) =>
                h(
                  'tr',
                  h('td', e.epoch),
                  h('td', e.lastStep ?? '—'),
                  h(
                    'td',
                    epochBadge(e.slowUpdate),
                    isNum(e.slowUpdate?.prev_hard)
                      ? h(
                          'span.sub',
                          ` previous ${score(e.slowUpdate.prev_hard)} → current ${score(e.slowUpdate.curr_hard)}`,
                        )
                      : null,
                    isNum(e.slowUpdate?.selection_hard)
                      ? h('span.sub', ` · selection ${score(e.slowUpdate.selection_hard)}`)
                      : null,
                    excerpt(e.slowUpdate, 'slow_update_content'),
                  ),
                  h('td', epochBadge(e.metaSkill), excerpt(e.metaSkill, 'meta_skill_content')),
                ),
              ),
            ),
          ),
        ),
      );
    }
    const stages = Object.entries(d.usageByStage ?? {});
    const times = {};
    for (const r of this.rows)
      for (const [k, v] of Object.entries(r.timing ?? {})) times[k] = (times[k] ?? 0) + (v ?? 0);
    parts.push(
      h(
        'div.split',
        h(
          'div.panel',
          h('h3', `Usage by purpose${d.usage.source === 'calls' ? '' : ` (from ${d.usage.source})`}`),
          stages.length
            ? h(
                'table#usage',
                h(
                  'thead',
                  h(
                    'tr',
                    h('th', 'Purpose'),
                    h('th.num', 'Calls'),
                    h('th.num', 'Prompt'),
                    h('th.num', 'Completion'),
                    h('th.num', 'Cached'),
                    h('th.num', 'Reasoning'),
                    h('th.num', 'Cost'),
                  ),
                ),
                h(
                  'tbody',
                  stages
                    .sort(
                      (a, b) => b[1].promptTokens + b[1].completionTokens - (a[1].promptTokens + a[1].completionTokens),
                    )
                    .map(([k, s]) =>
                      h(
                        'tr',
                        h('td', k),
                        h('td.num', int(s.calls)),
                        h('td.num', int(s.promptTokens)),
                        h('td.num', int(s.completionTokens)),
                        h('td.num', int(s.cachedTokens)),
                        h('td.num', int(s.reasoningTokens)),
                        h('td.num', costOf(s)),
                      ),
                    ),
                ),
              )
            : h('div.sub', 'no usage recorded yet'),
        ),
        h(
          'div.panel',
          h('h3', 'Time by stage (all steps)'),
          Object.keys(times).length
            ? h(
                'table',
                h(
                  'tbody',
                  Object.entries(times).map(([k, v]) => h('tr', h('td', k.replace(/_s$/, '')), h('td.num', secs(v)))),
                ),
              )
            : h('div.sub', 'no timings yet'),
        ),
      ),
    );
    // Step banners are for the console; the rest (warnings, skips, notes) is worth a look.
    const logs = (d.logs ?? []).filter((l) => !/={6,}/.test(l.message)).slice(-12);
    if (logs.length) {
      parts.push(
        h(
          'div.panel',
          h('h3', 'Recent messages'),
          logs.map((l) =>
            h('div', { class: l.level === 'warn' ? 'problems' : 'sub' }, `${l.time.slice(11, 19)} ${l.message}`),
          ),
        ),
      );
    }
    put(this.tablesEl, ...parts);
  }

  renderSteps() {
    const rows = [...this.rows].reverse();
    const pages = Math.max(1, Math.ceil(rows.length / PAGE));
    this.page = Math.min(this.page, pages - 1);
    const shown = rows.slice(this.page * PAGE, (this.page + 1) * PAGE);
    const table = h(
      'table#steps',
      h(
        'thead',
        h(
          'tr',
          h('th.num', 'Step'),
          h('th.num', 'Epoch'),
          h('th', 'Action'),
          h('th.num', 'Train'),
          h('th.num', 'Candidate'),
          h('th.num', 'Current'),
          h('th.num', 'Best'),
          h('th.num', 'LR'),
          h('th.num', 'Edits applied'),
          h('th.num', 'Gate used / saved'),
          h('th.num', 'Tokens'),
          h('th.num', 'Cost'),
          h('th.num', 'Time'),
        ),
      ),
      h(
        'tbody',
        shown.map((r) =>
          h(
            'tr.click',
            { dataset: { step: r.step }, onclick: () => (location.hash = runLink(this.id, `/step/${r.step}`)) },
            h('td.num', h('a', { href: runLink(this.id, `/step/${r.step}`) }, r.step)),
            h('td.num', r.epoch),
            h('td', decisionBadge(r.decision)),
            h('td.num', score(r.rollout_hard)),
            h('td.num', { title: earlyStopText(r) ?? '' }, candidateScore(r)),
            h('td.num', score(r.current_score)),
            h('td.num', score(r.best_score)),
            h('td.num', r.edit_budget ?? '—'),
            h('td.num', r.edit_apply_summary ? `${r.edit_apply_summary.applied}/${r.edit_apply_summary.total}` : '—'),
            h('td.num', r.gate ? `${r.gate.rollouts_used} / ${r.gate.rollouts_saved}` : '—'),
            h('td.num', int(stepTokens(r.tokens))),
            h('td.num', stepCost(r.tokens) === null ? '—' : usd(stepCost(r.tokens))),
            h('td.num', secs(r.wall_time_s)),
          ),
        ),
      ),
    );
    const pager =
      pages > 1
        ? h(
            'div.pager',
            h(
              'button',
              {
                disabled: this.page === 0,
                onclick: () => {
                  this.page -= 1;
                  this.renderSteps();
                },
              },
              '‹ newer',
            ),
            `page ${this.page + 1} of ${pages}`,
            h(
              'button',
              {
                disabled: this.page >= pages - 1,
                onclick: () => {
                  this.page += 1;
                  this.renderSteps();
                },
              },
              'older ›',
            ),
          )
        : null;
    put(this.stepsEl, rows.length ? table : h('div.sub', 'no finished step yet'), pager);
  }

  // ---- evaluations ---------------------------------------------------------------------------

  async renderEvals() {
    await new EvalsPanel(this.id).mount(this.body);
    const { dirs } = await api('rollouts', { run: this.id });
    if (!dirs.length) {
      append(this.body, h('div.panel.empty-state', 'No baseline, test or epoch-boundary rollouts in this run yet.'));
      return;
    }
    await new TrajectoryBrowser(this.id, dirs, this.query.get('dir')).mount(this.body);
  }
}
