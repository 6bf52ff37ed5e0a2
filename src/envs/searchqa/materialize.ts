import { readRecordsFrom } from '../data/read.ts';
import { registerMaterializer } from '../materialize.ts';
import { searchqaRecord } from './env.ts';

registerMaterializer({
  benchmark: 'searchqa',
  rawHelp:
    'the published SearchQA records (columns key, question, context, answers) as a Parquet, JSONL or JSON file, or a directory of them (all splits)',
  matchKeys: ['id', 'key'],
  defaultRatio: '2:1:7',
  read: async (raw) =>
    (await readRecordsFrom(raw)).map((rec) => {
      const record = searchqaRecord(rec);
      return { id: record.id, record, where: rec.where };
    }),
});
