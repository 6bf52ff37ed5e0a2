// @ts-check
// A skill package in a step: the candidate's files against the skill it started from, each with
// its change, kind and size, how many of the step's rollouts read or ran it, and a text file's
// diff on demand; binary files only by their sizes. Then the package's checks before the gate.
import { renderDiff } from './skills-panel.js';
import { api, append, errorBox, h, put } from './util.js';

const grouped = (n) => (typeof n === 'number' ? n.toLocaleString('en') : '–');
const bytes = (n) => `${grouped(n)} bytes`;

/** What changed in a file, in words; a binary file's sizes, never its content. */
export function changeText(f) {
  const sizes =
    f.change === 'added'
      ? bytes(f.sizeAfter)
      : f.change === 'removed'
        ? bytes(f.sizeBefore)
        : f.sizeBefore === f.sizeAfter
          ? bytes(f.sizeAfter)
          : `${grouped(f.sizeBefore)} → ${bytes(f.sizeAfter)}`;
  const change = f.kind === 'binary' && f.change === 'edited' ? 'changed' : f.change;
  const mode = f.mode ? `, mode ${f.mode}` : '';
  return f.kind === 'binary' ? `binary, ${change} (${sizes}${mode})` : `${change} (${sizes}${mode})`;
}

/** "read by 3, ran by 1 of 8 rollouts", or "not used". */
export function useText(f, rollouts) {
  if (typeof f.read !== 'number') return '';
  // A chat target and the simulator have SKILL.md in every prompt: no read to count.
  if (f.path === 'SKILL.md' && !f.read && !f.ran) return '';
  const parts = [f.read ? `read by ${f.read}` : '', f.ran ? `ran by ${f.ran}` : ''].filter(Boolean);
  return parts.length ? `${parts.join(', ')} of ${rollouts} rollouts` : 'not used';
}

export class PackagePanel {
  constructor(runId, tree, record) {
    this.runId = runId;
    this.tree = tree;
    this.record = record;
  }

  mount(el) {
    const t = this.tree;
    const changed = t.files.filter((f) => f.change !== 'unchanged').length;
    const box = h(
      'div.panel#package',
      h('h3', 'Package files'),
      h(
        'div.sub',
        `${t.files.length} files, ${changed} changed by this step${typeof t.rollouts === 'number' ? ` · use counted over ${t.rollouts} rollouts` : ''}`,
      ),
      h(
        'table.package-files',
        h('thead', h('tr', h('th', 'file'), h('th', 'change'), h('th', 'used'), h('th', ''))),
        h(
          'tbody',
          t.files.map((f) => this.row(f)),
        ),
      ),
      this.checks(),
    );
    append(el, box);
  }

  row(f) {
    const out = h('div.package-diff');
    const canDiff = f.kind === 'text' && f.change !== 'unchanged';
    const show = async () => {
      put(out, h('div.sub', 'loading the diff…'));
      try {
        put(
          out,
          renderDiff(await api('package-diff', { run: this.runId, a: this.tree.a, b: this.tree.b, file: f.path })),
        );
      } catch (err) {
        put(out, errorBox(err));
      }
    };
    return [
      h(
        'tr',
        { class: `change-${f.change}`, dataset: { path: f.path, change: f.change, kind: f.kind } },
        h('td.mono', f.path),
        h('td', changeText(f)),
        h('td.sub', useText(f, this.tree.rollouts)),
        h('td', canDiff ? h('button', { onclick: show }, 'diff') : null),
      ),
      h('tr.diff-row', h('td', { colSpan: 4 }, out)),
    ];
  }

  /** The checks the candidate went through before the gate, and what its edits broke. */
  checks() {
    const c = this.record?.package_checks;
    if (!c) return null;
    if (!c.broken.length)
      return h('div.sub#package-checks', `${c.checks} checks before the gate: none broken by this step's edits`);
    return h(
      'div.callout#package-checks',
      h(
        'strong',
        this.record.action === 'skip_invalid_package'
          ? 'Rejected before any rollout: the edits broke the package. '
          : 'Checks broken by the edits: ',
      ),
      h(
        'ul',
        c.broken.map((b) => h('li', `${b.check}${b.file ? ` (${b.file})` : ''}: ${b.message}`)),
      ),
    );
  }
}
