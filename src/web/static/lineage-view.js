// @ts-check
// A pool run's candidates as a tree: each under its first parent, a merge naming its second,
// with what the gate did, its selection score and whether it is still in the pool.
import { decisionBadge, api, append, badge, h, runLink, score } from './util.js';

const stepOf = (node) => (node.kind === 'step' || node.kind === 'merge' ? node.step : null);

export class LineagePanel {
  constructor(runId) {
    this.runId = runId;
  }

  async mount(el) {
    const view = await api('lineage', { run: this.runId });
    const box = h('div.panel#lineage');
    append(el, box);
    for (const p of view.problems) append(box, h('div.callout', p));
    if (!view.pool) {
      append(
        box,
        h('div.sub.empty-state', 'This run keeps one current skill: no candidate pool (optimizer.pool_size).'),
      );
      return;
    }
    const children = new Map();
    for (const n of view.nodes) {
      const parent = n.parents[0] ?? '';
      if (!children.has(parent)) children.set(parent, []);
      children.get(parent).push(n);
    }
    const item = (n) => {
      const step = stepOf(n);
      const label = step !== null ? h('a', { href: runLink(this.runId, `/step/${step}`) }, n.id) : h('span', n.id);
      return h(
        'li.node',
        { dataset: { id: n.id, inPool: n.in_pool ? '1' : '0', kind: n.kind } },
        h(
          'div.node-line',
          label,
          ' ',
          n.kind === 'initial' ? badge('selected', 'initial') : decisionBadge(n.decision),
          h('span.sub', ` ${n.score === null ? 'stopped early' : score(n.score)} · ${n.tokens} tokens`),
          n.parents.length > 1 ? h('span.sub', ` · merged with ${n.parents.slice(1).join(', ')}`) : null,
          n.test
            ? h(
                'span.sub',
                ` · effect ${n.test.effect >= 0 ? '+' : ''}${n.test.effect.toFixed(3)}, p ${n.test.p.toFixed(3)}`,
              )
            : null,
          n.in_pool
            ? badge('applied', 'in pool')
            : n.dropped_at !== undefined
              ? h('span.sub', ` · dropped at step ${n.dropped_at}`)
              : null,
        ),
        children.has(n.id) ? h('ul', children.get(n.id).map(item)) : null,
      );
    };
    append(
      box,
      h('h3', `Candidates (${view.nodes.length}); in the pool: ${view.members.join(', ')}`),
      h('ul.lineage', (children.get('') ?? []).map(item)),
    );
  }
}
