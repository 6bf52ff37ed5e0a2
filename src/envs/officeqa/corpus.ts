/**
 * The OfficeQA document corpus: the Treasury bulletin text files under `env.data_dirs` (and the
 * directories in `OFFICEQA_DOCS_DIR`), indexed by file name, and for each item the files it may
 * open: the ones its `source_files` name (every file when it names none).
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../../errors.ts';
import type { DocFile } from './tools.ts';

/**
 * Existing docs roots as real paths (`dataDirs` already absolute); a root with a `transformed/`
 * subdirectory means that subdirectory.
 */
export function resolveDocsRoots(dataDirs: readonly string[], envVar = process.env.OFFICEQA_DOCS_DIR ?? ''): string[] {
  const fromEnv = envVar
    .split(/[,:;]/)
    .map((s) => s.trim())
    .filter(Boolean);
  const candidates = [...dataDirs, ...fromEnv.map((d) => path.resolve(d))];
  const roots: string[] = [];
  for (const dir of candidates) {
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) continue;
    const transformed = path.join(dir, 'transformed');
    const real = fs.realpathSync(fs.existsSync(transformed) ? transformed : dir);
    if (!roots.includes(real)) roots.push(real);
  }
  if (roots.length === 0) {
    throw new UserError(
      `OfficeQA needs its document corpus (the Treasury bulletin text files): none of env.data_dirs [${dataDirs.join(', ')}]${fromEnv.length ? ` nor OFFICEQA_DOCS_DIR (${envVar})` : ''} is an existing directory`,
    );
  }
  return roots;
}

export class Corpus {
  private readonly byName = new Map<string, DocFile[]>();
  readonly files: DocFile[] = [];

  constructor(readonly roots: readonly string[]) {
    for (const root of roots) {
      for (const rel of (fs.readdirSync(root, { recursive: true }) as string[]).sort()) {
        const full = path.join(root, rel);
        let real: string;
        try {
          if (!fs.statSync(full).isFile()) continue;
          real = fs.realpathSync(full);
        } catch {
          continue;
        }
        // A link that leads out of the docs roots is not part of the corpus.
        if (!roots.some((r) => real === r || real.startsWith(r + path.sep))) continue;
        const file = { real, shown: rel.split(path.sep).join('/') };
        this.files.push(file);
        const list = this.byName.get(path.basename(rel)) ?? [];
        list.push(file);
        this.byName.set(path.basename(rel), list);
      }
    }
  }

  /** The files an item may open, and the listed names that the corpus does not hold. */
  filesFor(sourceFiles: readonly string[]): { files: DocFile[]; missing: string[] } {
    if (sourceFiles.length === 0) return { files: this.files, missing: [] };
    const files: DocFile[] = [];
    const missing: string[] = [];
    for (const name of sourceFiles) {
      const hits = this.byName.get(path.basename(name));
      if (hits) files.push(...hits.filter((h) => !files.includes(h)));
      else missing.push(name);
    }
    return { files, missing };
  }
}
