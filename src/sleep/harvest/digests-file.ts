/**
 * A harvest on disk: JSON Lines, one redacted session digest a line, newest session first,
 * written atomically. Reading checks every line against the digest schema and names the file,
 * the line and the field of the first problem.
 */
import fs from 'node:fs';
import { UserError } from '../../errors.ts';
import { writeFileAtomic } from '../../run/atomic.ts';
import { SessionDigestSchema, type SessionDigest } from './digest.ts';
import { redactSecretsDeep } from './secrets.ts';

export function writeDigests(file: string, digests: SessionDigest[]): void {
  // Digests are redacted when built; this pass keeps the file free of secrets whatever built them.
  writeFileAtomic(
    file,
    digests.map((d) => `${JSON.stringify(redactSecretsDeep(d))}\n`),
  );
}

export function readDigests(file: string): SessionDigest[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new UserError(`${file}: cannot read the harvest: ${(err as Error).message}`);
  }
  const out: SessionDigest[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (!line.trim()) continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new UserError(`${file}:${i + 1}: not a JSON object (a harvest has one session digest a line)`);
    }
    const result = SessionDigestSchema.safeParse(value);
    if (!result.success) {
      const issue = result.error.issues[0]!;
      throw new UserError(`${file}:${i + 1}: ${issue.path.join('.') || 'the line'}: ${issue.message}`);
    }
    out.push(result.data);
  }
  return out;
}
