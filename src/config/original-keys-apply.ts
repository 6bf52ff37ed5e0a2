/**
 * Applying the original's backend keys (the table is in `original-keys.ts`): taking them out of
 * the tree before validation, then mapping them onto the roles on their backend once the roles
 * are resolved, with one warning per feature that is not built.
 */
import { ConfigError } from '../errors.ts';
import {
  bool,
  HUMAN_FEEDBACK,
  HUMAN_FEEDBACK_KEYS,
  ORIGINAL_MODEL_KEYS,
  ROLE_NAMES,
  type FoundKey,
  type Rule,
  type RoleName,
} from './original-keys.ts';
import { applySpecial, setByUser, setRoleField } from './original-keys-special.ts';
import type { Config } from './schema.ts';
import { isMapping, type Sources, type Tree } from './tree.ts';

const blank = (v: unknown) => v === undefined || v === null || (typeof v === 'string' && v.trim() === '');

/**
 * Takes the original's backend keys out of `tree` (so that validation sees only our schema),
 * returning them. A key of `human_feedback` that the original does not have is an error.
 */
export function extractOriginalKeys(
  tree: Tree,
  sources: Sources,
  suggest: (word: string, known: string[]) => string,
): FoundKey[] {
  const found: FoundKey[] = [];
  const take = (section: string, key: string, container: Tree) => {
    const path = `${section}.${key}`;
    const s = sources.get(path);
    found.push({ path, key, value: container[key], source: s?.source ?? 'config', written: s?.written ?? path });
    delete container[key];
    sources.delete(path);
  };
  const model = tree.model;
  if (isMapping(model)) for (const key of Object.keys(model)) if (ORIGINAL_MODEL_KEYS[key]) take('model', key, model);
  const hf = tree.human_feedback;
  if (hf !== undefined) {
    if (!isMapping(hf)) {
      const s = sources.get('human_feedback');
      throw new ConfigError(
        `${s?.source ?? 'config'}: human_feedback: expected a mapping of ${HUMAN_FEEDBACK_KEYS.join(', ')}`,
        s?.source,
        'human_feedback',
      );
    }
    for (const key of Object.keys(hf)) {
      if (!HUMAN_FEEDBACK_KEYS.includes(key)) {
        const s = sources.get(`human_feedback.${key}`);
        throw new ConfigError(
          `${s?.source ?? 'config'}: unknown key '${s?.written ?? `human_feedback.${key}`}'${suggest(key, HUMAN_FEEDBACK_KEYS)}`,
          s?.source,
          `human_feedback.${key}`,
        );
      }
      take('human_feedback', key, hf);
    }
    delete tree.human_feedback;
  }
  return found;
}

/**
 * Applies the keys `extractOriginalKeys` found: role settings for the roles on their backend
 * (after role resolution), warnings for the rest. `defaulted` names the roles whose model was
 * left to the backend's default (the original's `minimax_model` fills those).
 */
export function applyOriginalKeys(
  config: Config,
  found: FoundKey[],
  sources: Sources,
  defaulted: ReadonlySet<RoleName>,
): string[] {
  const warnings: string[] = [];
  const unsupported = new Map<string, FoundKey[]>();
  const note = (message: string, key: FoundKey) => unsupported.set(message, [...(unsupported.get(message) ?? []), key]);
  const rolesOn = (backends: string[]) => ROLE_NAMES.filter((r) => backends.includes(config.model[r].backend));

  for (const f of found) {
    if (blank(f.value)) continue;
    if (f.path.startsWith('human_feedback.')) {
      if (f.key === 'enabled' && bool(f.value, `${f.source}: ${f.written}`)) note(HUMAN_FEEDBACK, f);
      continue;
    }
    const rule = ORIGINAL_MODEL_KEYS[f.key]!;
    if (rule.kind === 'secret') {
      warnings.push(
        `${f.source}: ${f.written}: keys are read from environment variables only, never from config files; set ${rule.variable} in the shell or in .env (the value here is ignored and not written anywhere)`,
      );
    } else if (rule.kind === 'unsupported') {
      if (!rule.backends || rolesOn(rule.backends).length > 0) note(rule.feature, f);
    } else if (rule.kind === 'model') {
      if (!sources.has(`model.${rule.field}`)) {
        config.model[rule.field] = rule.read(f.value, `${f.source}: ${f.written}`) as boolean;
        sources.set(`model.${rule.field}`, { source: f.source, written: f.written });
      }
    }
  }

  // Settings: for each role on the backend, the most specific non-blank key wins.
  for (const role of ROLE_NAMES) {
    const backend = config.model[role].backend;
    const chosen = new Map<string, { rule: Extract<Rule, { kind: 'setting' | 'special' }>; key: FoundKey }>();
    for (const f of found) {
      const rule = ORIGINAL_MODEL_KEYS[f.key];
      if (
        !rule ||
        (rule.kind !== 'setting' && rule.kind !== 'special') ||
        !rule.backends.includes(backend) ||
        blank(f.value)
      )
        continue;
      if (rule.role && rule.role !== role) continue;
      const current = chosen.get(rule.name);
      if (!current || rule.rank > current.rule.rank) chosen.set(rule.name, { rule, key: f });
    }
    for (const [name, { rule, key }] of chosen) {
      const where = `${key.source}: ${key.written}`;
      if (rule.kind === 'setting') {
        if (!setByUser(config, sources, role, rule.setting.field))
          setRoleField(config, sources, role, rule.setting.field, rule.setting.read(key.value, where), key);
        continue;
      }
      applySpecial(config, sources, role, name, key, (other) => chosen.get(other)?.key, defaulted, note);
    }
  }

  for (const [message, keys] of unsupported) {
    // A key noted for each of two roles on its backend is named once.
    const bySource = new Map<string, Set<string>>();
    for (const k of keys) bySource.set(k.source, (bySource.get(k.source) ?? new Set()).add(k.written));
    for (const [source, written] of bySource) warnings.push(`${source}: ${[...written].join(', ')}: ${message}`);
  }
  return warnings;
}
