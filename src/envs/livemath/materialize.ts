import { registerMaterializer } from '../materialize.ts';
import { readLiveMathRaw, toMathItem } from './env.ts';

registerMaterializer({
  benchmark: 'livemathematicianbench',
  rawHelp: 'the published qa_*_final.json files (one file, or a directory searched for them)',
  matchKeys: ['id'],
  defaultRatio: '2:1:7',
  read: async (raw) =>
    (await readLiveMathRaw(raw)).flatMap((rec) => {
      const item = toMathItem(rec);
      if (!item) return [];
      const { type: _type, ...record } = item;
      return [{ id: item.id, record, where: rec.where }];
    }),
});
