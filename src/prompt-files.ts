/**
 * The Markdown prompt files of the package (`prompts/*.md`). An environment may override one
 * with `prompts/envs/<env>/<name>.md`. `{{name}}` placeholders are filled from a mapping.
 */
import fs from 'node:fs';
import path from 'node:path';

export const PROMPTS_DIR = path.resolve(import.meta.dirname, '../prompts');
const cache = new Map<string, string>();

export function loadPrompt(name: string, env?: string): string {
  const candidates = [
    ...(env ? [path.join(PROMPTS_DIR, 'envs', env, `${name}.md`)] : []),
    path.join(PROMPTS_DIR, `${name}.md`),
  ];
  for (const file of candidates) {
    let text = cache.get(file);
    if (text === undefined && fs.existsSync(file)) {
      text = fs.readFileSync(file, 'utf8');
      cache.set(file, text);
    }
    if (text !== undefined) return text;
  }
  throw new Error(`prompt '${name}' not found (looked in ${candidates.join(', ')})`);
}

export function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{\{(\w+)\}\}/g, (m, key: string) => values[key] ?? m);
}
