/**
 * The optimizer's prompt templates, from `prompts/*.md`. An environment may override one with
 * `prompts/envs/<env>/<name>.md`. `{{name}}` placeholders are filled from a mapping.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { UpdateMode } from './protocol.ts';

export const PROMPTS_DIR = path.resolve(import.meta.dirname, '../../prompts');
const cache = new Map<string, string>();

export function loadPrompt(name: string, env?: string): string {
  const candidates = [...(env ? [path.join(PROMPTS_DIR, 'envs', env, `${name}.md`)] : []), path.join(PROMPTS_DIR, `${name}.md`)];
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
  return template.replace(/\{\{(\w+)\}\}/g, (m, key: string) => (key in values ? values[key]! : m));
}

const FORMAT_FILE: Record<UpdateMode, string> = { patch: 'patch', rewrite_from_suggestions: 'suggestions', full_rewrite_minibatch: 'skill_candidates' };

/** The JSON list format of a mode's items, and the advice that goes with it. */
export function outputFormat(mode: UpdateMode): { output_format: string; format_guidance: string } {
  const name = FORMAT_FILE[mode];
  return { output_format: loadPrompt(`formats/${name}`).trimEnd(), format_guidance: loadPrompt(`formats/${name}_guidance`).trim() };
}

export function metaSkillBlock(content: string): string {
  return content.trim() ? fill(loadPrompt('meta_skill_block'), { content: content.trim() }).trim() : '';
}
