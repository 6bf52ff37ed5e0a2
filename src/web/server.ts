/** `skillopt ui`: serves the dashboard until interrupted. */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { UserError } from '../errors.ts';
import { createDashboardApp } from './app.ts';

export interface DashboardOptions {
  roots: string[];
  host: string;
  port: number;
  pollMs?: number;
}

export interface RunningDashboard {
  url: string;
  port: number;
  server: ServerType;
  close(): Promise<void>;
}

const LOOPBACK = ['127.0.0.1', 'localhost', '::1'];

/** Starts the server; port 0 picks a free port. */
export async function startDashboard(opts: DashboardOptions): Promise<RunningDashboard> {
  if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) throw new UserError(`--port must be a port number (0-65535), not ${opts.port}`);
  const loopback = LOOPBACK.includes(opts.host);
  const { app, watcher } = createDashboardApp({ roots: opts.roots, pollMs: opts.pollMs, allowedHosts: loopback ? LOOPBACK : undefined });
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
    port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        watcher.stop();
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

export async function serveDashboard(opts: DashboardOptions): Promise<void> {
  const dash = await startDashboard(opts);
  process.stdout.write(`skillopt dashboard: ${dash.url}  (runs from ${opts.roots.join(', ')}; Ctrl-C to stop)\n`);
  if (!LOOPBACK.includes(opts.host)) {
    process.stderr.write(`warning: the dashboard listens on ${opts.host}: anyone who can reach this address can read these runs\n`);
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
