/**
 * The environment an agent CLI runs with: built from a short list of what any program needs
 * (PATH, HOME, locale, temp dir, proxies and CA certificates), what that CLI needs for its login
 * and settings, and what the user asked for by name. Everything else, the keys skillopt itself
 * uses among them, stays out, so an agent that runs `env` finds none of them.
 */

const BASE = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'TMPDIR',
  'TZ',
  'LANG',
  'LANGUAGE',
  'XDG_CACHE_HOME',
  'XDG_CONFIG_HOME',
  'XDG_DATA_HOME',
  'XDG_RUNTIME_DIR',
  'SystemRoot',
  'USERPROFILE',
  'APPDATA',
  'LOCALAPPDATA',
];
const NETWORK = [
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'NODE_EXTRA_CA_CERTS',
];

export interface EnvironmentSpec {
  /** Variables this CLI needs from the parent environment (its login tokens, its config dir). */
  cliNames: readonly string[];
  /** Variables the user asked to pass through (`options.pass_env`). */
  passNames: readonly string[];
  /** Values set for this CLI (isolated home, telemetry off), then the user's `options.env`. */
  set: Record<string, string>;
}

export function childEnvironment(
  parent: Record<string, string | undefined>,
  spec: EnvironmentSpec,
): Record<string, string> {
  const env: Record<string, string> = {};
  const take = (name: string) => {
    const v = parent[name];
    if (v !== undefined) env[name] = v;
  };
  for (const name of [...BASE, ...NETWORK, ...spec.cliNames, ...spec.passNames]) take(name);
  for (const name of Object.keys(parent)) if (name.startsWith('LC_')) take(name);
  Object.assign(env, spec.set);
  return env;
}
