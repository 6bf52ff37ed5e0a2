// @ts-check
// The tables of a run's overview tab: the cards at the top, the epoch boundaries, usage by
// stage, the test and transfer tables, and the step table. Each takes the run view whose
// detail and step rows it shows.
import {
  badge,
  candidateScore,
  costOf,
  decisionBadge,
  earlyStopText,
  h,
  int,
  isNum,
  pct,
  put,
  runLink,
  score,
  secs,
  stepCost,
  stepTokens,
  usd,
} from './util.js';

const PAGE = 50;
/** What a slow update or a meta skill did at an epoch boundary. */
const epochBadge = (result) => (!result ? '—' : result.decision ? decisionBadge(result.decision) : badge('done'));

/** The cards at the top: scores, test, steps by outcome, time, tokens and cost. */
export function renderCards(view) {
  const d = view.detail;
  const rows = view.rows;
  const count = (outcome) => rows.filter((r) => r.decision.outcome === outcome).length;
  const wall = rows.reduce((a, r) => a + (r.wall_time_s ?? 0), 0);
  const card = (k, v, sub) => h('div.card', h('div.k', k), h('div.v', v), sub ? h('div.d', sub) : null);
  const u = d.usage;
  put(
    view.cardsEl,
    card('Best selection score', score(d.bestScore), d.bestStep !== undefined ? `step ${d.bestStep}` : null),
    card('Initial selection score', score(d.baselineSelection)),
    card(
      'Test: initial → best',
      `${score(d.test.baseline)} → ${score(d.test.best)}`,
      isNum(d.test.baseline) && isNum(d.test.best)
        ? `${d.test.best >= d.test.baseline ? '+' : ''}${((d.test.best - d.test.baseline) * 100).toFixed(1)} points`
        : null,
    ),
    card('Test: final skill', score(d.test.final)),
    card('Steps', `${count('accepted')} / ${count('rejected')} / ${count('skipped')}`, 'accepted / rejected / skipped'),
    card(
      'Tokens',
      int(u.promptTokens + u.completionTokens),
      `${int(u.promptTokens)} in · ${int(u.completionTokens)} out${u.source !== 'calls' ? ` · from ${u.source}` : ''}`,
    ),
    card(
      'Cost',
      costOf(u),
      u.unpricedCalls > 0 && u.unpricedCalls < u.calls
        ? `${u.unpricedCalls} call(s) without a price`
        : u.reusedCalls
          ? `${u.reusedCalls} call(s) reused from cache`
          : null,
    ),
    card('Step time', secs(wall), rows.length ? `${secs(wall / rows.length)} per step` : null),
    d.taskCost ? taskCostCard(d.taskCost, card) : null,
    d.audit
      ? h(
          `div.card#best-audit`,
          h('div.k', 'Audit of the best skill'),
          h('div.v', d.audit.verdict),
          h(
            'div.d',
            [
              ...d.audit.failing,
              d.audit.shownFromSeals.length
                ? `test figure sealed by an earlier run: ${d.audit.shownFromSeals.join(', ')}`
                : '',
            ]
              .filter(Boolean)
              .join('; ') || `passed: ${d.audit.checks.join(', ')}`,
          ),
        )
      : null,
  );
}

/** What one test task costs with the initial and the best skill, and when the training pays back. */
function taskCostCard(c, card) {
  const each = (t) => (!t ? '—' : isNum(t.usd) ? usd(t.usd) : `${int(t.input)} tokens`);
  const g = c.gain;
  const sub =
    g && isNum(g.payback_tasks)
      ? `pays back after ${int(g.payback_tasks)} tasks`
      : g && isNum(g.usd_per_point)
        ? `${usd(g.usd_per_point)} of training a point`
        : `${int(c.initial?.input ?? 0)} → ${int(c.best?.input ?? 0)} input tokens`;
  return card('Cost per test task: initial → best', `${each(c.initial)} → ${each(c.best)}`, sub);
}

