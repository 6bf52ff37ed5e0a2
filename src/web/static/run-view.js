// @ts-check
// One run: its header, score / learning-rate / token / cost / timing / gate charts per step with
// epoch boundaries, the epochs, the final test table and the step table (overview tab); the
// skill versions and their diffs (skills tab); the baseline and test rollouts (evaluations
// tab); the configuration (config tab). Step records arrive incrementally while it runs.
import { createChart, COLORS, stageColor } from './charts.js';
import { EvalsPanel } from './evals-panel.js';
import { LineagePanel } from './lineage-view.js';
import { RunActions } from './run-actions.js';
import { SkillsPanel } from './skills-panel.js';
import { renderCards, renderSteps, renderTables } from './run-tables.js';
import { TrajectoryBrowser } from './trajectories.js';
import {
  ago,
  api,
  append,
  badge,
  debounce,
  errorBox,
  h,
  int,
  isNum,
  progressBar,
  put,
  runLink,
  stageLine,
  statusBadge,
  stepCost,
  usd,
} from './util.js';

const TABS = [
  ['overview', 'Overview'],
  ['skills', 'Skills'],
  ['candidates', 'Candidates'],
  ['evals', 'Evaluations'],
  ['config', 'Config'],
];

export class RunView {
  /** @type {HTMLDivElement} */
  head;
  /** @type {HTMLDivElement} */
  body;
  /** @type {HTMLDivElement} */
  cardsEl;
  /** @type {HTMLDivElement} */
  tablesEl;
  /** @type {HTMLDivElement} */
  stepsEl;

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
        // The Candidates tab shows a pool's lineage: a run without a pool has none.
        TABS.filter(([t]) => t !== 'candidates' || detail.pool || this.tab === t).map(([t, label]) =>
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
      // A large event log is read a step at a time: the run is read again until it is whole.
      if (detail.problems.some((p) => p.startsWith('reading ')))
        setTimeout(() => this.head.isConnected && this.refresh(), 1000);
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
    renderCards(this);
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
    renderTables(this);
    renderSteps(this);
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
