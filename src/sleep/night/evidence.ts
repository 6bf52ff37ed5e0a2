/**
 * A night's evidence: what each stage saw and decided, one JSON line per event (`ts`, `stage`,
 * `event`, `seq`, then the event's fields), in the staging directory. Every string is redacted,
 * then cut to `maxChars`, before it is written; a night without a staging directory (a dry run)
 * keeps its evidence in memory only.
 */
import { AppendFile } from '../../run/atomic.ts';
import { mapStrings } from '../../config/redact.ts';
import { redactSecrets } from '../harvest/secrets.ts';

export class Evidence {
  private seq = 0;
  private readonly out?: AppendFile;
  readonly events: Record<string, unknown>[] = [];

  constructor(
    file?: string,
    private readonly maxChars = 4000,
  ) {
    if (file) this.out = new AppendFile(file);
  }

  private cut(text: string): string {
    const clean = redactSecrets(text);
    return clean.length <= this.maxChars
      ? clean
      : `${clean.slice(0, this.maxChars)}…[truncated ${clean.length - this.maxChars} chars]`;
  }

  log(stage: string, event: string, fields: Record<string, unknown> = {}): void {
    const line = {
      ts: new Date().toISOString(),
      stage,
      event,
      seq: ++this.seq,
      ...mapStrings(fields, (s) => this.cut(s)),
    };
    this.events.push(line);
    this.out?.append(JSON.stringify(line));
  }

  close(): void {
    this.out?.close();
  }
}
