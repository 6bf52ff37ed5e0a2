import fs from 'node:fs';
import path from 'node:path';
import { DataError } from '../data/errors.ts';
import { registerMaterializer } from '../materialize.ts';
import { docvqaAnswers, pageImage, readDocVqaRaw, sniffImageType } from './env.ts';

const EXT: Record<string, string> = {
  'image/png': '.png',
  'image/jpeg': '.jpg',
  'image/gif': '.gif',
  'image/webp': '.webp',
};

registerMaterializer({
  benchmark: 'docvqa',
  rawHelp:
    "the published DocVQA Parquet files (questionId, question, question_types, image, docId, answers, …), the task's val_v1.0.json-style annotation files (image: a path relative to the file), or CSV / JSON rows with image_path",
  matchKeys: ['id', 'questionId'],
  defaultRatio: '2:1:7',
  read: async (raw) =>
    (await readDocVqaRaw(raw)).map((rec) => {
      const f = rec.fields;
      const qid = f.questionId ?? f.id;
      if (qid === undefined || qid === null || qid === '')
        throw new DataError("missing field 'questionId'", rec.where, 'questionId');
      const question = typeof f.question === 'string' ? f.question.split(/document_path:/i)[0]!.trim() : '';
      if (!question) throw new DataError("missing field 'question'", rec.where, 'question');
      const answers = docvqaAnswers(f.answers ?? f.answer);
      if (answers.length === 0) throw new DataError("missing field 'answers'", rec.where, 'answers');
      const page = pageImage(rec, String(qid), [path.dirname(path.dirname(rec.where.file))]);
      if ('url' in page)
        throw new DataError(
          `the image of question ${qid} is a URL (${page.url}); materialize needs local image files or embedded bytes`,
          rec.where,
          'image',
        );
      const bytes = 'bytes' in page ? page.bytes : new Uint8Array(fs.readFileSync(page.file));
      const docId = f.docId ?? 'x';
      const imagePath = `images/q${qid}_d${docId}${EXT[sniffImageType(bytes)] ?? '.png'}`;
      const topic = f.topic ?? (Array.isArray(f.question_types) ? f.question_types.map(String).join('|') : undefined);
      const record = {
        id: String(qid),
        questionId: String(qid),
        question,
        answers,
        image_path: imagePath,
        ...(f.docId !== undefined ? { docId: f.docId } : {}),
        ...(f.ucsf_document_id !== undefined ? { ucsf_document_id: f.ucsf_document_id } : {}),
        ...(f.ucsf_document_page_no !== undefined ? { ucsf_document_page_no: f.ucsf_document_page_no } : {}),
        ...(topic ? { topic } : {}),
        ...(f.data_split !== undefined ? { source_split: f.data_split } : {}),
      };
      return { id: record.id, record, where: rec.where, files: [{ path: imagePath, bytes }] };
    }),
});
