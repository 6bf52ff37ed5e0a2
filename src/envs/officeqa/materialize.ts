import fs from 'node:fs';
import { UserError } from '../../errors.ts';
import { DataError } from '../data/errors.ts';
import { readRecordsFrom } from '../data/read.ts';
import { registerMaterializer } from '../materialize.ts';
import { Corpus, resolveDocsRoots } from './corpus.ts';
import { listField } from './env.ts';

registerMaterializer({
  benchmark: 'officeqa',
  rawHelp: 'the published officeqa_full.csv (columns uid, question, answer, source_docs, source_files, difficulty)',
  matchKeys: ['id', 'uid'],
  defaultRatio: '2:1:7',
  usesDocs: true,
  read: async (raw, { docs }) => {
    // With the bulletins' directories, an item whose bulletin is not there is left out.
    for (const dir of docs ?? [])
      if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory())
        throw new UserError(
          `--docs ${dir}: not a directory (expected the directory of the Treasury bulletin text files)`,
        );
    const corpus = docs?.length ? new Corpus(resolveDocsRoots(docs, '')) : undefined;
    return (await readRecordsFrom(raw)).map((rec) => {
      const f = rec.fields;
      const uid = f.uid ?? f.id;
      if (uid === undefined || uid === '') throw new DataError("missing field 'uid'", rec.where, 'uid');
      if (typeof f.question !== 'string' || !f.question.trim())
        throw new DataError("missing field 'question'", rec.where, 'question');
      const answer = f.answer ?? f.ground_truth;
      if (answer === undefined || String(answer).trim() === '')
        throw new DataError("missing field 'answer'", rec.where, 'answer');
      const record = {
        id: String(uid),
        uid: String(uid),
        question: f.question,
        ground_truth: String(answer),
        category: String(f.difficulty ?? f.category ?? ''),
        source_files: listField(f.source_files),
        source_docs: listField(f.source_docs),
      };
      const missing = corpus?.filesFor(record.source_files).missing ?? [];
      const leftOut = missing.length
        ? `source file${missing.length > 1 ? 's' : ''} not in --docs: ${missing.join(', ')}`
        : undefined;
      return { id: record.id, record, where: rec.where, ...(leftOut ? { leftOut } : {}) };
    });
  },
});
