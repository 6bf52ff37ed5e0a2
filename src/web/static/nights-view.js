// @ts-check
// Sleep nights: the table beside the training runs (date, state, the gate's scores, the edits),
// and one night's page: each staged document with its diff, and Adopt / Roll back, each asked
// for in a dialog that names the files it will change.
import { act, actionAccess } from './actions-client.js';
import { renderDiff } from './skills-panel.js';
import { api, append, badge, errorBox, h, put, score } from './util.js';

const STATE_LABEL = {
  staged: 'staged',
  adopted: 'adopted',
  rolled_back: 'rolled back',
  nothing_staged: 'nothing staged',
  skipped: 'skipped',
  stopped: 'stopped',
  no_tasks: 'no tasks',
  handoff_pending: 'waiting for answers',
};

export const nightLink = (id) => `#/night/${encodeURIComponent(id)}`;

function stateBadge(n) {
  return badge(n.state, STATE_LABEL[n.state] ?? n.state);
}

function gateText(d) {
  return `${d.name}: ${score(d.baseline)} → ${score(d.candidate)}${d.staged ? '' : ` (${d.action})`}`;
}

const when = (iso) => (iso ? new Date(iso).toLocaleString() : '—');

/** The nights table of the runs page (null when the dashboard shows no nights). */
export function nightsPanel(data) {
  if (!data.enabled) return null;
  const rows = data.nights.map((n) =>
    h(
      n.id ? 'tr.click' : 'tr',
      { dataset: { night: n.id ?? '' }, onclick: n.id ? () => (location.hash = nightLink(n.id)) : undefined },
      h(
        'td',
        n.id
          ? h('a', { href: nightLink(n.id) }, `night ${n.night ?? '?'}`)
          : n.night !== undefined
            ? `night ${n.night}`
            : '—',
      ),
      h('td', when(n.at)),
      h('td', h('code', n.project || '(every project)')),
      h(
        'td',
        stateBadge(n),
        n.reason ? h('div.sub', n.reason) : null,
        n.problems.length
          ? h('div.problems', { title: n.problems.join('\n') }, `⚠ ${n.problems.length} problem(s)`)
          : null,
      ),
      h(
        'td',
        n.documents.map((d) => h('div', gateText(d))),
      ),
      h('td.num', n.documents.some((d) => d.staged) ? String(n.edits) : '—'),
    ),
  );
  return h(
    'div',
    h('h2', 'Sleep nights'),
    h('div.sub', `from ${data.stateDir}`),
    ...data.problems.map((p) => h('div.callout.warn', p)),
    data.nights.length === 0
      ? h(
          'div.panel.empty-state',
          'No Sleep night yet. ',
          h('code', 'skillopt sleep run'),
          ' stages one; ',
          h('code', 'skillopt sleep schedule'),
          ' runs one every night.',
        )
      : h(
          'div.panel',
          h(
            'table#nights',
            h(
              'thead',
              h(
                'tr',
                h('th', 'Night'),
                h('th', 'Date'),
                h('th', 'Project'),
                h('th', 'State'),
                h('th', 'Gate (val before → after)'),
                h('th.num', 'Edits'),
              ),
            ),
            h('tbody', rows),
          ),
        ),
  );
}

/** A modal dialog; resolves true when the user confirms. */
function confirmDialog(id, title, lines, confirmLabel) {
  return new Promise((resolve) => {
    const dialog = h(
      `dialog#${id}`,
      h('h3', title),
      h(
        'ul',
        lines.map((l) => h('li', l)),
      ),
      h(
        'div.row',
        h('button.primary#confirm', { onclick: () => close(true) }, confirmLabel),
        h('button#cancel', { onclick: () => close(false) }, 'Cancel'),
      ),
    );
    const close = (ok) => {
      dialog.close();
      dialog.remove();
      resolve(ok);
    };
    dialog.addEventListener('cancel', () => close(false));
    append(document.body, dialog);
    dialog.showModal();
  });
}

export class NightView {
  /** @type {HTMLDivElement} */
  head;
  /** @type {HTMLDivElement} */
  actions;
  /** @type {HTMLDivElement} */
  body;

