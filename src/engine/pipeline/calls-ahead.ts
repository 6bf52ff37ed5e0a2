/**
 * Optimizer calls made ahead of the step that needs them (`evaluation.gate_overlap`). Work done
 * on a guess sends its calls through `ahead`; the steps send theirs through `model`. A step's call
 * whose request is identical to one made ahead takes that answer, finished or still in flight,
 * instead of paying again; a call made ahead that is identical to one in flight joins it. So a
 * right guess changes nothing but the time, and a wrong one costs the calls it made, counted.
 */
import { requestKey } from '../../model/request-key.ts';
import type { ChatModel, ChatRequest, ChatResponse } from '../../model/types.ts';

/** Thrown to work done on a guess once the guess is known to be wrong: it makes no more calls. */
export class GuessCancelled extends Error {
  override name = 'GuessCancelled';
}

/** What one round of work ahead paid for, and how much of it a step took. */
export interface AheadTally {
  made: number;
  taken: number;
}

export class CallsAhead {
  /** The model the steps call. */
  readonly model: ChatModel;
  /** The model work done on a guess calls. */
  readonly ahead: ChatModel;
  /** Answers made ahead and not taken yet, by request key. */
  private readonly open = new Map<string, Promise<ChatResponse>[]>();
  /** The steps' own calls in flight while a round is open, by request key. */
  private readonly inFlight = new Map<string, Promise<ChatResponse>>();
  private round: (AheadTally & { cancelled: boolean }) | undefined;

  constructor(private readonly inner: ChatModel) {
    const wrap = (complete: (req: ChatRequest) => Promise<ChatResponse>): ChatModel => ({
      id: inner.id,
      agentic: inner.agentic,
      readsSkillFiles: inner.readsSkillFiles,
      skillFiles: inner.skillFiles,
      priced: inner.priced,
      complete,
    });
    this.model = wrap((req) => this.forStep(req));
    this.ahead = wrap((req) => this.forGuess(req));
  }

  /** Opens a round of work ahead; what an earlier round left untaken is dropped. */
  begin(): void {
    this.open.clear();
    this.round = { made: 0, taken: 0, cancelled: false };
  }

  /** The guess was wrong: the round makes no more calls. */
  cancel(): void {
    if (this.round) this.round.cancelled = true;
  }

  /** Closes the round (once the step that could take its answers has made its calls): what it made and what was taken. */
  finish(): AheadTally | undefined {
    const round = this.round;
    this.round = undefined;
    this.open.clear();
    return round && { made: round.made, taken: round.taken };
  }

  private forStep(req: ChatRequest): Promise<ChatResponse> {
    // Answers made ahead live only while their round is open.
    const round = this.round;
    if (!round) return this.inner.complete(req);
    const key = requestKey(this.inner.id, req);
    const made = this.open.get(key);
    const answer = made?.shift();
    if (answer) {
      if (made!.length === 0) this.open.delete(key);
      round.taken++;
      return answer;
    }
    const call = this.inner.complete(req);
    this.inFlight.set(key, call);
    const done = () => this.inFlight.get(key) === call && this.inFlight.delete(key);
    call.then(done, done);
    return call;
  }

  private forGuess(req: ChatRequest): Promise<ChatResponse> {
    const round = this.round;
    if (!round || round.cancelled) return Promise.reject(new GuessCancelled('the guess was wrong'));
    const key = requestKey(this.inner.id, req);
    const joined = this.inFlight.get(key) ?? this.open.get(key)?.[0];
    if (joined) return joined;
    const call = this.inner.complete(req);
    round.made++;
    this.open.set(key, [call]);
    // A failed call is not handed on: the step makes its own.
    call.catch(() => {
      const list = this.open.get(key);
      if (list?.[0] === call) this.open.delete(key);
    });
    return call;
  }
}
