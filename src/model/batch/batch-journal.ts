/**
 * `batches.jsonl` beside a run's `calls.jsonl`: each batch sent to a provider, with the ids of
 * its requests, and a line once its results are read. A process that stops (Ctrl-C, a crash)
 * while a batch runs leaves it open here; the next one takes the batch up by its id when the
 * same requests come again, instead of sending (and paying for) them twice.
 */
import { z } from 'zod';
import { AppendFile, jsonLines } from '../../run/atomic.ts';

const SentSchema = z.object({
  event: z.literal('sent'),
  id: z.string().min(1),
  api: z.enum(['openai', 'anthropic']),
  /** The base URL and endpoint of the live requests, which the batch's own addresses derive from. */
  base: z.string(),
  endpoint: z.string(),
  custom_ids: z.array(z.string()),
  at: z.string(),
});
const EndedSchema = z.object({ event: z.literal('ended'), id: z.string().min(1), at: z.string() });
const LineSchema = z.discriminatedUnion('event', [SentSchema, EndedSchema]);

export type SentBatch = z.infer<typeof SentSchema>;

export class BatchJournal {
  private readonly out: AppendFile;
  /** The batches sent and not yet read, by id. */
  private readonly open = new Map<string, SentBatch>();

  constructor(readonly file: string) {
    for (const { value, line } of jsonLines(file)) {
      const parsed = LineSchema.safeParse(value);
      if (!parsed.success)
        throw new Error(
          `${file}: line ${line} is not a batch record (${parsed.error.issues.map((i) => `${i.path.join('.') || 'line'}: ${i.message}`).join('; ')})`,
        );
      if (parsed.data.event === 'sent') this.open.set(parsed.data.id, parsed.data);
      else this.open.delete(parsed.data.id);
    }
    this.out = new AppendFile(file);
  }

  /** The open batches, sent by an earlier process (or this one) and not yet read. */
  openBatches(): SentBatch[] {
    return [...this.open.values()];
  }

  sent(batch: Omit<SentBatch, 'event' | 'at'>): void {
    const line: SentBatch = { event: 'sent', ...batch, at: new Date().toISOString() };
    this.open.set(batch.id, line);
    this.out.append(JSON.stringify(line));
  }

  ended(id: string): void {
    this.open.delete(id);
    this.out.append(JSON.stringify({ event: 'ended', id, at: new Date().toISOString() }));
  }

  close(): void {
    this.out.close();
  }
}
