/**
 * One pace per provider for every worker: each pool's calls start no closer together than its
 * `rpm` allows across all the workers (the next start time is reserved atomically in Redis), and
 * a wait a provider asked for (`retry-after`, an exhausted window) holds back every worker's calls
 * to it, not only those of the worker that was told. Each worker's own pool still limits its
 * concurrency and tokens.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import type { PaceGate } from '../model/call-scheduler.ts';
import { KEY_PREFIX } from './jobs.ts';

/** Reserves the next start: returns how long to wait (ms) before starting. KEYS: next, pause; ARGV: interval ms. */
const RESERVE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local interval = tonumber(ARGV[1])
local start = math.max(now, tonumber(redis.call('GET', KEYS[1]) or '0'), tonumber(redis.call('GET', KEYS[2]) or '0'))
if interval > 0 then redis.call('SET', KEYS[1], start + interval, 'PX', math.ceil(start + interval - now) + 60000) end
return start - now
`;

/** Holds back every start until now + ms (a longer pause already asked for stays). KEYS: pause; ARGV: ms. */
const PAUSE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local until_ = now + tonumber(ARGV[1])
if until_ > tonumber(redis.call('GET', KEYS[1]) or '0') then redis.call('SET', KEYS[1], until_, 'PX', tonumber(ARGV[1]) + 60000) end
return until_
`;

type PaceRedis = Redis & {
  skilloptReserve(next: string, pause: string, interval: number): Promise<number>;
  skilloptPause(pause: string, ms: number): Promise<number>;
};

export class SharedPace {
  private readonly redis: PaceRedis;

  constructor(redis: Redis) {
    redis.defineCommand('skilloptReserve', { numberOfKeys: 2, lua: RESERVE });
    redis.defineCommand('skilloptPause', { numberOfKeys: 1, lua: PAUSE });
    this.redis = redis as PaceRedis;
  }

  /** The gate of the provider a pool calls (`endpoint`: what names it, such as its model and URL). */
  gate(endpoint: string, rpm: number): PaceGate {
    const id = createHash('sha256').update(endpoint).digest('hex').slice(0, 16);
    const next = `${KEY_PREFIX}:pace:${id}:next`;
    const paused = `${KEY_PREFIX}:pace:${id}:pause`;
    const interval = rpm > 0 ? Math.ceil(60_000 / rpm) : 0;
    return {
      acquire: async (signal) => {
        const wait = Number(await this.redis.skilloptReserve(next, paused, interval));
        if (wait > 0) await sleep(wait, undefined, { signal });
      },
      pause: (ms) => {
        void this.redis.skilloptPause(paused, Math.ceil(ms)).catch(() => {});
      },
    };
  }
}
