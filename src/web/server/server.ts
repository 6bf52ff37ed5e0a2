/** `skillopt ui`: serves the dashboard until interrupted. */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { UserError } from '../../errors.ts';
import { ActionAccess } from '../actions/access.ts';
import { ConfigRoots, defaultConfigRoots } from '../actions/config-roots.ts';
import type { Jobs } from '../actions/jobs.ts';
import { createDashboardApp } from './app.ts';
import type { DiffPool } from '../files/diff-pool.ts';
import { HostAllowList, browserAddresses, isLoopback } from './hosts.ts';

export interface DashboardOptions {
  roots: string[];
  host: string;
  port: number;
  /** Host names besides the bound address and loopback that requests may address (`--allowed-host`). */
  allowedHosts?: string[];
  pollMs?: number;
  diffTimeoutMs?: number;
  /** Directories the page may take configs from (default: `configs/` here, and the package's). */
  configRoots?: string[];
  /** `--allow-actions`: launching and stopping runs when listening beyond loopback, with the token. */
  allowActions?: boolean;
  /** How the program is called in the commands shown (default: as this process was called). */
  program?: string;
  /** The Sleep state folder whose nights the runs list shows (absent: none). */
  sleepStateDir?: string;
  /** Where refused action requests are reported (default: standard error). */
  log?: (line: string) => void;
}

export interface RunningDashboard {
  /** An address a browser on this machine can open. */
  url: string;
  /** Every address a browser can open: `url` first, then this machine's others when it listens on all of them. */
  urls: string[];
  hosts: HostAllowList;
  diffs: DiffPool;
  access: ActionAccess;
  configRoots: string[];
  /** The processes started from the page (undefined when actions are off). */
  jobs?: Jobs;
  port: number;
  server: ServerType;
  close(): Promise<void>;
}

/** Starts the server; port 0 picks a free port. */
export async function startDashboard(opts: DashboardOptions): Promise<RunningDashboard> {
  if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535)
    throw new UserError(`--port must be a port number (0-65535), not ${opts.port}`);
  const hosts = new HostAllowList(opts.host, opts.allowedHosts);
  const access = new ActionAccess({
    bind: opts.host,
    allowActions: opts.allowActions,
    ...(opts.log ? { log: opts.log } : {}),
  });
  // Each directory once, however it was reached (configs/ here is the package's own in a checkout).
  const configRoots = new ConfigRoots(opts.configRoots ?? defaultConfigRoots()).roots.map((r) => r.given);
  const program = opts.program ?? (await import('../../run/resume-command.ts')).programName();
  const { app, watcher, diffs, jobs } = createDashboardApp({
    roots: opts.roots,
    pollMs: opts.pollMs,
    diffTimeoutMs: opts.diffTimeoutMs,
    allowedHosts: hosts,
    sleepStateDir: opts.sleepStateDir,
    actions: { access, configRoots, program },
  });
  const server = await new Promise<ServerType>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: opts.host, port: opts.port }, () => resolve(s));
    s.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new UserError(`port ${opts.port} on ${opts.host} is in use; choose another with --port`)
          : err,
      ),
    );
  });
  // Idle connections are kept longer than clients keep them (Node's 5 s races them: a request
  // sent on a connection the server is closing at that moment fails with a reset).
  (server as unknown as { keepAliveTimeout: number }).keepAliveTimeout = 65_000;
  const port = (server.address() as AddressInfo).port;
  const urls = browserAddresses(opts.host).map((a) => `http://${a.includes(':') ? `[${a}]` : a}:${port}/`);
  return {
    url: urls[0]!,
    urls,
    hosts,
    diffs,
    access,
    configRoots,
    jobs,
    port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        watcher.stop();
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
        server.close(() => resolve());
      }).then(() => {
        jobs?.close();
        return diffs.stop();
      }),
  };
}

export async function serveDashboard(opts: DashboardOptions): Promise<void> {
  const dash = await startDashboard(opts);
  if (!isLoopback(opts.host)) {
    process.stderr.write(
      `warning: the dashboard listens on ${opts.host}: anyone who can reach this address can read these runs. ` +
        `It answers requests addressed to ${dash.hosts.describe()} only; allow another name with --allowed-host NAME\n`,
    );
  }
  // One write: whoever waits for the address has the rest with it.
  const others = dash.urls.slice(1);
  const lines = [
    `skillopt dashboard: ${dash.url}  (runs from ${opts.roots.join(', ')}${opts.sleepStateDir ? `, Sleep nights from ${opts.sleepStateDir}` : ''}; Ctrl-C to stop)`,
  ];
  if (others.length) lines.push(`also at: ${others.join(', ')}`);
  if (!dash.access.enabled) lines.push(`actions are off: ${dash.access.disabledReason}`);
  else {
    lines.push(
      `actions: launch, stop, resume and evaluate runs from the page (configs from ${dash.configRoots.join(', ')}; new runs under ${opts.roots[0]})`,
    );
    if (dash.access.tokenFromUser)
      lines.push(
        `actions token: ${dash.access.token}  (open ${dash.urls.map((u) => `${u}?token=${dash.access.token}`).join(' or ')})`,
      );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      const running = dash.jobs?.stillRunning() ?? [];
      if (running.length) {
        process.stderr.write(
          `${running.length} process(es) started from the dashboard keep running: ${running.join('; ')}. ` +
            `They are ordinary skillopt runs: any dashboard shows and stops them, or stop one with kill -INT <pid>\n`,
        );
      }
      void dash.close().then(resolve);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
