// @ts-check
// A new run: pick a config, read it resolved (keys that differ from its base and those the form
// changes are marked), change the common settings, see the exact command and the dry run's
// calls and cost, check the endpoints, launch. The run is an ordinary `skillopt train` process.
import { act, actGet, actionAccess, useToken } from './actions-client.js';
import { jobPanel, planTable, preflightTable } from './job-views.js';
import { api, append, debounce, errorBox, h, put, runLink } from './util.js';

export class NewRunView {
  /** @type {HTMLSelectElement} */
  configSel;
  /** @type {HTMLDivElement} */
  formEl;
  /** @type {HTMLTextAreaElement} */
  extraEl;
  /** @type {HTMLSelectElement} */
  outRoot;
  /** @type {HTMLInputElement} */
  outPath;
  /** @type {HTMLPreElement} */
  commandEl;
  /** @type {HTMLDivElement} */
  errorEl;
  /** @type {HTMLDivElement} */
  configEl;
  /** @type {HTMLDivElement} */
  planEl;
  /** @type {HTMLDivElement} */
  checksEl;
  /** @type {HTMLButtonElement} */
  launchBtn;
  /** @type {HTMLButtonElement} */
  checkBtn;
  /** @type {HTMLDivElement} */
  jobEl;

  constructor(query) {
    this.query = query;
    this.defaults = {};
    this.fieldEls = {};
    this.recheck = debounce(() => this.check(), 350);
  }

  async mount(el) {
    this.el = el;
    const access = await actionAccess();
    append(el, h('div.crumbs', h('a', { href: '#/' }, 'Runs'), ' / new run'), h('h1', 'New run'));
    if (!access.enabled) {
      append(el, h('div.callout.warn', access.reason ?? 'actions are off on this dashboard'));
      if (access.needsToken) {
        const input = h('input', { type: 'password', placeholder: 'token printed by skillopt ui', size: 40 });
        append(
          el,
          h(
            'div.row',
            input,
            h(
              'button',
              {
                onclick: async () =>
                  (await useToken(input.value)) ? location.reload() : alert('the server did not take this token'),
              },
              'Use token',
            ),
          ),
        );
      }
      return;
    }
    const meta = await actGet('configs');
    this.meta = meta;
    this.configSel = h(
      'select#config',
      { onchange: () => this.selectConfig() },
      h('option', { value: '' }, '— choose a config —'),
      meta.roots.map((root, i) =>
        h(
          'optgroup',
          { label: root },
          meta.configs.filter((c) => c.id.startsWith(`${i}/`)).map((c) => h('option', { value: c.id }, c.rel)),
        ),
      ),
    );
    this.formEl = h('div.form', pickHint());
    this.extraEl = h('textarea#extra', {
      rows: 4,
      placeholder: 'more overrides, one key=value a line (as --set), e.g. env.limit=20',
      oninput: () => this.recheck(),
    });
    this.outRoot = h(
      'select#out-root',
      { onchange: () => this.recheck() },
      meta.runRoots.map((r, i) => h('option', { value: i }, r)),
    );
    this.outPath = h('input#out-path', {
      type: 'text',
      placeholder: '<env>/<timestamp> (default)',
      oninput: () => this.recheck(),
    });
    this.commandEl = h('pre.command#command');
    this.errorEl = h('div');
    // Shown once a config is chosen: until then they would be empty boxes.
    this.configEl = h('div.panel.config-view', { hidden: true });
    this.planEl = h('div.panel#plan-panel', { hidden: true });
    this.checksEl = h('div');
    this.launchBtn = h('button.primary#launch', { onclick: () => this.launch(), disabled: true }, 'Launch');
    this.checkBtn = h('button#check-endpoints', { onclick: () => this.preflight(), disabled: true }, 'Check endpoints');
    append(
      el,
      ...meta.problems.map((p) => h('div.callout.warn', p)),
      h('div.row', h('label', 'Config ', this.configSel), h('span.sub', `from ${meta.roots.join(', ')}`)),
      h(
        'div.split',
        h(
          'div',
          h(
            'div.panel',
            h('h3', 'Settings'),
            this.formEl,
            h('h3', 'More overrides'),
            this.extraEl,
            h('h3', 'Run directory'),
            h('div.row', this.outRoot, ' / ', this.outPath),
          ),
          h(
            'div.panel',
            h('h3', 'Command'),
            this.commandEl,
            h('div.sub', 'the page runs exactly this, in the directory the dashboard was started from'),
            h('div.row', this.checkBtn, this.launchBtn),
          ),
          this.errorEl,
          this.checksEl,
        ),
        h('div', this.configEl, this.planEl),
      ),
    );
    const wanted = this.query.get('config');
    if (wanted) {
      this.configSel.value = wanted;
      await this.selectConfig();
    }
  }

  /** A new config: its own values become the form's starting point. */
  async selectConfig() {
    this.config = this.configSel.value;
    put(this.errorEl);
    put(this.checksEl);
    if (!this.config) {
      this.configEl.hidden = this.planEl.hidden = true;
      put(this.formEl, pickHint());
      return;
    }
    const res = await act('check', { config: this.config, overrides: [] });
    this.defaults = res.form ?? {};
    this.renderForm();
    this.render(res);
  }

