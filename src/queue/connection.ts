/** The Redis connections of queues, workers and our own keys, from the URL the user gives. */
import type { ConnectionOptions } from 'bullmq';
import { Redis } from 'ioredis';
import { UserError } from '../errors.ts';

function checkUrl(url: string, where: string): void {
  if (!/^rediss?:\/\/[^/]/.test(url))
    throw new UserError(`${where}: expected a Redis URL such as 'redis://host:6379', got '${url}'`);
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
