// @ts-check
// Small helpers shared by the views: building elements, calling the API, formatting numbers.

/**
 * What a child of `h`, `put` and `append` may be: a node, text (a number or anything else is
 * shown as text), a list of children, or nothing (null, undefined, false are left out).
 * @typedef {Node | string | number | boolean | null | undefined | any[]} Child
 */

/**
 * The tag of a spec: what comes before its first '.' or '#'.
 * @template {string} S
 * @typedef {S extends `${infer T}.${string}` ? TagOf<T> : S extends `${infer T}#${string}` ? TagOf<T> : S} TagOf
 */

/**
 * The element type of a spec ('input#x' is an HTMLInputElement).
 * @template {string} S
 * @typedef {TagOf<S> extends keyof HTMLElementTagNameMap ? HTMLElementTagNameMap[TagOf<S>] : HTMLElement} ElementOf
 */

/**
 * h('div.cls#id', {attrs}, ...children): an element; strings become text (never HTML).
 * @template {string} S
 * @param {S} spec
 * @param {Record<string, any> | Child} [attrs]
 * @param {...Child} children
 * @returns {ElementOf<S>}
 */
export function h(spec, attrs, ...children) {
  // The pattern matches any string.
  const [, tag = 'div', rest = ''] = /** @type {RegExpExecArray} */ (/^([a-z0-9]*)(.*)$/i.exec(spec));
  const el = document.createElement(tag || 'div');
  for (const m of rest.matchAll(/([.#])([\w-]+)/g)) {
    if (m[1] === '.') el.classList.add(m[2]);
    else el.id = m[2];
  }
  if (attrs && (typeof attrs !== 'object' || attrs instanceof Node || Array.isArray(attrs))) {
    children.unshift(attrs);
    attrs = undefined;
  }
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, ...children);
  return /** @type {ElementOf<S>} */ (el);
}

/**
 * Replaces the children of `el`; null, undefined and false are left out (as in h).
 * @template {Element} E
 * @param {E} el
 * @param {...Child} children
 * @returns {E}
 */
export function put(el, ...children) {
  el.replaceChildren();
  return append(el, ...children);
}

/**
 * Adds children at the end of `el`: nodes as they are, anything else as text; null, undefined
 * and false are left out, arrays are flattened. Views use it instead of the DOM's own append,
 * which would print "null".
 * @template {Element} E
 * @param {E} el
 * @param {...Child} children
 * @returns {E}
 */
export function append(el, ...children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, ...c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} message
   */
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/**
 * The one way the page calls the server: `GET /api/<path>?<params>`, or with `body` a POST of
 * it as JSON; `headers` are added (the actions token). The answer's JSON, or an ApiError with
 * the server's own words.
 */
/**
 * @param {string} path
 * @param {Record<string, unknown>} [params]
 * @param {{ body?: unknown, headers?: Record<string, string> }} [init]
 * @returns {Promise<any>}
 */
export async function api(path, params = {}, { body = undefined, headers = {} } = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const url = `/api/${path}${q.size ? `?${q}` : ''}`;
  const res = await fetch(
    url,
    body === undefined
      ? { cache: 'no-store', headers }
      : {
          method: 'POST',
          cache: 'no-store',
          headers: { ...headers, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        },
  );
  let answer;
  try {
    answer = await res.json();
  } catch {
    throw new ApiError(res.status, `${url}: the server answered ${res.status} without JSON`);
  }
  if (!res.ok) throw new ApiError(res.status, answer?.error ?? `${url}: ${res.status}`);
  return answer;
}

export const isNum = (x) => typeof x === 'number' && Number.isFinite(x);
export const score = (x) => (isNum(x) ? x.toFixed(3) : '—');
/** A step's candidate score; when the gate stopped early, the bound it could not exceed. */
export function candidateScore(r) {
  if (isNum(r?.candidate_gate_score)) return score(r.candidate_gate_score);
  return isNum(r?.candidate_gate_upper_bound) ? `≤ ${score(r.candidate_gate_upper_bound)}` : '—';
}

/** "stopped early after 16 of 30" from a step record's gate counts. */
export function earlyStopText(r) {
  const g = r?.gate;
  if (!g?.early_stopped) return null;
  return isNum(g.rollouts_used) && isNum(g.rollouts_saved)
    ? `stopped early after ${g.rollouts_used + (g.cache_hits ?? 0)} of ${g.rollouts_used + g.rollouts_saved}`
    : 'stopped early';
}

export const pct = (x) => (isNum(x) ? `${(x * 100).toFixed(1)}%` : '—');

export function int(x) {
  if (!isNum(x)) return '—';
  if (Math.abs(x) >= 1e9) return `${(x / 1e9).toFixed(2)}B`;
  if (Math.abs(x) >= 1e6) return `${(x / 1e6).toFixed(2)}M`;
  if (Math.abs(x) >= 1e4) return `${(x / 1e3).toFixed(1)}k`;
  return String(Math.round(x));
}

export function usd(x) {
  if (!isNum(x)) return '—';
  if (x === 0) return '$0';
  if (x < 0.01) return `$${x.toFixed(4)}`;
  if (x < 100) return `$${x.toFixed(2)}`;
  return `$${Math.round(x)}`;
}

/** Cost of a usage total, honest about unpriced calls. */
export function costOf(u) {
  if (!u || (u.calls === 0 && u.costUsd === 0)) return '—';
  if (u.unpricedCalls >= u.calls && u.costUsd === 0) return 'unpriced';
  return `${u.unpricedCalls > 0 ? '≥ ' : ''}${usd(u.costUsd)}`;
}

export function secs(x) {
  if (!isNum(x)) return '—';
  if (x < 60) return `${x.toFixed(1)}s`;
  if (x < 3600) return `${Math.floor(x / 60)}m ${Math.round(x % 60)}s`;
  return `${Math.floor(x / 3600)}h ${Math.round((x % 3600) / 60)}m`;
}

export function ago(ms) {
  if (!isNum(ms) || ms <= 0) return '—';
  const s = (Date.now() - ms) / 1000;
  if (s < 5) return 'just now';
  if (s < 60) return `${Math.round(s)}s ago`;
  if (s < 3600) return `${Math.round(s / 60)}m ago`;
  if (s < 86400) return `${Math.round(s / 3600)}h ago`;
  return new Date(ms).toLocaleDateString();
}

export const ACTION_LABEL = {
  accept_new_best: 'accept (new best)',
  accept: 'accept',
  reject: 'reject',
  force_accept: 'force accept',
  skip_no_patches: 'skip (no patches)',
  skip_no_rewrite: 'skip (no rewrite)',
  skip_no_change: 'skip (no change)',
  skip_invalid_package: 'skip (broken package)',
  skip_audit: 'skip (audit)',
};

export function badge(kind, label = kind) {
  return h('span.badge', { class: `badge ${String(kind).replace(/[^\w-]/g, '_')}` }, label);
}

/** A decision from the server ({outcome, kind}): coloured by its kind, labelled in words. */
export function decisionBadge(decision) {
  return badge(decision.kind, ACTION_LABEL[decision.kind] ?? decision.kind);
}

export function statusBadge(run) {
  return h('span', { title: run.statusDetail ?? '' }, badge(run.status));
}

export function progressBar(done, total) {
  const frac = total ? Math.min(1, done / total) : 0;
  return h(
    'div.progress',
    { title: total ? `${done} of ${total} steps` : `${done} steps` },
    h('div', { style: `width:${(frac * 100).toFixed(1)}%` }),
  );
}

export function stageLine(stage) {
  if (!stage) return null;
  const part = isNum(stage.total) && stage.total > 0 ? ` ${stage.done ?? 0}/${stage.total}` : '';
  return h('div.stage', { title: stage.detail ?? '' }, `step ${stage.step} · ${stage.stage.replace(/_/g, ' ')}${part}`);
}

/** Sum of prompt and completion tokens over the stages of a step record. */
export function stepTokens(tokens) {
  let t = 0;
  for (const s of Object.values(tokens ?? {})) t += (s.prompt_tokens ?? 0) + (s.completion_tokens ?? 0);
  return t;
}

/** Cost of a step record, or null when any stage with calls has no price. */
export function stepCost(tokens) {
  let c = 0;
  let known = false;
  for (const s of Object.values(tokens ?? {})) {
    if (isNum(s.cost_usd)) {
      c += s.cost_usd;
      known = true;
    } else if (s.calls > 0) return null;
  }
  return known ? c : null;
}

export function runLink(id, rest = '') {
  return `#/run/${encodeURIComponent(id)}${rest}`;
}

export function debounce(fn, ms) {
  let t;
  return (...args) => {
    clearTimeout(t);
    t = setTimeout(() => fn(...args), ms);
  };
}

export function errorBox(err) {
  return h('div.callout', h('strong', err.status === 404 ? 'Not found. ' : 'Error. '), err.message ?? String(err));
}
