/**
 * Which backend and model each role uses. `model.backend` is a label that fills the roles that
 * leave `backend` unset (the original's table, reference §4.7): empty, or `openai_chat` (the
 * original's base config pins both roles to it, so it counts as unset). The judge falls back to
 * the optimizer field by field. A role still on the base config's OpenAI model (`gpt-5.4`,
 * `gpt-5.5`) while its backend is not OpenAI's gets that backend's default model, as the original
 * does. Unknown backends are an error naming the key.
 */
import { ConfigError } from '../errors.ts';
import { backendNames, canonicalBackend, getBackend } from '../model/registry.ts';
import '../model/backends.ts';
import { didYouMean } from '../util/suggest.ts';
import type { Sources } from './layers.ts';
import { RoleSchema, type Config } from './schema.ts';

/** For a label: the optimizer's and the target's backend when the role leaves them empty. */
const LABELS: Record<string, { optimizer: string; target: string }> = {
  claude_code_exec: { optimizer: 'openai_chat', target: 'claude_code_exec' },
  codex_exec: { optimizer: 'openai_chat', target: 'codex_exec' },
  cursor_exec: { optimizer: 'openai_chat', target: 'cursor_exec' },
  copilot_exec: { optimizer: 'openai_chat', target: 'copilot_exec' },
  qwen_chat: { optimizer: 'openai_chat', target: 'qwen_chat' },
  minimax_chat: { optimizer: 'openai_chat', target: 'minimax_chat' },
};

/** The base config's model names, replaced by a non-OpenAI backend's default. */
const OPENAI_SENTINELS = new Set(['gpt-5.4', 'gpt-5.5']);
const KEEPS_OPENAI_MODELS = new Set(['openai_chat', 'openai_compatible']);

export function resolveRoles(config: Config, sources: Sources): void {
  const label = config.model.backend.trim();
  const canonicalLabel = label ? (canonicalBackend(label) ?? label) : 'openai_chat';
  for (const role of ['target', 'optimizer'] as const) {
    const rc = config.model[role];
    const own = rc.backend && canonicalBackend(rc.backend) !== 'openai_chat' ? rc.backend : '';
    const key = own || (rc.backend && !label) ? `model.${role}.backend` : 'model.backend';
    const requested = own || (label ? LABELS[canonicalLabel]?.[role] || canonicalLabel : rc.backend || canonicalLabel);
    const canonical = canonicalBackend(requested);
    if (!canonical) {
      const s = sources.get(key);
      throw new ConfigError(
        `${s?.source ?? 'config'}: ${s?.written ?? key}: unknown backend '${requested}'${didYouMean(requested, backendNames())}; known backends: ${backendNames().join(', ')}`,
        s?.source,
        key,
      );
    }
    rc.backend = canonical;
    if (!rc.model || (OPENAI_SENTINELS.has(rc.model) && !KEEPS_OPENAI_MODELS.has(canonical))) rc.model = getBackend(canonical)!.defaultModel;
  }
  const judge = config.model.judge;
  const merged = RoleSchema.parse({ ...config.model.optimizer, ...Object.fromEntries(Object.entries(judge).filter(([, v]) => v !== undefined && v !== '')) });
  const canonicalJudge = canonicalBackend(merged.backend);
  if (!canonicalJudge) {
    const s = sources.get('model.judge.backend');
    throw new ConfigError(`${s?.source ?? 'config'}: model.judge.backend: unknown backend '${merged.backend}'${didYouMean(merged.backend, backendNames())}`, s?.source, 'model.judge.backend');
  }
  merged.backend = canonicalJudge;
  config.model.judge = merged;
}
