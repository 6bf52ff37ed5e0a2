import fs from 'node:fs';
import path from 'node:path';
import { DataError } from '../data/errors.ts';
import { readRecordsFrom } from '../data/read.ts';
import { resolveImage } from '../images.ts';
import { registerMaterializer } from '../materialize.ts';
import { docvqaAnswers, sniffImageType } from './env.ts';

const EXT: Record<string, string> = { 'image/png': '.png', 'image/jpeg': '.jpg', 'image/gif': '.gif', 'image/webp': '.webp' };

registerMaterializer({
  benchmark: 'docvqa',
  rawHelp: 'the published DocVQA Parquet files (questionId, question, question_types, image, docId, answers, …), or CSV / JSON rows with image_path',
  matchKeys: ['id', 'questionId'],
  defaultRatio: '2:1:7',
  read: async (raw) =>
    (await readRecordsFrom(raw)).map((rec) => {
      const f = rec.fields;
      const qid = f.questionId ?? f.id;
      if (qid === undefined || qid === null || qid === '') throw new DataError("missing field 'questionId'", rec.where, 'questionId');
      const question = typeof f.question === 'string' ? f.question.split(/document_path:/i)[0]!.trim() : '';
      if (!question) throw new DataError("missing field 'question'", rec.where, 'question');
      const answers = docvqaAnswers(f.answers ?? f.answer);
      if (answers.length === 0) throw new DataError("missing field 'answers'", rec.where, 'answers');
      let bytes: Uint8Array;
      const image = f.image as { bytes?: unknown } | undefined;
      if (image && image.bytes instanceof Uint8Array) bytes = image.bytes;
      else {
        const ref = f.image_path ?? f.document_path;
        const found = typeof ref === 'string' ? resolveImage(ref, [path.dirname(rec.where.file), path.dirname(path.dirname(rec.where.file))]) : undefined;
        if (!found || /^(https?:|data:)/.test(found)) throw new DataError("no image: expected embedded 'image' bytes or a local 'image_path'", rec.where, 'image');
        bytes = fs.readFileSync(found);
      }
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
