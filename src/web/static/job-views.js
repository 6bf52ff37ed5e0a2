// @ts-check
// Pieces the action views share: a started process (its command and console), and the
// checks before a launch (data, settings, each role's endpoint), and the dry run's planned calls.
import { h, badge, int, usd } from './util.js';

const KIND = { train: 'training', resume: 'resume', eval: 'evaluation' };

/**
 * A process started from the page: its command, state, and the end of its console when it failed.
 * @param {any} job
 * @param {{ showOutput?: boolean }} [options]
 */
export function jobPanel(job, { showOutput } = {}) {
  // A stop asked for from the page ends the process as Ctrl-C does (exit 130): stopped, not failed.
  const stopped = job.state === 'exited' && job.interrupts > 0 && (job.exitCode === 130 || job.signal === 'SIGINT');
  const failed = job.state === 'exited' && job.exitCode !== 0 && !stopped;
  const state =
    job.state === 'running'
      ? badge('running', job.interrupts ? 'stopping' : 'running')
      : stopped
        ? badge('stopped', job.kind === 'eval' ? 'stopped: run it again to continue' : 'stopped: resumable')
        : failed
          ? badge('failed', `exited ${job.exitCode ?? job.signal}`)
          : badge('finished', 'done');
  return h(
    'div.panel.job',
    { dataset: { job: job.id, state: job.state, exit: job.exitCode ?? '' } },
    h(
      'div.row',
      h('strong', KIND[job.kind] ?? job.kind),
      state,
      h('span.sub', `started ${new Date(job.startedAt).toLocaleTimeString()}${job.pid ? ` · pid ${job.pid}` : ''}`),
    ),
    h('div.sub', `in ${job.cwd}`),
    h('pre.command', job.command),
    (failed || showOutput) && job.output
      ? h(
          'details',
          { open: failed },
          h('summary', failed ? 'Console (the end)' : 'Console'),
          h('pre.console', job.output),
        )
      : null,
  );
}

/** The checks before a launch, one row each. */
export function preflightTable(report) {
  const row = (what, ok, message, fix) =>
    h(
      'tr',
      { dataset: { check: what, ok: ok ? '1' : '0' } },
      h('td', what),
      h('td', badge(ok ? 'pass' : 'fail', ok ? 'ok' : 'failed')),
      h('td', h('div', message), fix ? h('div.sub', `Fix: ${fix}`) : null),
    );
  return h(
    'table#preflight',
    h('thead', h('tr', h('th', 'Check'), h('th', ''), h('th', 'Result'))),
    h(
      'tbody',
      row('data', report.data.ok, report.data.message),
      row(
        'settings',
        report.settings.ok,
        [report.settings.message, ...report.settings.warnings.map((w) => `warning: ${w}`)].filter(Boolean).join('\n') ||
          'ok',
      ),
      report.roles.map((r) =>
        row(
          `model.${r.role}`,
          r.ok,
          `${r.backend}:${r.model || '(default)'}${r.endpoint ? ` at ${r.endpoint}` : ''}: ${r.message}`,
          r.fix,
        ),
      ),
    ),
  );
}

/** The dry run's plan: calls, tokens and cost per stage, and what it assumed. @param {any} plan */
export function planTable(plan) {
  const cost = (x) => (x === null ? 'unknown' : usd(x));
  return h(
    'div',
    h(
      'div.sub',
      `${plan.epochs} epoch(s) × ${plan.stepsPerEpoch} step(s) = ${plan.totalSteps} steps; selection ${plan.selection} items, test ${plan.test} items`,
    ),
    h(
      'table#plan',
      h(
        'thead',
        h(
          'tr',
          h('th', 'Stage'),
          h('th', 'Role'),
          h('th.num', 'Calls'),
          h('th.num', 'Input tokens'),
          h('th.num', 'Output tokens'),
          h('th.num', 'Cost'),
        ),
      ),
      h(
        'tbody',
        plan.stages.map((s) =>
          h(
            'tr',
            h('td', s.stage, s.upperBound ? h('span.sub', ' (at most)') : null),
            h('td', s.role),
            h('td.num', int(s.calls)),
            h('td.num', int(s.inputTokens)),
            h('td.num', int(s.outputTokens)),
            h('td.num', cost(s.costUsd)),
          ),
        ),
        h(
          'tr.total',
          h('td', h('strong', 'total')),
          h('td'),
          h('td.num', int(plan.total.calls)),
          h('td.num', int(plan.total.inputTokens)),
          h('td.num', int(plan.total.outputTokens)),
          h('td.num', `${usd(plan.total.costUsd)}${plan.total.unpricedStages.length ? ' + unknown' : ''}`),
        ),
      ),
    ),
    h(
      'details',
      h('summary', 'Assumed'),
      h(
        'ul',
        plan.assumptions.map((a) => h('li', a)),
      ),
    ),
  );
}
