/**
 * Which backend and model each role uses. `model.backend` is a label that fills the roles that
 * leave `backend` empty (the original's table, reference §4.7); the judge falls back to the
 * optimizer field by field. Unknown backends are an error naming the key.
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
};

export function resolveRoles(config: Config, sources: Sources): void {
  const label = config.model.backend.trim();
  const canonicalLabel = label ? (canonicalBackend(label) ?? label) : 'openai_chat';
  for (const role of ['target', 'optimizer'] as const) {
    const rc = config.model[role];
    const key = rc.backend ? `model.${role}.backend` : 'model.backend';
    const requested = rc.backend || LABELS[canonicalLabel]?.[role] || canonicalLabel;
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
    if (!rc.model) rc.model = getBackend(canonical)!.defaultModel;
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
