/** The prompt files of the environments: `prompts/envs/<env>/<name>.md` in the package. */
import fs from 'node:fs';
import path from 'node:path';

const PROMPTS_DIR = path.resolve(import.meta.dirname, '../../prompts/envs');
const cache = new Map<string, string>();

export function envPrompt(env: string, name: string): string {
  const file = path.join(PROMPTS_DIR, env, `${name}.md`);
  let text = cache.get(file);
  if (text === undefined) {
    text = fs.readFileSync(file, 'utf8').trim();
    cache.set(file, text);
  }
  return text;
}

/** The skill as the start of a system prompt, under a heading, followed by the env's instructions. */
export function systemWithSkill(intro: string, skill: string, instructions: string): string {
  const parts = [intro.trim()];
  if (skill.trim()) parts.push(`## Skill\n\n${skill.trim()}`);
  if (instructions.trim()) parts.push(instructions.trim());
  return parts.filter(Boolean).join('\n\n');
}
