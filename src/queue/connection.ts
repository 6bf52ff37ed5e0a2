/** The Redis connections of queues, workers and our own keys, from the URL the user gives. */
import type { ConnectionOptions } from 'bullmq';
import { Redis } from 'ioredis';
import { redactText } from '../config/redact.ts';
import { UserError } from '../errors.ts';

function checkUrl(url: string, where: string): void {
  if (!/^rediss?:\/\/[^/]/.test(url))
    throw new UserError(`${where}: expected a Redis URL such as 'redis://host:6379', got '${url}'`);
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[?::1\]?)$/i;

/**
 * A worker runs what the jobs in its Redis ask for, so that Redis must be the user's alone: a URL
 * with a password, or one on this machine's loopback, unless the user says otherwise.
 */
export function checkWorkerUrl(url: string, insecure: boolean): void {
  checkUrl(url, '--redis');
  if (insecure) return;
  const u = new URL(url);
  if (u.password || LOOPBACK.test(u.hostname)) return;
  throw new UserError(
    `--redis: ${redactText(url)} has no password, and whoever can write to that Redis gives this worker its jobs. Give its password in the URL (redis://:PASSWORD@${u.host}, or in SKILLOPT_REDIS_URL to keep it off the command line), or pass --insecure for a Redis on a network only you use`,
  );
}

/** For BullMQ: blocking commands must not time out, or a worker waiting for jobs fails. */
export function redisConnection(url: string, where: string): ConnectionOptions {
  checkUrl(url, where);
  return { url, maxRetriesPerRequest: null };
}

/** A client for the run specs, the skills and the shared pace. */
export function openRedis(url: string, where: string): Redis {
  checkUrl(url, where);
  const redis = new Redis(url, { maxRetriesPerRequest: 3 });
  // A lost connection shows in the commands that fail; ioredis would also print each retry.
  redis.on('error', () => {});
  return redis;
}
