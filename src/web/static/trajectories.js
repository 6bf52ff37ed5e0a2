// @ts-check
// Browsing rollouts: one directory at a time, filtered by outcome, task type and text, a page
// at a time (the server holds the index; the page never loads a whole results.jsonl), and one
// trajectory in full: expected and predicted answers, feedback, and the conversation.
import { api, append, debounce, errorBox, h, put, score } from './util.js';

const LIMIT = 50;
/** The type filter that selects results without a task type (the server's NO_TYPE), shown as —. */
const NO_TYPE = '-';
const typeLabel = (t) => t || '—';

export class TrajectoryBrowser {
  /** @type {HTMLSelectElement} */
  dirSel;
  /** @type {HTMLSpanElement} */
  outcomeEl;
  /** @type {HTMLSelectElement} */
  typeSel;
  /** @type {HTMLDivElement} */
  listEl;
  /** @type {HTMLDivElement} */
  detailEl;

  constructor(runId, dirs, initialDir) {
    this.runId = runId;
    this.dirs = dirs;
    this.state = {
      dir: dirs.find((d) => d.dir === initialDir)?.dir ?? dirs[0]?.dir,
      outcome: '',
      type: '',
      q: '',
      offset: 0,
    };
    this.search = debounce(() => this.load(), 250);
  }

  async mount(el) {
    this.dirSel = h(
      'select',
      { onchange: (e) => this.set({ dir: e.target.value, type: '', offset: 0 }) },
      this.dirs.map((d) =>
        h('option', { value: d.dir, selected: d.dir === this.state.dir }, `${d.label} (${d.count})`),
      ),
    );
    this.outcomeEl = h('span.seg');
    this.typeSel = h('select', { onchange: (e) => this.set({ type: e.target.value, offset: 0 }) });
    const q = h('input', {
      type: 'search',
      placeholder: 'search id, task, answers',
      oninput: (e) => {
        this.state.q = e.target.value;
        this.state.offset = 0;
        this.search();
      },
    });
    this.listEl = h('div');
    this.detailEl = h('div.panel.trajectory', h('div.sub', 'Select a trajectory to see its conversation.'));
    append(
      el,
      h(
        'div.trajectories',
        h('div.filters', this.dirSel, this.outcomeEl, this.typeSel, q),
        h('div.split', h('div.panel', this.listEl), this.detailEl),
      ),
    );
    await this.load();
  }

  set(patch) {
    Object.assign(this.state, patch);
    return this.load();
  }

  async load() {
    const s = this.state;
    let page;
    try {
      page = await api('trajectories', {
        run: this.runId,
        dir: s.dir,
        outcome: s.outcome,
        type: s.type,
        q: s.q,
        offset: s.offset,
        limit: LIMIT,
      });
    } catch (err) {
      put(this.listEl, errorBox(err));
      return;
    }
    this.page = page;
    // A large results.jsonl is indexed a step at a time: the rest is asked for again shortly.
    if (page.reading) setTimeout(() => this.listEl.isConnected && this.load(), 1000);
    const seg = (value, label, n) =>
      h(
        'button',
        {
          class: s.outcome === value ? 'on' : '',
          dataset: { outcome: value || 'all' },
          onclick: () => this.set({ outcome: value, offset: 0 }),
        },
        n === undefined ? label : `${label} ${n}`,
      );
    put(
      this.outcomeEl,
      seg('', 'all', page.total),
      seg('pass', 'pass', page.counts.pass),
      seg('fail', 'fail', page.counts.fail),
      seg('error', 'error', page.counts.error),
    );
    put(
      this.typeSel,
      h('option', { value: '' }, 'all task types'),
      Object.entries(page.types)
        .sort()
        .map(([t, n]) =>
          h('option', { value: t || NO_TYPE, selected: (t || NO_TYPE) === s.type }, `${typeLabel(t)} (${n})`),
        ),
    );
    const rows = page.rows.map((r) =>
      h(
        'tr.click',
        { dataset: { n: r.n, outcome: r.outcome }, onclick: (e) => this.open(r.n, e.currentTarget) },
        h('td.mono', r.id, r.sample ? h('span.sub', ` #${r.sample}`) : null),
        h('td', h('span', { class: `badge ${r.outcome}` }, r.outcome)),
        h('td', typeLabel(r.type)),
        h('td', { title: r.task ?? '' }, clip(r.task, 80)),
        h('td.mono', { title: r.expected ?? '' }, clip(r.expected, 40)),
        h('td.mono', { title: r.predicted ?? '' }, clip(r.predicted, 40)),
        h('td.num', score(r.hard)),
      ),
    );
    const last = Math.min(page.offset + page.limit, page.matched);
    put(
      this.listEl,
      page.reading ? h('div.problems#reading', page.reading) : null,
      page.bad
        ? h('div.problems', `${page.bad} line(s) of results.jsonl are not rollout results and were skipped`)
        : null,
      h(
        'table#trajectories',
        h(
          'thead',
          h(
            'tr',
            h('th', 'Item'),
            h('th', 'Outcome'),
            h('th', 'Type'),
            h('th', 'Task'),
            h('th', 'Expected'),
            h('th', 'Predicted'),
            h('th.num', 'Hard'),
          ),
        ),
        h('tbody', rows),
      ),
      page.matched === 0 ? h('div.sub', 'no trajectory matches') : null,
      h(
        'div.pager',
        h(
          'button',
          { disabled: page.offset === 0, onclick: () => this.set({ offset: Math.max(0, page.offset - LIMIT) }) },
          '‹ previous',
        ),
        page.matched
          ? `${page.offset + 1}–${last} of ${page.matched}${page.matched !== page.total ? ` (of ${page.total})` : ''}`
          : '',
        h(
          'button',
          { disabled: last >= page.matched, onclick: () => this.set({ offset: page.offset + LIMIT }) },
          'next ›',
        ),
      ),
    );
  }

