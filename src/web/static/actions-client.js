// Actions (launch, stop, resume, evaluate): the token the server hands to its own page (or that
// the user brings, when the dashboard listens beyond loopback), and the calls that carry it.
import { ApiError } from './util.js';

const TOKEN_HEADER = 'x-skillopt-token';
const STORE = 'skillopt-action-token';
let access;

/** A token given in the address (?token=…) is kept for this tab and taken out of the address bar. */
function tokenFromAddress() {
  const url = new URL(location.href);
  const given = url.searchParams.get('token');
  if (given) {
    sessionStorage.setItem(STORE, given);
    url.searchParams.delete('token');
    history.replaceState(null, '', `${url.pathname}${url.search}${url.hash}`);
  }
  return sessionStorage.getItem(STORE);
}

/** { enabled, token?, needsToken?, reason? }, asked once. */
export async function actionAccess() {
  if (access) return access;
  const known = tokenFromAddress();
  try {
    const res = await fetch('/api/actions', { cache: 'no-store', headers: known ? { [TOKEN_HEADER]: known } : {} });
    access = await res.json();
  } catch (err) {
    access = { enabled: false, reason: `the server did not say whether actions are allowed (${err.message})` };
  }
  return access;
}

/** Uses a token the user typed in; true when the server takes it. */
export async function useToken(token) {
  sessionStorage.setItem(STORE, token.trim());
  access = undefined;
  return (await actionAccess()).enabled;
}

async function call(path, init) {
  const { token } = await actionAccess();
  const res = await fetch(`/api/action/${path}`, {
    cache: 'no-store',
    ...init,
    headers: { ...init.headers, [TOKEN_HEADER]: token ?? '' },
  });
  let body;
  try {
    body = await res.json();
  } catch {
    throw new ApiError(res.status, `/api/action/${path}: the server answered ${res.status} without JSON`);
  }
  if (!res.ok) throw new ApiError(res.status, body?.error ?? `/api/action/${path}: ${res.status}`);
  return body;
}

/** A POST of an action with a JSON body. */
export function act(path, body) {
  return call(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body ?? {}),
  });
}

/** A read of the action API (configs, jobs, a run's actions). */
export function actGet(path, params = {}) {
  const q = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== null && v !== ''));
  return call(`${path}${q.size ? `?${q}` : ''}`, { method: 'GET', headers: {} });
}