  renderForm() {
    this.fieldEls = {};
    const lists = {
      backends: h(
        'datalist#backends',
        this.meta.backends.map((b) => h('option', { value: b })),
      ),
    };
    const rows = this.meta.fields.map((f) => {
      const value = this.defaults[f.key];
      let input;
      if (f.kind === 'bool' || f.kind === 'select') {
        const options = f.kind === 'bool' ? ['true', 'false'] : f.options;
        input = h(
          'select',
          { onchange: () => this.recheck() },
          options.map((o) => h('option', { value: o, selected: String(value) === o }, o)),
        );
      } else {
        input = h('input', {
          type: 'text',
          value: value ?? '',
          list: f.suggest,
          oninput: () => this.recheck(),
          size: f.kind === 'number' ? 8 : 24,
        });
      }
      input.dataset.key = f.key;
      this.fieldEls[f.key] = input;
      return h('label.field', h('span', f.label), input);
    });
    put(this.formEl, lists.backends, rows);
  }

  /** The form's changes (as --set key=value), then the extra lines. */
  overrides() {
    const out = [];
    for (const [key, input] of Object.entries(this.fieldEls)) {
      const was = this.defaults[key];
      if (input.value !== String(was ?? '')) out.push(`${key}=${input.value}`);
    }
    for (const line of this.extraEl.value.split('\n')) if (line.trim()) out.push(line.trim());
    return out;
  }

  /** The run directory asked for in the form, if any. */
  out() {
    const p = this.outPath.value.trim();
    return p ? { root: Number(this.outRoot.value), path: p } : undefined;
  }

  async check() {
    if (!this.config) return;
    const seq = (this.seq = (this.seq ?? 0) + 1);
    try {
      const res = await act('check', { config: this.config, overrides: this.overrides(), out: this.out() });
      if (seq === this.seq) this.render(res);
    } catch (err) {
      if (seq === this.seq) {
        this.checkedOut = undefined;
        put(this.checksEl);
        put(this.errorEl, errorBox(err));
        this.launchBtn.disabled = this.checkBtn.disabled = true;
      }
    }
  }

  render(res) {
    this.commandEl.textContent = res.command;
    // The directory the command shows: the launch is sent the same, so what runs is what is shown.
    this.checkedOut = res.out;
    // Checks of an earlier form no longer say anything about this one.
    put(this.checksEl);
    this.configEl.hidden = false;
    this.planEl.hidden = !res.valid;
    put(
      this.errorEl,
      res.valid ? null : h('div.callout#config-error', h('strong', 'The config does not load. '), h('pre', res.error)),
      ...(res.warnings ?? []).map((w) => h('div.callout.warn', w)),
    );
    this.launchBtn.disabled = this.checkBtn.disabled = !res.valid;
    if (!res.valid) {
      put(this.configEl, h('h3', 'Config file'), h('pre.source', res.source ?? ''));
      put(this.planEl);
      return;
    }
    put(
      this.configEl,
      h('h3', 'Resolved config'),
      h(
        'div.sub',
        `from ${res.files.join(' ← ')}; `,
        h('span.mark-base', 'differs from the base'),
        ' · ',
        h('span.mark-form', 'changed here'),
      ),
      res.baseProblem ? h('div.callout.warn', res.baseProblem) : null,
      h(
        'div.yaml#resolved',
        res.lines.map((l) =>
          h(
            'div',
            {
              class: l.mark ? `mark-${l.mark}` : '',
              style: `padding-left:${l.depth * 14 + 4}px`,
              dataset: { path: l.path },
            },
            l.value === undefined ? `${l.key}:` : `${l.key}: ${l.value}`,
          ),
        ),
      ),
      h('details', h('summary', 'The config file as written'), h('pre.source', res.source ?? '')),
    );
    put(
      this.planEl,
      h('h3', 'Dry run: planned calls, tokens and cost'),
      res.plan ? planTable(res.plan) : h('div.callout.warn', `no estimate: ${res.planError}`),
    );
  }

  async preflight() {
    put(this.checksEl, h('div.panel', 'Checking the data, the settings and each endpoint…'));
    try {
      const { preflight } = await act('preflight', { config: this.config, overrides: this.overrides() });
      put(
        this.checksEl,
        h('div.panel', h('h3', preflight.ok ? 'Every check passed' : 'Checks failed'), preflightTable(preflight)),
      );
    } catch (err) {
      put(this.checksEl, errorBox(err));
    }
  }

  async launch() {
    this.launchBtn.disabled = true;
    put(this.checksEl, h('div.panel', 'Checking, then launching…'));
    let res;
    try {
      res = await act('launch', {
        config: this.config,
        overrides: this.overrides(),
        out: this.out() ?? this.checkedOut,
      });
    } catch (err) {
      put(this.checksEl, errorBox(err));
      this.launchBtn.disabled = false;
      return;
    }
    if (!res.launched) {
      put(
        this.checksEl,
        h('div.panel#launch-refused', h('h3', 'Not launched: a check failed'), preflightTable(res.preflight)),
      );
      this.launchBtn.disabled = false;
      return;
    }
    this.job = res.job;
    this.runId = res.run;
    put(
      this.checksEl,
      h('div.callout.ok', 'Launched. The run page opens once its directory exists.'),
      (this.jobEl = h('div', jobPanel(res.job))),
    );
    this.follow();
  }

  /** Waits for the run's directory (then opens its page) or for the process to end without one. */
  async follow() {
    while (this.el.isConnected) {
      const { runs } = await api('runs');
      if (runs.some((r) => r.id === this.runId)) {
        location.hash = runLink(this.runId);
        return;
      }
      const { jobs } = await actGet('jobs');
      const job = jobs.find((j) => j.id === this.job.id) ?? this.job;
      put(this.jobEl, jobPanel(job));
      if (job.state === 'exited') return;
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  onLive(msg) {
    if (msg.type === 'runs' && this.runId && msg.ids.includes(this.runId)) location.hash = runLink(this.runId);
  }
}

const pickHint = () => h('div.sub#pick-config', 'Choose a config: its settings, resolved keys and dry run show here.');
