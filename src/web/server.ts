/** `skillopt ui`: serves the dashboard until interrupted. */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { UserError } from '../errors.ts';
import { createDashboardApp } from './app.ts';
import type { DiffPool } from './diff-pool.ts';
import { HostAllowList, isLoopback } from './hosts.ts';

export interface DashboardOptions {
  roots: string[];
  host: string;
  port: number;
  /** Host names besides the bound address and loopback that requests may address (`--allowed-host`). */
  allowedHosts?: string[];
  pollMs?: number;
  diffTimeoutMs?: number;
}

export interface RunningDashboard {
  url: string;
  hosts: HostAllowList;
  diffs: DiffPool;
  port: number;
  server: ServerType;
  close(): Promise<void>;
}

/** Starts the server; port 0 picks a free port. */
export async function startDashboard(opts: DashboardOptions): Promise<RunningDashboard> {
  if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) throw new UserError(`--port must be a port number (0-65535), not ${opts.port}`);
  const hosts = new HostAllowList(opts.host, opts.allowedHosts);
  const { app, watcher, diffs } = createDashboardApp({ roots: opts.roots, pollMs: opts.pollMs, diffTimeoutMs: opts.diffTimeoutMs, allowedHosts: hosts });
  const server = await new Promise<ServerType>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: opts.host, port: opts.port }, () => resolve(s));
    s.once('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'EADDRINUSE' ? new UserError(`port ${opts.port} on ${opts.host} is in use; choose another with --port`) : err),
    );
  });
  const port = (server.address() as AddressInfo).port;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return {
    url: `http://${host}:${port}/`,
    hosts,
    diffs,
    port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        watcher.stop();
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
        server.close(() => resolve());
      }).then(() => diffs.stop()),
  };
}

export async function serveDashboard(opts: DashboardOptions): Promise<void> {
  const dash = await startDashboard(opts);
  process.stdout.write(`skillopt dashboard: ${dash.url}  (runs from ${opts.roots.join(', ')}; Ctrl-C to stop)\n`);
  if (!isLoopback(opts.host)) {
    process.stderr.write(
      `warning: the dashboard listens on ${opts.host}: anyone who can reach this address can read these runs. ` +
        `It answers requests addressed to ${dash.hosts.describe()} only; allow another name with --allowed-host NAME\n`,
    );
  }
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      void dash.close().then(resolve);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
