/**
 * A role's model for calls whose answers can wait: each call goes through the batch path (the
 * backend over a `BatchTransport`, scheduled without a concurrency limit: a batch's requests are
 * sent together) and is priced at the batch discount; a call the batch could not answer is made
 * again on the live path, with the live path's retries and price.
 */
import { BATCH_DISCOUNT } from '../prices.ts';
import { InfraError, type ChatModel, type ChatRequest, type ChatResponse } from '../types.ts';

/** Calls of one batch path in flight at once (and rollouts under batched models): a batch's requests are sent together. */
export const BATCH_IN_FLIGHT = 10_000;

export class BatchedModel implements ChatModel {
  readonly id: string;
  readonly priced?: boolean;
  readonly skillFiles?: ChatModel['skillFiles'];

  constructor(
    private readonly batch: ChatModel,
    private readonly live: ChatModel,
  ) {
    this.id = live.id;
    this.priced = live.priced;
    this.skillFiles = live.skillFiles;
  }

  async complete(req: ChatRequest): Promise<ChatResponse> {
    let answer: ChatResponse;
    try {
      answer = await this.batch.complete(req);
    } catch (err) {
      // Fatal errors and stops end the run as they would live; an item the batch failed is made live.
      if (!(err instanceof InfraError)) throw err;
      // The call is journaled as sent once (by the batch path): the live attempt is the same call.
      return this.live.complete({ ...req, onSent: undefined });
    }
    const costUsd = answer.costUsd == null ? answer.costUsd : answer.costUsd * BATCH_DISCOUNT;
    return { ...answer, costUsd, batched: true };
  }
}
