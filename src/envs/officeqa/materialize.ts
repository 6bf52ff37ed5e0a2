import { DataError } from '../data/errors.ts';
import { readRecordsFrom } from '../data/read.ts';
import { registerMaterializer } from '../materialize.ts';
import { listField } from './env.ts';

registerMaterializer({
  benchmark: 'officeqa',
  rawHelp: 'the published officeqa_full.csv (columns uid, question, answer, source_docs, source_files, difficulty)',
  matchKeys: ['id', 'uid'],
  defaultRatio: '2:1:7',
  read: async (raw) =>
    (await readRecordsFrom(raw)).map((rec) => {
      const f = rec.fields;
      const uid = f.uid ?? f.id;
      if (uid === undefined || uid === '') throw new DataError("missing field 'uid'", rec.where, 'uid');
      if (typeof f.question !== 'string' || !f.question.trim()) throw new DataError("missing field 'question'", rec.where, 'question');
      const answer = f.answer ?? f.ground_truth;
      if (answer === undefined || String(answer).trim() === '') throw new DataError("missing field 'answer'", rec.where, 'answer');
      const record = {
        id: String(uid),
        uid: String(uid),
        question: f.question,
        ground_truth: String(answer),
        category: String(f.difficulty ?? f.category ?? ''),
        source_files: listField(f.source_files),
        source_docs: listField(f.source_docs),
      };
      return { id: record.id, record, where: rec.where };
    }),
});
