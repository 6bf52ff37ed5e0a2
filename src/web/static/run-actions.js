// @ts-check
// A run's actions on its page: stop it (at a safe point, as Ctrl-C; a second stop exits at
// once), resume it when it stopped, failed or was interrupted, raise the budget it stopped at,
// and the processes started for it from the page.
import { act, actGet, actionAccess } from './actions-client.js';
import { jobPanel } from './job-views.js';
import { append, debounce, errorBox, h, put } from './util.js';

export class RunActions {
  constructor(runId) {
    this.runId = runId;
    this.el = h('div.actions#run-actions');
    this.refresh = debounce(() => this.load(), 300);
  }

  async mount(parent) {
    append(parent, this.el);
    this.access = await actionAccess();
    if (this.access.enabled) await this.load();
  }

  async load() {
    if (!this.access?.enabled || this.busy) return;
    try {
      this.info = await actGet('run', { run: this.runId });
    } catch (err) {
      put(this.el, errorBox(err));
      return;
    }
    this.render();
    // A process of ours that has not made its mark on the run yet (starting, or failing): look again soon.
    if (this.info.jobs.some((j) => j.state === 'running' && j.kind !== 'eval') && !this.info.running)
      setTimeout(() => this.refresh(), 700);
  }

  async run(what, body) {
    this.busy = true;
    try {
      await act(what, { run: this.runId, ...body });
    } catch (err) {
      this.el.prepend(errorBox(err));
      return;
    } finally {
      this.busy = false;
    }
    await this.load();
  }

  render() {
    const i = this.info;
    const buttons = [];
    if (i.running) {
      buttons.push(
        i.stopping
          ? h(
              'button#stop-now',
              {
                onclick: () => this.run('stop'),
                title: 'a second interrupt: exit at once; the run resumes from its last complete step',
              },
              'Stop now',
            )
          : h(
              'button#stop',
              {
                onclick: () => this.run('stop'),
                title: 'stop at a safe point, as Ctrl-C: the calls in flight finish and are saved',
              },
              'Stop',
            ),
        i.stopping ? h('span.sub', 'stopping at a safe point: the calls in flight finish and are saved…') : null,
      );
    }
    if (i.canResume) buttons.push(h('button#resume', { onclick: () => this.run('resume', {}) }, 'Resume'));
    const parts = [
      h(
        'div.row',
        ...buttons,
        !i.running && !i.canResume && i.resumeProblem ? h('span.sub', `Resume: ${i.resumeProblem}`) : null,
      ),
    ];
    if (i.canResume && i.budgetStop) parts.push(this.budgetForm(i));
    if (i.canResume && i.resumeCommand) parts.push(h('div.sub', 'resumes with: ', h('code', i.resumeCommand)));
    const latest = i.jobs.find((j) => j.kind !== 'eval');
    if (latest) parts.push(jobPanel(latest));
    put(this.el, ...parts);
  }

  /** The budget limits, the one reached raised (doubled) by default. */
  budgetForm(i) {
    const inputs = {};
    const limits = Object.entries(i.budget ?? {}).filter(([k, v]) => k.startsWith('max_') && typeof v === 'number');
    const fields = limits.map(([k, v]) => {
      const key = `budget.${k}`;
      const reached = key === i.budgetStop.key;
      inputs[k] = h('input', {
        type: 'number',
        min: 0,
        step: 'any',
        value: reached ? i.budgetStop.limit * 2 : v,
        dataset: { key },
      });
      return h(
        'label.field',
        { class: reached ? 'field reached' : 'field' },
        h('span', `${key}${reached ? ' (reached)' : ''}`),
        inputs[k],
      );
    });
    const submit = () => {
      const budget = {};
      for (const [k, input] of Object.entries(inputs))
        if (input.value !== '' && Number(input.value) !== i.budget[k]) budget[k] = Number(input.value);
      this.run('resume', { budget });
    };
    return h(
      'div.panel#budget',
      h('h3', `Budget reached: ${i.budgetStop.key}=${i.budgetStop.limit}`),
      h('div.form', fields),
      h('button#raise', { onclick: submit }, 'Raise and resume'),
    );
  }
}