/** The initial and best skills on other targets (evaluation.transfer_targets), as skillopt eval reports them. */
function transferTable(t) {
  const ci = (c) => (c.hard_ci95 ? h('div.sub', `${pct(c.hard_ci95[0])}–${pct(c.hard_ci95[1])}`) : null);
  const diff = (d) => `${d.diff >= 0 ? '+' : ''}${(d.diff * 100).toFixed(1)}`;
  return h(
    'div.panel',
    h('h3', `Transfer (${t.split} split, ${t.n_items} items)`),
    h(
      'table#transfer',
      h(
        'thead',
        h(
          'tr',
          h('th', 'Target'),
          h('th.num', 'Initial skill'),
          h('th.num', 'Best skill'),
          h('th.num', 'Best − initial'),
          h('th.num', 'p'),
        ),
      ),
      h(
        'tbody',
        t.rows.map((r) =>
          h(
            'tr',
            { dataset: { target: r.target } },
            h('td', r.target),
            h('td.num', pct(r.initial.hard), ci(r.initial)),
            h('td.num', pct(r.best.hard), ci(r.best)),
            h(
              'td.num',
              diff(r.hard),
              r.hard.ci ? h('div.sub', `${diff({ diff: r.hard.ci[0] })}…${diff({ diff: r.hard.ci[1] })}`) : null,
            ),
            h(
              'td.num',
              r.hard.p === null ? '—' : r.hard.p < 0.001 ? r.hard.p.toExponential(1) : r.hard.p.toFixed(3),
              h('div.sub', r.hard.method.replace('_', ' ')),
            ),
          ),
        ),
      ),
    ),
  );
}

/** The epoch boundaries, the usage by stage, the test table and the transfer table. */
export function renderTables(view) {
  const d = view.detail;
  const parts = [];
  if (d.tests.length) {
    const cell = (b) => (b && isNum(b.hard_acc) ? pct(b.hard_acc) : '—');
    parts.push(
      h(
        'div.panel',
        h('h3', 'Test (held-out split)'),
        h(
          'table#tests',
          h(
            'thead',
            h(
              'tr',
              h('th', 'Task type'),
              h('th.num', 'Items'),
              h('th.num', 'Initial skill'),
              h('th.num', 'Best skill'),
              h('th.num', 'Final skill'),
              h('th.num', 'Best − initial'),
            ),
          ),
          h(
            'tbody',
            d.tests.map((t) =>
              h(
                'tr',
                h('td', t.type === 'overall' ? h('strong', 'overall') : t.type),
                h('td.num', t.best?.total ?? t.baseline?.total ?? '—'),
                h('td.num', cell(t.baseline)),
                h('td.num', cell(t.best)),
                h('td.num', cell(t.final)),
                h(
                  'td.num',
                  isNum(t.best?.hard_acc) && isNum(t.baseline?.hard_acc)
                    ? `${t.best.hard_acc >= t.baseline.hard_acc ? '+' : ''}${((t.best.hard_acc - t.baseline.hard_acc) * 100).toFixed(1)}`
                    : '—',
                ),
              ),
            ),
          ),
        ),
      ),
    );
  }
  if (d.transfer) parts.push(transferTable(d.transfer));
  if (d.epochs.length) {
    const excerpt = (o, key) =>
      typeof o?.[key] === 'string'
        ? h('div.sub', { title: o[key] }, o[key].length > 160 ? `${o[key].slice(0, 160)}…` : o[key])
        : null;
    parts.push(
      h(
        'div.panel',
        h('h3', 'Epoch boundaries'),
        h(
          'table#epochs',
          h('thead', h('tr', h('th', 'Epoch'), h('th', 'Last step'), h('th', 'Slow update'), h('th', 'Meta skill'))),
          h(
            'tbody',
            d.epochs.map((e) =>
              h(
                'tr',
                h('td', e.epoch),
                h('td', e.lastStep ?? '—'),
                h(
                  'td',
                  epochBadge(e.slowUpdate),
                  isNum(e.slowUpdate?.prev_hard)
                    ? h(
                        'span.sub',
                        ` previous ${score(e.slowUpdate.prev_hard)} → current ${score(e.slowUpdate.curr_hard)}`,
                      )
                    : null,
                  isNum(e.slowUpdate?.selection_hard)
                    ? h('span.sub', ` · selection ${score(e.slowUpdate.selection_hard)}`)
                    : null,
                  excerpt(e.slowUpdate, 'slow_update_content'),
                ),
                h('td', epochBadge(e.metaSkill), excerpt(e.metaSkill, 'meta_skill_content')),
              ),
            ),
          ),
        ),
      ),
    );
  }
  const stages = Object.entries(d.usageByStage ?? {});
  const times = {};
  for (const r of view.rows) for (const [k, v] of Object.entries(r.timing ?? {})) times[k] = (times[k] ?? 0) + (v ?? 0);
  parts.push(
    h(
      'div.split',
      h(
        'div.panel',
        h('h3', `Usage by purpose${d.usage.source === 'calls' ? '' : ` (from ${d.usage.source})`}`),
        stages.length
          ? h(
              'table#usage',
              h(
                'thead',
                h(
                  'tr',
                  h('th', 'Purpose'),
                  h('th.num', 'Calls'),
                  h('th.num', 'Prompt'),
                  h('th.num', 'Completion'),
                  h('th.num', 'Cached'),
                  h('th.num', 'Reasoning'),
                  h('th.num', 'Cost'),
                ),
              ),
              h(
                'tbody',
                stages
                  .sort(
                    (a, b) => b[1].promptTokens + b[1].completionTokens - (a[1].promptTokens + a[1].completionTokens),
                  )
                  .map(([k, s]) =>
                    h(
                      'tr',
                      h('td', k),
                      h('td.num', int(s.calls)),
                      h('td.num', int(s.promptTokens)),
                      h('td.num', int(s.completionTokens)),
                      h('td.num', int(s.cachedTokens)),
                      h('td.num', int(s.reasoningTokens)),
                      h('td.num', costOf(s)),
                    ),
                  ),
              ),
            )
          : h('div.sub', 'no usage recorded yet'),
      ),
      h(
        'div.panel',
        h('h3', 'Time by stage (all steps)'),
        Object.keys(times).length
          ? h(
              'table',
              h(
                'tbody',
                Object.entries(times).map(([k, v]) => h('tr', h('td', k.replace(/_s$/, '')), h('td.num', secs(v)))),
              ),
            )
          : h('div.sub', 'no timings yet'),
      ),
    ),
  );
  // Step banners are for the console; the rest (warnings, skips, notes) is worth a look.
  const logs = (d.logs ?? []).filter((l) => !/={6,}/.test(l.message)).slice(-12);
  if (logs.length) {
    parts.push(
      h(
        'div.panel',
        h('h3', 'Recent messages'),
        logs.map((l) =>
          h('div', { class: l.level === 'warn' ? 'problems' : 'sub' }, `${l.time.slice(11, 19)} ${l.message}`),
        ),
      ),
    );
  }
  put(view.tablesEl, ...parts);
}

