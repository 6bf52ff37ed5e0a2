// @ts-check
// Two or more runs on one chart, by step: a selection score, the train batch score, or
// cumulative tokens and cost.
import { createChart, stageColor } from './charts.js';
import { api, append, debounce, errorBox, h, int, isNum, put, stepCost, stepTokens, usd } from './util.js';

const METRICS = {
  best_score: { label: 'best selection score', y: (r) => r.best_score, range: [0, 1.02] },
  current_score: { label: 'current selection score', y: (r) => r.current_score, range: [0, 1.02] },
  candidate_gate_score: { label: 'candidate selection score', y: (r) => r.candidate_gate_score, range: [0, 1.02] },
  rollout_hard: { label: 'train batch score', y: (r) => r.rollout_hard, range: [0, 1.02] },
  tokens: { label: 'cumulative tokens', y: (r) => stepTokens(r.tokens), cumulative: true, fmt: int },
  cost: { label: 'cumulative cost (USD)', y: (r) => stepCost(r.tokens), cumulative: true, fmt: usd },
};

export class CompareView {
  /** @type {HTMLDivElement} */
  chartBox;

  constructor(query) {
    this.ids = (query.get('runs') ?? '').split(',').filter(Boolean);
    this.metric = METRICS[query.get('metric')] ? query.get('metric') : 'best_score';
    this.refresh = debounce(() => this.draw(), 400);
  }

  async mount(el) {
    this.el = el;
    const { runs } = await api('runs');
    this.runs = runs;
    const picks = h(
      'div.filters',
      runs.map((r) =>
        h(
          'label',
          { style: 'margin-right:12px' },
          h('input', {
            type: 'checkbox',
            value: r.id,
            checked: this.ids.includes(r.id),
            onchange: (e) => this.toggle(r.id, e.target.checked),
          }),
          ` ${r.name}`,
        ),
      ),
    );
    const metric = h(
      'select',
      {
        onchange: (e) => {
          this.metric = e.target.value;
          this.rebuild();
        },
      },
      Object.entries(METRICS).map(([k, m]) => h('option', { value: k, selected: k === this.metric }, m.label)),
    );
    this.chartBox = h('div');
    append(
      el,
      h('h1', 'Compare runs'),
      h('div.panel', h('h3', 'Runs'), picks, h('div.filters', h('span.sub', 'metric'), metric)),
      this.chartBox,
    );
    await this.rebuild();
  }

  unmount() {
    this.chart?.destroy();
  }

  onLive(msg) {
    if (msg.type === 'run' && this.ids.includes(msg.run)) this.refresh();
  }

  toggle(id, on) {
    this.ids = on ? [...new Set([...this.ids, id])] : this.ids.filter((x) => x !== id);
    history.replaceState(
      null,
      '',
      `#/compare?runs=${this.ids.map(encodeURIComponent).join(',')}&metric=${this.metric}`,
    );
    return this.rebuild();
  }

  async rebuild() {
    this.chart?.destroy();
    this.chart = undefined;
    put(this.chartBox);
    if (this.ids.length === 0) {
      append(this.chartBox, h('div.panel.empty-state', 'Pick two or more runs above.'));
      return;
    }
    const m = METRICS[this.metric];
    const names = this.ids.map((id) => this.runs.find((r) => r.id === id)?.name ?? id);
    this.chart = createChart(this.chartBox, {
      id: 'compare',
      title: m.label,
      yLabel: m.label,
      yRange: m.range,
      height: 360,
      fmt: m.fmt ? (v) => (v == null ? '—' : m.fmt(v)) : undefined,
      axisFmt: m.fmt,
      series: names.map((n, i) => ({ label: n, color: stageColor(i), kind: 'line' })),
    });
    await this.draw();
  }

  async draw() {
    if (!this.chart) return;
    const m = METRICS[this.metric];
    let histories;
    try {
      histories = await Promise.all(this.ids.map((id) => api('history', { run: id })));
    } catch (err) {
      this.chartBox.prepend(errorBox(err));
      return;
    }
    const steps = [...new Set(histories.flatMap((hh) => hh.rows.map((r) => r.step)))].sort((a, b) => a - b);
    const ys = histories.map((hh) => {
      const byStep = new Map();
      let acc = 0;
      for (const r of hh.rows) {
        const v = m.y(r);
        if (m.cumulative) {
          if (isNum(v)) acc += v;
          byStep.set(r.step, acc);
        } else byStep.set(r.step, isNum(v) ? v : null);
      }
      return steps.map((s) => (byStep.has(s) ? byStep.get(s) : null));
    });
    this.chart.setData(steps, ys);
  }
}
