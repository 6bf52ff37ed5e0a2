/** Pieces of the optimizer's prompts shared by its calls: the output format of a mode, the meta skill block. */
import { fill, loadPrompt } from '../../prompt-files.ts';
import type { UpdateMode } from '../../protocol/optimizer.ts';

const FORMAT_FILE: Record<UpdateMode, string> = {
  patch: 'patch',
  rewrite_from_suggestions: 'suggestions',
  full_rewrite_minibatch: 'skill_candidates',
};

/** The JSON list format of a mode's items, and the advice that goes with it. */
export function outputFormat(mode: UpdateMode): { output_format: string; format_guidance: string } {
  const name = FORMAT_FILE[mode];
  return {
    output_format: loadPrompt(`formats/${name}`).trimEnd(),
    format_guidance: loadPrompt(`formats/${name}_guidance`).trim(),
  };
}

export function metaSkillBlock(content: string): string {
  return content.trim() ? fill(loadPrompt('meta_skill_block'), { content: content.trim() }).trim() : '';
}
