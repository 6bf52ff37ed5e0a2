// @ts-check
// Evaluations of a run's skills: start `skillopt eval` of the best skill (on a split, with the
// config's target or others, optionally against the initial skill), and the results tables of
// every evaluation in the run's evals/ when done.
import { act, actGet, actionAccess } from './actions-client.js';
import { jobPanel } from './job-views.js';
import { api, append, errorBox, h, pct, put, score } from './util.js';

export class EvalsPanel {
  constructor(runId) {
    this.runId = runId;
    this.el = h('div#evals');
  }

  async mount(parent) {
    append(parent, this.el);
    this.access = await actionAccess();
    await this.load();
  }

  async load() {
    const [{ evals }, info] = await Promise.all([
      api('evals', { run: this.runId }),
      this.access.enabled ? actGet('run', { run: this.runId }) : null,
    ]);
    this.info = info;
    const jobs = (info?.jobs ?? []).filter((j) => j.kind === 'eval');
    put(
      this.el,
      this.form(),
      ...jobs.filter((j) => j.state === 'running' || j.exitCode !== 0).map((j) => jobPanel(j)),
      ...evals.map((e) => this.result(e, jobs)),
    );
    clearTimeout(this.timer);
    if (jobs.some((j) => j.state === 'running') && this.el.isConnected) this.timer = setTimeout(() => this.load(), 800);
  }

  form() {
    if (!this.access.enabled) return null;
    const i = this.info;
    if (!i.canEvaluate) return h('div.panel', h('h3', 'Evaluate the best skill'), h('div.sub', i.evalProblem));
    const split = h(
      'select#eval-split',
      ['test', 'val', 'train', 'all'].map((s) => h('option', { value: s }, s)),
    );
    const targets = h('textarea#eval-targets', {
      rows: 2,
      placeholder: "other targets, one BACKEND:MODEL a line (empty: the config's target)",
    });
    const repeats = h('input#eval-repeats', { type: 'number', min: 1, value: 1, size: 4 });
    const initial = h('input#eval-initial', { type: 'checkbox' });
    const go = async () => {
      try {
        await act('eval', {
          run: this.runId,
          split: split.value,
          targets: targets.value
            .split('\n')
            .map((t) => t.trim())
            .filter(Boolean),
          repeats: Number(repeats.value),
          compareInitial: initial.checked,
        });
      } catch (err) {
        this.el.prepend(errorBox(err));
        return;
      }
      await this.load();
    };
    return h(
      'div.panel',
      h('h3', 'Evaluate the best skill'),
      h(
        'div.form',
        h('label.field', h('span', 'Split'), split),
        h('label.field', h('span', 'Repeats'), repeats),
        h('label.field', h('span', 'Also the initial skill (paired comparison)'), initial),
      ),
      targets,
      h('div.row', h('button#evaluate', { onclick: go }, 'Evaluate')),
    );
  }

  result(e, jobs) {
    const s = e.summary;
    const running = jobs.some((j) => j.state === 'running' && j.outDir?.endsWith(`/${e.name}`));
    const head = h(
      'div.row',
      h('strong', e.name),
      s
        ? h('span.sub', `split ${s.split} · ${s.items ?? '—'} items · ${s.repeats} repeat(s)`)
        : h('span.sub', running ? 'running…' : 'no summary: stopped or failed'),
    );
    if (!s)
      return h('div.panel.eval', { dataset: { eval: e.name } }, head, e.problem ? h('div.callout', e.problem) : null);
    const ci = (c) => (c ? ` [${score(c[0])}, ${score(c[1])}]` : '');
    return h(
      'div.panel.eval',
      { dataset: { eval: e.name } },
      head,
      h(
        'table.eval-cells',
        h(
          'thead',
          h(
            'tr',
            h('th', 'Skill'),
            h('th', 'Target'),
            h('th.num', 'Items'),
            h('th.num', 'Hard (95% CI)'),
            h('th.num', 'Soft'),
            h('th.num', 'Not scored'),
          ),
        ),
        h(
          'tbody',
          s.cells.map((c) =>
            h(
              'tr',
              h('td', c.skill_label),
              h('td', c.target),
              h('td.num', c.n_items),
              h('td.num', `${score(c.hard)}${ci(c.hard_ci95)}`),
              h('td.num', score(c.soft)),
              h('td.num', c.errors),
            ),
          ),
        ),
      ),
      s.comparisons.length
        ? h(
            'table.eval-comparisons',
            h(
              'thead',
              h(
                'tr',
                h('th', 'Target'),
                h('th', 'Candidate − baseline'),
                h('th.num', 'Hard difference (95% CI)'),
                h('th.num', 'p'),
              ),
            ),
            h(
              'tbody',
              s.comparisons.map((c) =>
                h(
                  'tr',
                  h('td', c.target),
                  h('td', `${c.candidate} − ${c.baseline}`),
                  h('td.num', `${pct(c.hard.diff)}${c.hard.ci ? ` [${pct(c.hard.ci[0])}, ${pct(c.hard.ci[1])}]` : ''}`),
                  h('td.num', c.hard.p === null ? '—' : c.hard.p.toFixed(3)),
                ),
              ),
            ),
          )
        : null,
    );
  }
}