  constructor(id) {
    this.id = id;
  }

  async mount(el) {
    this.el = el;
    this.access = await actionAccess();
    this.head = h('div#night-head');
    this.actions = h('div.actions#night-actions');
    this.body = h('div');
    append(
      el,
      h('div.crumbs', h('a', { href: '#/' }, 'Runs'), ' / ', `Sleep night ${this.id}`),
      this.head,
      this.actions,
      this.body,
    );
    await this.load();
  }

  async load() {
    const n = (this.night = await api('night', { night: this.id }));
    put(
      this.head,
      h('h1', `Sleep night ${n.night ?? ''} `, stateBadge(n)),
      h(
        'div.sub',
        `${when(n.at)} · project `,
        h('code', n.project || '(every project)'),
        ` · ${n.backend} · ${n.edits} edit(s) staged`,
      ),
      ...n.problems.map((p) => h('div.callout.warn', p)),
    );
    this.renderActions();
    put(
      this.body,
      ...n.documents.map((d) =>
        h(
          'div.panel.night-doc',
          { dataset: { doc: d.name } },
          h(
            'h3',
            `${d.kind ?? 'document'} ${d.name} `,
            d.staged
              ? badge(d.adopted ? 'adopted' : 'staged', d.adopted ? 'adopted' : 'waiting for adoption')
              : badge('reject', d.action),
          ),
          h(
            'div.sub',
            d.live_path ? h('code', d.live_path) : null,
            ` · gate ${d.action}: val ${score(d.baseline)} → ${score(d.candidate)}${d.edits !== undefined ? ` · ${d.edits} edit(s)` : ''}`,
          ),
          d.diff ? renderDiff(d.diff) : d.staged ? h('div.sub', 'no diff recorded for this document') : null,
        ),
      ),
      n.report ? h('details.panel', h('summary', 'Report'), h('pre', n.report)) : null,
    );
  }

  renderActions(message) {
    const n = this.night;
    if (!this.access.enabled) {
      put(
        this.actions,
        n.pending.length
          ? h(
              'div.sub',
              `Adopting from the page is off: ${this.access.reason ?? 'actions are not allowed'}. Run skillopt sleep adopt --night ${n.id}`,
            )
          : null,
      );
      return;
    }
    const pending = n.documents.filter((d) => d.staged && !d.adopted);
    const adopted = n.documents.filter((d) => d.adopted);
    put(
      this.actions,
      message ?? null,
      h(
        'div.row',
        pending.length ? h('button.primary#adopt', { onclick: () => this.adopt(pending) }, 'Adopt') : null,
        n.canRollback ? h('button#rollback', { onclick: () => this.rollback(adopted) }, 'Roll back') : null,
      ),
    );
  }

  async adopt(pending) {
    const lines = pending.map(
      (d) => `${d.kind} ${d.name}: ${d.live_path} (val ${score(d.baseline)} → ${score(d.candidate)})`,
    );
    if (
      !(await confirmDialog(
        'confirm-adopt',
        'Adopt these proposals? Each file is replaced (its bytes kept in a backup); Roll back puts them back.',
        lines,
        'Adopt',
      ))
    )
      return;
    await this.act('night/adopt', (r) => `adopted: ${r.adopted.map((a) => a.live_path).join(', ')}`);
  }

  async rollback(adopted) {
    const lines = adopted.map((d) => `${d.kind} ${d.name}: ${d.live_path}`);
    if (
      !(await confirmDialog(
        'confirm-rollback',
        'Roll back the adoption? These files are put back as they were before it.',
        lines,
        'Roll back',
      ))
    )
      return;
    await this.act('night/rollback', (r) => `rolled back: ${r.restored.map((a) => a.live_path).join(', ')}`);
  }

  async act(what, describe) {
    let result;
    try {
      result = await act(what, { night: this.id });
    } catch (err) {
      this.actions.prepend(errorBox(err));
      return;
    }
    try {
      await this.load();
      this.renderActions(h('div.callout.ok', describe(result)));
    } catch (err) {
      put(this.body, errorBox(err));
    }
  }
}