/** The step table, newest first, a page at a time. */
export function renderSteps(view) {
  const rows = [...view.rows].reverse();
  const pages = Math.max(1, Math.ceil(rows.length / PAGE));
  view.page = Math.min(view.page, pages - 1);
  const shown = rows.slice(view.page * PAGE, (view.page + 1) * PAGE);
  const table = h(
    'table#steps',
    h(
      'thead',
      h(
        'tr',
        h('th.num', 'Step'),
        h('th.num', 'Epoch'),
        h('th', 'Action'),
        h('th.num', 'Train'),
        h('th.num', 'Candidate'),
        h('th.num', 'Current'),
        h('th.num', 'Best'),
        h('th.num', 'LR'),
        h('th.num', 'Edits applied'),
        h('th.num', 'Gate used / saved'),
        h('th.num', 'Tokens'),
        h('th.num', 'Cost'),
        h('th.num', 'Time'),
      ),
    ),
    h(
      'tbody',
      shown.map((r) =>
        h(
          'tr.click',
          { dataset: { step: r.step }, onclick: () => (location.hash = runLink(view.id, `/step/${r.step}`)) },
          h('td.num', h('a', { href: runLink(view.id, `/step/${r.step}`) }, r.step)),
          h('td.num', r.epoch),
          h('td', decisionBadge(r.decision)),
          h('td.num', score(r.rollout_hard)),
          h('td.num', { title: earlyStopText(r) ?? '' }, candidateScore(r)),
          h('td.num', score(r.current_score)),
          h('td.num', score(r.best_score)),
          h('td.num', r.edit_budget ?? '—'),
          h('td.num', r.edit_apply_summary ? `${r.edit_apply_summary.applied}/${r.edit_apply_summary.total}` : '—'),
          h('td.num', r.gate ? `${r.gate.rollouts_used} / ${r.gate.rollouts_saved}` : '—'),
          h('td.num', int(stepTokens(r.tokens))),
          h('td.num', stepCost(r.tokens) === null ? '—' : usd(stepCost(r.tokens))),
          h('td.num', secs(r.wall_time_s)),
        ),
      ),
    ),
  );
  const pager =
    pages > 1
      ? h(
          'div.pager',
          h(
            'button',
            {
              disabled: view.page === 0,
              onclick: () => {
                view.page -= 1;
                renderSteps(view);
              },
            },
            '‹ newer',
          ),
          `page ${view.page + 1} of ${pages}`,
          h(
            'button',
            {
              disabled: view.page >= pages - 1,
              onclick: () => {
                view.page += 1;
                renderSteps(view);
              },
            },
            'older ›',
          ),
        )
      : null;
  put(view.stepsEl, rows.length ? table : h('div.sub', 'no finished step yet'), pager);
}
