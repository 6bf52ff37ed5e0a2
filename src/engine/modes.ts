/** The original's spellings of modes and policies, normalised. */
import type { UpdateMode } from '../protocol/optimizer.ts';

export function updateMode(raw: string): UpdateMode {
  const v = raw.trim().toLowerCase();
  if (['rewrite', 'rewrite_from_suggestions', 'suggestions', 'rewrite_suggestions'].includes(v)) return 'rewrite_from_suggestions';
  if (['full_rewrite', 'full_rewrite_minibatch', 'minibatch_full_rewrite', 'skill_rewrite_minibatch'].includes(v)) return 'full_rewrite_minibatch';
  return 'patch';
}

export type LrControl = 'fixed' | 'autonomous' | 'none';

export function lrControl(raw: string, mode: UpdateMode): LrControl {
  if (mode === 'full_rewrite_minibatch') return 'none';
  const v = raw.trim().toLowerCase();
  if (['autonomous', 'auto', 'optimizer'].includes(v)) return 'autonomous';
  if (['none', 'off', 'no_lr'].includes(v)) return 'none';
  return 'fixed';
}

export type PairPolicy = 'mixed' | 'changed' | 'unchanged';

export function pairPolicy(raw: string): PairPolicy {
  const v = raw.trim().toLowerCase();
  if (['changed', 'change', 'delta', '10_01', '01_10'].includes(v)) return 'changed';
  if (['unchanged', 'stable', 'same', '00_11'].includes(v)) return 'unchanged';
  return 'mixed';
}
