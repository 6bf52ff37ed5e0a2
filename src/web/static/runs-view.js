// @ts-check
// Every run under the run roots, newest first; running ones update as their files change. Below
// them, the Sleep nights.
import { nightsPanel } from './nights-view.js';
import {
  ago,
  api,
  append,
  costOf,
  debounce,
  errorBox,
  h,
  int,
  progressBar,
  put,
  runLink,
  score,
  stageLine,
  statusBadge,
} from './util.js';

export class RunsView {
  /** @type {HTMLDivElement} */
  body;
  /** @type {HTMLButtonElement} */
  compareBtn;
  /** @type {HTMLDivElement} */
  rootsEl;

  constructor() {
    this.selected = new Set();
    this.refresh = debounce(() => this.load(), 250);
  }

  async mount(el) {
    this.el = el;
    this.body = h('div');
    this.compareBtn = h(
      'button',
      {
        disabled: true,
        onclick: () => (location.hash = `#/compare?runs=${[...this.selected].map(encodeURIComponent).join(',')}`),
      },
      'Compare selected',
    );
    append(el, h('div.row', h('div.grow', h('h1', 'Runs'), (this.rootsEl = h('div.sub'))), this.compareBtn), this.body);
    await this.load();
  }

  onLive(msg) {
    if (msg.type === 'runs') this.refresh();
  }

  async load() {
    let data;
    let nights;
    try {
      [data, nights] = await Promise.all([api('runs'), api('nights')]);
    } catch (err) {
      put(this.body, errorBox(err));
      return;
    }
    this.rootsEl.textContent = `from ${data.roots.join(', ')}`;
    const rows = data.runs.map((r) => this.row(r));
    put(
      this.body,
      ...data.problems.map((p) => h('div.callout.warn', p)),
      data.runs.length === 0
        ? h(
            'div.panel.empty-state',
            'No runs yet. Start one from ',
            h('a', { href: '#/new' }, 'New run'),
            ', or with ',
            h('code', 'skillopt train --config … --out DIR'),
            ' under a run root.',
          )
        : h(
            'div.panel',
            h(
              'table#runs',
              h(
                'thead',
                h(
                  'tr',
                  h('th', ''),
                  h('th', 'Run'),
                  h('th', 'Env'),
                  h('th', 'Target / optimizer'),
                  h('th', 'Status'),
                  h('th', 'Progress'),
                  h('th.num', 'Best val'),
                  h('th.num', 'Test initial → best / final'),
                  h('th.num', 'Tokens'),
                  h('th.num', 'Cost'),
                  h('th', 'Updated'),
                ),
              ),
              h('tbody', rows),
            ),
          ),
      nightsPanel(nights),
    );
  }

  row(r) {
    const p = r.progress;
    const check = h('input', {
      type: 'checkbox',
      checked: this.selected.has(r.id),
      onclick: (e) => e.stopPropagation(),
      onchange: (e) => this.toggle(r.id, e.target.checked),
    });
    const tokens = r.usage.promptTokens + r.usage.completionTokens;
    return h(
      'tr.click',
      { dataset: { run: r.id }, onclick: () => (location.hash = runLink(r.id)) },
      h('td', check),
      h(
        'td',
        h('a', { href: runLink(r.id) }, r.name),
        r.layout === 'python' ? h('div.sub', 'Python SkillOpt run') : null,
        r.problems.length
          ? h('div.problems', { title: r.problems.join('\n') }, `⚠ ${r.problems.length} problem(s)`)
          : null,
      ),
      h('td', r.env ?? '—'),
      h('td', h('div', r.target ?? '—'), h('div.sub', r.optimizer ?? '')),
      h('td', statusBadge(r), stageLine(p.stage)),
      h(
        'td',
        progressBar(p.completedSteps, p.totalSteps),
        h(
          'div.sub',
          `step ${p.completedSteps}${p.totalSteps ? `/${p.totalSteps}` : ''}${p.epochs ? ` · epoch ${p.epoch ?? '—'}/${p.epochs}` : ''}`,
        ),
      ),
      h('td.num', score(r.bestScore), r.bestStep !== undefined ? h('div.sub', `step ${r.bestStep}`) : null),
      h('td.num', `${score(r.test.baseline)} → ${score(r.test.best)} / ${score(r.test.final)}`),
      h(
        'td.num',
        int(tokens),
        r.usage.source !== 'calls' && r.usage.source !== 'none' ? h('div.sub', `from ${r.usage.source}`) : null,
      ),
      h('td.num', costOf(r.usage)),
      h('td', { title: new Date(r.updatedAt).toLocaleString() }, ago(r.updatedAt)),
    );
  }

  toggle(id, on) {
    if (on) this.selected.add(id);
    else this.selected.delete(id);
    this.compareBtn.disabled = this.selected.size < 2;
  }
}
