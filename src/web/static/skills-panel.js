// @ts-check
// Skill versions and their diffs: pick any two versions of a run's skill (initial, current after
// each step, candidates, the slow update's, the best) and see what changed, or read one whole.
import { api, append, errorBox, h, put } from './util.js';

export function renderDiff(diff) {
  if (!diff.lines.length)
    return h('div.diff', { dataset: { added: 0, removed: 0 } }, h('div.hunk', 'the two versions are identical'));
  return h(
    'div.diff',
    { dataset: { added: diff.added, removed: diff.removed } },
    diff.lines.map((l) =>
      h('div', { class: l.t === '+' ? 'add' : l.t === '-' ? 'del' : l.t === '@' ? 'hunk' : 'ctx' }, l.text),
    ),
  );
}

/** Two version pickers and the diff between them. */
export class DiffPanel {
  /** @type {HTMLDivElement} */
  out;
  /** @type {HTMLSpanElement} */
  stats;

  constructor(runId, versions, a, b) {
    this.runId = runId;
    this.versions = versions;
    this.a = a;
    this.b = b;
    this.full = false;
  }

  mount(el) {
    const pick = (value, onchange) =>
      h(
        'select',
        { onchange },
        this.versions.map((v) => h('option', { value: v.ref, selected: v.ref === value }, v.label)),
      );
    this.out = h('div');
    this.stats = h('span.sub');
    append(
      el,
      h(
        'div.filters',
        h('span.sub', 'from'),
        pick(this.a, (e) => {
          this.a = e.target.value;
          this.load();
        }),
        h('span.sub', 'to'),
        pick(this.b, (e) => {
          this.b = e.target.value;
          this.load();
        }),
        h(
          'label.sub',
          h('input', {
            type: 'checkbox',
            onchange: (e) => {
              this.full = e.target.checked;
              this.load();
            },
          }),
          ' whole document',
        ),
        this.stats,
      ),
      this.out,
    );
    return this.load();
  }

  async load() {
    if (!this.a || !this.b) {
      put(this.out, h('div.sub', 'this run has no two skill versions to compare yet'));
      return;
    }
    try {
      const diff = await api('diff', { run: this.runId, a: this.a, b: this.b, context: this.full ? 100000 : 3 });
      this.stats.textContent = `+${diff.added} −${diff.removed} lines`;
      put(this.out, renderDiff(diff));
    } catch (err) {
      put(this.out, errorBox(err));
    }
  }
}

/** The skills tab: a diff between any two versions, and any one version in full. */
export class SkillsPanel {
  constructor(runId, query) {
    this.runId = runId;
    this.query = query;
  }

  async mount(el) {
    const { versions } = await api('skills', { run: this.runId });
    if (!versions.length) {
      append(el, h('div.panel.empty-state', 'No skill versions saved in this run yet.'));
      return;
    }
    const refs = versions.map((v) => v.ref);
    const a = refs.includes(this.query.get('a')) ? this.query.get('a') : refs[0];
    const b = refs.includes(this.query.get('b')) ? this.query.get('b') : refs.includes('best') ? 'best' : refs.at(-1);
    const diffBox = h('div.panel', h('h3', 'Diff'));
    append(el, diffBox);
    await new DiffPanel(this.runId, versions, a, b).mount(diffBox);

    const viewOut = h('div');
    const show = async (ref) => {
      try {
        const s = await api('skill', { run: this.runId, ref });
        put(
          viewOut,
          h('div.skilltext', s.text || '(empty)'),
          s.truncated ? h('div.sub', 'shown: the first part') : null,
        );
      } catch (err) {
        put(viewOut, errorBox(err));
      }
    };
    append(
      el,
      h(
        'div.panel',
        h('h3', 'One version'),
        h(
          'div.filters',
          h(
            'select',
            { onchange: (e) => show(e.target.value) },
            versions.map((v) => h('option', { value: v.ref, selected: v.ref === b }, v.label)),
          ),
        ),
        viewOut,
      ),
    );
    await show(b);
  }
}