  async open(n, rowEl) {
    for (const tr of this.listEl.querySelectorAll('tr.sel')) tr.classList.remove('sel');
    rowEl?.classList.add('sel');
    let t;
    try {
      t = await api('trajectory', { run: this.runId, dir: this.state.dir, n });
    } catch (err) {
      put(this.detailEl, errorBox(err));
      return;
    }
    const r = t.result;
    const kv = (k, v) =>
      v === undefined || v === null || v === ''
        ? []
        : [h('div.k', k), h('div', typeof v === 'string' ? h('pre', v) : h('pre', JSON.stringify(v, null, 2)))];
    const fileView = h('div');
    put(
      this.detailEl,
      h(
        'div.row',
        h('strong.mono', r.id),
        h('span', { class: `badge ${t.outcome}` }, t.outcome),
        h('span.sub', `hard ${score(r.hard)} · soft ${score(r.soft)} · type ${typeLabel(t.type)}`),
      ),
      h(
        'div.kv#trajectory-detail',
        ...kv('Task', r.task ?? r.question ?? r.task_description),
        ...kv('Expected', t.expected),
        ...kv('Reference', r.reference_text),
        ...kv('Predicted', r.predicted_answer ?? r.answer),
        ...kv('Fail reason', r.fail_reason),
        ...kv('Feedback', r.feedback),
        ...kv('Error', r.error ? `${r.error.kind}: ${r.error.message}` : undefined),
      ),
      renderTraces(r.traces),
      h('h3', 'Conversation'),
      t.resultNote ? h('div.callout.warn#result-note', t.resultNote) : null,
      t.conversationNote ? h('div.sub', t.conversationNote) : null,
      renderConversation(t.conversation),
      t.files.length
        ? h(
            'div',
            h('h3', 'Files'),
            t.files.map((f) =>
              h(
                'a',
                {
                  href: '#',
                  style: 'margin-right:10px',
                  onclick: (e) => {
                    e.preventDefault();
                    this.showFile(`${this.state.dir}/predictions/${r.id}/${f}`, fileView);
                  },
                },
                f,
              ),
            ),
            fileView,
          )
        : null,
    );
    // Opened from low in a long list, the detail would be off screen.
    this.detailEl.scrollIntoView({ block: 'nearest' });
  }

  async showFile(path, into) {
    try {
      const f = await api('file', { run: this.runId, path });
      put(
        into,
        h('div.skilltext', f.text),
        f.truncated ? h('div.sub', `shown: the first part of ${f.size} bytes`) : null,
      );
    } catch (err) {
      put(into, errorBox(err));
    }
  }
}

function clip(s, n) {
  if (!s) return '';
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

function text(content) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((p) =>
        typeof p === 'string'
          ? p
          : p?.type === 'text'
            ? p.text
            : p?.type === 'image_url'
              ? '[image]'
              : JSON.stringify(p),
      )
      .join('\n');
  return JSON.stringify(content, null, 2);
}

