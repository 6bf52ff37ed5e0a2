// @ts-check
// Actions (launch, stop, resume, evaluate): the token the server hands to its own page (or that
// the user brings, when the dashboard listens beyond loopback), and the calls that carry it.
import { api } from './util.js';

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
    access = await api('actions', {}, { headers: known ? { [TOKEN_HEADER]: known } : {} });
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

const tokenHeader = async () => ({ [TOKEN_HEADER]: (await actionAccess()).token ?? '' });

/** A POST of an action with a JSON body. */
export async function act(path, body) {
  return api(`action/${path}`, {}, { body: body ?? {}, headers: await tokenHeader() });
}

/** A read of the action API (configs, jobs, a run's actions). */
export async function actGet(path, params = {}) {
  return api(`action/${path}`, params, { headers: await tokenHeader() });
}
