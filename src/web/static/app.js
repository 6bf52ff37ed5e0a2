// @ts-check
// The dashboard page: a hash router over the views, and the live-update stream that tells the
// view on screen when its run's files changed.
import { append, errorBox, h, put } from './util.js';
import { RunsView } from './runs-view.js';
import { RunView } from './run-view.js';
import { StepView } from './step-view.js';
import { CompareView } from './compare-view.js';
import { NewRunView } from './new-run-view.js';
import { actionAccess } from './actions-client.js';
import { NightView } from './nights-view.js';

// Both are in index.html.
const viewEl = /** @type {HTMLElement} */ (document.getElementById('view'));
let current = null;

/** '#/run/<id>/step/3?x=1' → { parts: ['run', id, 'step', '3'], query } */
export function parseRoute(hash = location.hash) {
  const body = hash.replace(/^#\/?/, '');
  const [path, qs = ''] = body.split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  return { parts, query: new URLSearchParams(qs) };
}

function pick(route) {
  const [head, id, sub, arg] = route.parts;
  if (!head) return new RunsView();
  if (head === 'compare') return new CompareView(route.query);
  if (head === 'new') return new NewRunView(route.query);
  if (head === 'night' && id) return new NightView(id);
  if (head === 'run' && id) {
    if (sub === 'step' && arg !== undefined) return new StepView(id, Number(arg), route.query);
    return new RunView(id, sub ?? 'overview', route.query);
  }
  return null;
}

async function render() {
  const route = parseRoute();
  current?.unmount?.();
  current = pick(route);
  const section = route.parts[0] === 'compare' || route.parts[0] === 'new' ? route.parts[0] : 'runs';
  for (const a of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('[data-nav]')))
    a.classList.toggle('active', a.dataset.nav === section);
  // Each page gets a box of its own: a page left before it finished loading fills its own
  // (detached) box, never the next page's.
  const box = h('div');
  put(viewEl, box);
  if (!current) {
    append(box, errorBox({ status: 404, message: `no page at ${location.hash}` }));
    return;
  }
  try {
    await current.mount(box);
  } catch (err) {
    put(box, errorBox(err));
  }
}

window.addEventListener('hashchange', render);

// Live updates: the server pushes 'runs' (the list changed) and 'run' (a run's files changed).
const liveEl = /** @type {HTMLElement} */ (document.getElementById('live'));
function connect() {
  const es = new EventSource('/api/live');
  let connected = false;
  es.addEventListener('hello', () => {
    liveEl.textContent = 'live';
    liveEl.className = 'live on';
    // After a reconnection, changes may have been missed: the view reads again.
    if (connected) {
      current?.onLive?.({ type: 'runs', ids: [] });
      const run = current?.id ?? current?.runId;
      if (run) current?.onLive?.({ type: 'run', run, files: [] });
    }
    connected = true;
  });
  for (const type of ['runs', 'run']) {
    es.addEventListener(type, (e) => {
      const msg = JSON.parse(e.data);
      // Counted for the browser tests, which wait for a message to have arrived.
      const w = /** @type {any} */ (window);
      w.__liveMessages = (w.__liveMessages ?? 0) + 1;
      current?.onLive?.(msg);
    });
  }
  es.onerror = () => {
    liveEl.textContent = 'reconnecting…';
    liveEl.className = 'live off';
  };
}
connect();
// The New run link shows where actions are allowed.
actionAccess().then((a) => {
  if (a.enabled || a.needsToken) /** @type {HTMLElement} */ (document.querySelector('[data-nav="new"]')).hidden = false;
});
render();
