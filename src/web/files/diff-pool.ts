/**
 * Diffs of skills off the server's thread: each in a worker thread of its own, a few at a time,
 * ended when it takes longer than a time limit, when its request goes away, or when the server
 * stops. The diff algorithm's time grows with the product of the two lengths when they differ
 * everywhere, so a limit is needed however large the skills are allowed to be.
 */
import { Worker } from 'node:worker_threads';
import pLimit from 'p-limit';
import { HttpError } from './safe-path.ts';

const WORKER = new URL('./diff-worker.js', import.meta.url);
/** Diffs waiting for a thread beyond this are refused rather than queued. */
const MAX_WAITING = 8;
const MEMORY_MB = 512;

export interface DiffJob {
  before: string;
  after: string;
  labels: { before: string; after: string };
  context: number;
}

export class DiffPool {
  private readonly limit;
  private readonly running = new Set<Worker>();
  private stopped = false;

  constructor(
    readonly timeoutMs = 10_000,
    concurrency = 2,
  ) {
    this.limit = pLimit(concurrency);
  }

  /** Diffs running now. */
  get active(): number {
    return this.running.size;
  }

  /** The unified diff of the job's two texts; HttpError 503 when it cannot be given in time. */
  diff(job: DiffJob, signal?: AbortSignal): Promise<string> {
    if (this.limit.pendingCount >= MAX_WAITING) {
      return Promise.reject(
        new HttpError(503, `${MAX_WAITING} diffs are already waiting for the ones being computed; try again shortly`),
      );
    }
    return this.limit(() => this.run(job, signal));
  }

  private run(job: DiffJob, signal?: AbortSignal): Promise<string> {
    if (this.stopped) return Promise.reject(new HttpError(503, 'the dashboard is stopping'));
    if (signal?.aborted) return Promise.reject(new HttpError(503, 'the request went away before its diff began'));
    return new Promise<string>((resolve, reject) => {
      const worker = new Worker(WORKER, { workerData: job, resourceLimits: { maxOldGenerationSizeMb: MEMORY_MB } });
      this.running.add(worker);
      let done = false;
      const finish = (settle: () => void) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.running.delete(worker);
        void worker.terminate();
        settle();
      };
      const which = `${job.labels.before} and ${job.labels.after}`;
      const timer = setTimeout(
        () =>
          finish(() =>
            reject(
              new HttpError(
                503,
                `the diff of ${which} did not finish within ${this.timeoutMs / 1000} s (the two versions differ in too many lines); open each one whole instead`,
              ),
            ),
          ),
        this.timeoutMs,
      );
      const onAbort = () => finish(() => reject(new HttpError(503, 'the request went away; its diff was stopped')));
      signal?.addEventListener('abort', onAbort, { once: true });
      worker.once('message', (m: { patch: string }) => finish(() => resolve(m.patch)));
      worker.once('error', (err: Error & { code?: string }) =>
        finish(() =>
          reject(
            err.code === 'ERR_WORKER_OUT_OF_MEMORY'
              ? new HttpError(503, `the diff of ${which} needed more than ${MEMORY_MB} MB; open each one whole instead`)
              : err,
          ),
        ),
      );
      worker.once('exit', () => finish(() => reject(new HttpError(503, 'the dashboard is stopping'))));
    });
  }

  /** Ends every diff in progress and refuses new ones; resolves when their threads have ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.running].map((w) => w.terminate()));
  }
}
