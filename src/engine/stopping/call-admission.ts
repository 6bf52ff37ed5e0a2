/**
 * Admission of a run's model calls. Once the run is asked to stop (Ctrl-C), no new call starts: a
 * call made after that fails with `RunInterrupted`, which ends the stage it is in the way a fatal
 * model error does (nothing of the unfinished step is committed). The calls already in flight
 * finish and are recorded by the ledger, so a resume replays them instead of paying again.
 */
import { FatalModelError, type ChatModel } from '../../model/types.ts';

export class RunInterrupted extends FatalModelError {
  override name = 'RunInterrupted';
}

export class Admission {
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(private readonly signal?: AbortSignal) {}

  get stopping(): boolean {
    return this.signal?.aborted ?? false;
  }

  /** Calls started and not yet settled. */
  get pending(): number {
    return this.inFlight.size;
  }

  /** `model`, with its calls admitted only while the run is not stopping. */
  wrap(model: ChatModel): ChatModel {
    return { id: model.id, complete: (req) => this.admit(() => model.complete(req)) };
  }

  /** Resolves once every call in flight has settled. */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private admit<T>(call: () => Promise<T>): Promise<T> {
    if (this.stopping) return Promise.reject(new RunInterrupted('the run is stopping: no new model call is made'));
    const running = call();
    this.inFlight.add(running);
    const forget = () => this.inFlight.delete(running);
    running.then(forget, forget);
    return running;
  }
}
