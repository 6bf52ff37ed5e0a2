import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { REDACTED, registerSecret } from '../../src/config/redact.ts';
import { BlobStore, fromJournalLine, toJournalLine } from '../../src/run/blobs.ts';
import { tmpDir } from '../helpers/tmp.ts';

describe('blobs', () => {
  it('a long text that holds a key in use is stored scrubbed, under the hash of what is on disk, and reads back', () => {
    const key = 'sk-blob-test-0123456789abcdefXYZ';
    registerSecret(key);
    const store = new BlobStore(tmpDir());
    const reply = `The provider echoed the request header: Authorization: Bearer ${key}\n${'filler text '.repeat(200)}`;
    const line = toJournalLine({ item: 'a', reply }, store);
    const hash = (line.blobs as Record<string, string>)['/reply']!;
    const onDisk = fs.readFileSync(store.file(hash), 'utf8');
    assert.ok(!onDisk.includes(key), 'the key is not on disk');
    assert.ok(onDisk.includes(REDACTED));
    // A fresh store (a resumed run) reads it from disk and checks the hash against the content.
    const back = fromJournalLine<{ reply: string }>(line, new BlobStore(store.dir));
    assert.equal(back.reply, onDisk);
  });
});
