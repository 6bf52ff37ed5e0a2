/**
 * `npm run docs`: writes the generated reference pages (docs/reference/config.md from the zod
 * config schemas, docs/reference/cli.md from the command definitions). test/docs/reference.test.ts
 * fails when the committed pages differ from what this writes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { generatedPages, ROOT } from './docs/pages.ts';

for (const [file, text] of Object.entries(generatedPages())) {
  const target = path.join(ROOT, file);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const before = fs.existsSync(target) ? fs.readFileSync(target, 'utf8') : undefined;
  if (before === text) {
    process.stdout.write(`${file}: up to date\n`);
    continue;
  }
  const tmp = `${target}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, target);
  process.stdout.write(`${file}: written\n`);
}
