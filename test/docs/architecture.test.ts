/**
 * docs/architecture.md names real files: every repository path it shows in backticks (a path
 * under src/, test/, scripts/, bench/, docs/, prompts/, configs/ or plugins/) exists, so that a
 * rename or a move that forgets the page fails here.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from '../helpers/cli.ts';

const PAGE = 'docs/architecture.md';
const TOP = ['src', 'test', 'scripts', 'bench', 'docs', 'prompts', 'configs', 'plugins'];

/** The paths a page names in backticks: `src/engine/trainer.ts`, `src/engine/step/`. */
export function namedPaths(markdown: string): string[] {
  const spans = [...markdown.matchAll(/`([^`\s]+)`/g)].map((m) => m[1]!);
  return [...new Set(spans.filter((s) => TOP.some((t) => s.startsWith(`${t}/`)) && /^[\w./-]+$/.test(s)))];
}

describe(PAGE, () => {
  it('names only paths that exist', () => {
    const paths = namedPaths(fs.readFileSync(path.join(ROOT, PAGE), 'utf8'));
    assert.ok(paths.length >= 40, `paths found: ${paths.length}`);
    const missing = paths.filter((p) => !fs.existsSync(path.join(ROOT, p)));
    assert.deepEqual(missing, []);
  });

  it('reads paths in backticks and leaves placeholders and run files alone', () => {
    assert.deepEqual(
      namedPaths('`src/a.ts` and `src/b/`, not `pool/<origin>.md`, `steps/step_NNNN/` or `calls.jsonl`'),
      ['src/a.ts', 'src/b/'],
    );
  });
});