/**
 * An agent target's traces (src/model/harness/trace.ts), one collapsible block per run: its
 * summary says which agent, how many tool calls and whether any failed; open, each call with its
 * input (failed ones marked, with what they said), the files it named and the errors it reported.
 */
export function renderTraces(traces) {
  if (!Array.isArray(traces) || traces.length === 0) return null;
  return h(
    'div.traces',
    traces.map((tr, i) => {
      const steps = Array.isArray(tr?.steps) ? tr.steps : [];
      const failed = steps.filter((s) => s && s.ok === false).length;
      const files = Array.isArray(tr?.files) ? tr.files : [];
      const errors = Array.isArray(tr?.errors) ? tr.errors : [];
      const head = [
        `Agent trace${traces.length > 1 ? ` ${i + 1} of ${traces.length}` : ''}: ${tr?.agent ?? 'agent'}`,
        `${steps.length} tool call${steps.length === 1 ? '' : 's'}`,
        failed ? `${failed} failed` : null,
        errors.length ? `${errors.length} error${errors.length === 1 ? '' : 's'}` : null,
        typeof tr?.durationMs === 'number' ? `${(tr.durationMs / 1000).toFixed(1)} s` : null,
      ].filter(Boolean);
      return h(
        'details.trace',
        { open: failed > 0 || errors.length > 0 },
        h('summary', head.join(' · ')),
        h(
          'ol.trace-steps',
          steps.map((s) =>
            h(
              'li',
              { class: s.ok === false ? 'failed' : undefined },
              h('span.mono', s.tool ?? '?'),
              ' ',
              h('span.mono', s.input ?? ''),
              s.ok === false ? h('div.sub', `failed${s.output ? `: ${s.output}` : ''}`) : null,
            ),
          ),
        ),
        files.length ? h('div', h('span.k', 'Files '), h('span.mono', files.join(', '))) : null,
        errors.map((e) => h('div.err', e)),
        h(
          'div.sub',
          [
            tr?.model ? `model ${tr.model}` : null,
            tr?.sessionId ? `session ${tr.sessionId}` : null,
            tr?.exitCode !== undefined && tr?.exitCode !== null ? `exit code ${tr.exitCode}` : null,
          ]
            .filter(Boolean)
            .join(' · '),
        ),
      );
    }),
  );
}

/** The conversation entry shapes of the original (reference §3.1) and ours. */
export function renderConversation(conv) {
  if (conv === undefined) return null;
  const list = Array.isArray(conv) ? conv : Array.isArray(conv?.messages) ? conv.messages : null;
  if (!list) return h('div.skilltext', typeof conv === 'string' ? conv : JSON.stringify(conv, null, 2));
  return h(
    'div.conversation',
    list.map((m) => {
      if (m && typeof m === 'object') {
        if (m.type === 'tool_call')
          return h('div.msg.tool', h('div.who', 'tool call'), h('pre', `$ ${m.cmd ?? ''}\n${text(m.obs ?? '')}`));
        if (m.type === 'message' && !('role' in m))
          return h(
            'div.msg.assistant',
            h('div.who', `target${m.turn ? `, turn ${m.turn}` : ''}`),
            h('pre', text(m.content ?? '')),
          );
        if ('action' in m && 'env_feedback' in m) {
          return h(
            'div.msg.tool',
            h('div.who', `step ${m.step ?? ''}`),
            m.reasoning ? h('pre.sub', text(m.reasoning)) : null,
            h('pre', `> ${text(m.action)}\n${text(m.env_feedback)}`),
          );
        }
        const role = typeof m.role === 'string' ? m.role : 'agent';
        const calls = Array.isArray(m.tool_calls)
          ? m.tool_calls
              .map(
                (c) =>
                  `→ ${c.function?.name ?? c.name ?? 'tool'}(${c.function?.arguments ?? JSON.stringify(c.args ?? c.input ?? {})})`,
              )
              .join('\n')
          : '';
        return h(
          'div.msg',
          { class: `msg ${role.replace(/[^\w-]/g, '')}` },
          h('div.who', role),
          h('pre', [text(m.content ?? ''), calls].filter(Boolean).join('\n')),
        );
      }
      return h('div.msg.agent', h('div.who', 'agent'), h('pre', String(m)));
    }),
  );
}
