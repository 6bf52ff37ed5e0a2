/**
 * What the audit knows of an item: where it is from, what the target is asked and the answers that
 * score. Envs store items in their own shapes; the common fields are read here, and an env whose
 * items hold them elsewhere says so with `Env.auditView`.
 */
import { goldList } from '../envs/scoring/golds.ts';
import type { Env, Item, SplitName, Splits } from '../envs/types.ts';

export interface AuditItem {
  id: string;
  split: SplitName;
  /** The request as the target reads it (its question or input). */
  input: string;
  /** The answers that score. */
  answers: string[];
}

const INPUT_FIELDS = ['question', 'input', 'prompt', 'query', 'problem', 'instruction', 'task'];
const ANSWER_FIELDS = ['expected', 'answer', 'answers', 'ground_truth', 'gold', 'label', 'target'];

const asText = (v: unknown): string => (typeof v === 'string' ? v : v === undefined ? '' : JSON.stringify(v));

/** The common fields: the first input field present, and the golds of the first answer field present. */
export function commonView(item: Item): { input: string; answers: string[] } {
  const inputKey = INPUT_FIELDS.find((k) => item[k] !== undefined && item[k] !== null);
  const answerKey = ANSWER_FIELDS.find((k) => item[k] !== undefined && item[k] !== null);
  return {
    input: inputKey ? asText(item[inputKey]) : '',
    answers: answerKey ? goldList(item[answerKey]).filter((a) => a.trim() !== '') : [],
  };
}

export function auditItems(splits: Pick<Splits, 'train' | 'val' | 'test'>, env?: Pick<Env, 'auditView'>): AuditItem[] {
  const view = env?.auditView?.bind(env) ?? commonView;
  const out: AuditItem[] = [];
  for (const split of ['train', 'val', 'test'] as const)
    for (const item of splits[split]) out.push({ id: item.id, split, ...view(item) });
  return out;
}
