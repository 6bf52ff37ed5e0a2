/**
 * Writes `baseline.json` (`node --import tsx test/model/sim/single-document/make.ts`). Made once,
 * before skill packages; write it again only for a change meant to alter single-document runs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { optimizerCases, targetCases } from './cases.ts';

const baseline = { target: await targetCases(), optimizer: await optimizerCases() };
fs.writeFileSync(path.join(import.meta.dirname, 'baseline.json'), `${JSON.stringify(baseline, null, 1)}\n`);
