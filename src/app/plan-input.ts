/** The dry-run planner's input for a config: the env's splits (loaded, not run), the skill, the prompts and an agent target's runs, measured. */
import type { LoadedConfig } from '../config/load.ts';
import { canonicalBackend } from '../config/catalog.ts';
import { buildEnv } from '../envs/build.ts';
import { getBackend } from '../model/registry.ts';
import { loadPrompt } from '../prompt-files.ts';
import { RUNS_ROOT } from '../run/runs-root.ts';
import { countTokens, loadSkill } from '../skill/document.ts';
import { resolveConfigPath } from '../util/paths.ts';
import { agentOverhead } from './agent-overhead.ts';
import type { PlanInput } from './plan.ts';

/** The planner's input for a config: the env's splits (loaded, not run), the skill and the prompts, measured. */
export async function planInputFor(loaded: LoadedConfig, runsRoot = RUNS_ROOT): Promise<PlanInput> {
  const { config } = loaded;
  const { env, splits } = await buildEnv(loaded);
  const sample = [...splits.train.slice(0, 50), ...splits.val.slice(0, 25)];
  const itemTokens = sample.length
    ? Math.round(sample.reduce((s, it) => s + countTokens(JSON.stringify(it)), 0) / sample.length)
    : 0;
  const skill = loadSkill(resolveConfigPath(config.env.skill_init, loaded.baseDirOf('env.skill_init')), {
    startBlank: config.env.start_blank,
  });
  const promptTokens: PlanInput['promptTokens'] = {};
  const names = {
    analyst: 'analyst_failure',
    merge: 'merge',
    ranking: 'ranking',
    rewrite: 'rewrite_skill',
    slow_update: 'slow_update',
    meta_skill: 'meta_skill',
    lr_autonomous: 'lr_autonomous',
  } as const;
  for (const [stage, name] of Object.entries(names)) {
    try {
      promptTokens[stage as keyof typeof names] = countTokens(loadPrompt(name, config.env.name));
    } catch {
      // a prompt this build does not have: the planner's default size stands
    }
  }
  // An agent CLI as the target: one run is one call, whatever requests the CLI makes in it.
  const agent = agentOverhead(canonicalBackend(config.model.target.backend) ?? config.model.target.backend, runsRoot, {
    skill: countTokens(skill),
    item: itemTokens,
  });
  const agentTarget = agent !== undefined || getBackend(config.model.target.backend)?.targetOnly === true;
  return {
    config,
    sizes: { train: splits.train.length, val: splits.val.length, test: splits.test.length },
    itemTokens,
    skillTokens: countTokens(skill),
    targetCallsPerRollout: env.maxTargetCalls?.(agentTarget) ?? 1,
    ...(agent ? { agent } : {}),
    promptTokens,
  };
}
