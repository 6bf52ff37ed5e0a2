/**
 * The backward pass. Failed trajectories (and successful ones, unless `failure_only`) are cut
 * into minibatches; each minibatch goes to one analyst call that returns a patch of changes in
 * the original's JSON format. A minibatch is sent as soon as its trajectories are finished,
 * while the rest of the batch is still rolling out. Which trajectories share a minibatch is
 * fixed by a seeded order, not by timing, so runs are reproducible.
 */
import path from 'node:path';
import type { LimitFunction } from 'p-limit';
import type { Trajectory } from '../../envs/types.ts';
import { carried } from '../../model/attribution.ts';
import { toJson, writeFileAtomic } from '../../run/atomic.ts';
import { pad3 } from '../../run/layout.ts';
import { ask, type OptimizerContext } from '../optimizer-model/ask.ts';
import { fill, loadPrompt } from '../../prompt-files.ts';
import { metaSkillBlock, outputFormat } from '../optimizer-model/prompts.ts';
import { analystReplySchema, itemsOf, type Patch, type StepBufferEntry } from '../../protocol/optimizer.ts';
import { isFailure } from '../optimizer-model/step-buffer.ts';
import { renderTrajectory, trajectoryView } from '../optimizer-model/trajectory-text.ts';
import { fileList, packageView } from '../optimizer-model/package-view.ts';
import type { PackageFiles } from '../../skill/package/package.ts';
import { packageUsage } from './package-usage.ts';
import { skillListing } from '../../skill/agent-skill.ts';
import type { StepTarget } from '../settings.ts';

export interface AnalystResult {
  source: 'failure' | 'success';
  index: number;
  /** Null when the analyst proposed nothing usable. */
  patch: Patch | null;
  /** Execution-lapse reminders for the appendix (skill-aware reflection). */
  notes: string[];
  /** The analyst's failure summary, as "type: description". */
  findings: string[];
  /** The call failed, or its reply stayed unusable (not the same as proposing nothing). */
  failed: boolean;
}

export interface ReflectSettings {
  ctx: OptimizerContext;
  skill: string;
  /** A package's other files: the analysts see them and may edit them. */
  files?: PackageFiles;
  /** Most changes one analyst may propose (the configured learning rate, or the description's budget; not the schedule). */
  budget: number;
  /** What the step edits: a description step's analysts propose the description (`set_description`) and nothing else. */
  target?: StepTarget;
  /** A description step may set `when_to_use` too: the target lists it after the description. */
  whenToUse?: boolean;
  minibatchSize: number;
  failureOnly: boolean;
  stepBuffer: StepBufferEntry[];
  stepBufferText: string;
  metaSkill: string;
  skillAware: boolean;
  appendixSource: 'both' | 'failure_only';
  analystGuide: string;
  /** Show an agent target's traces to the analysts (`model.trace_to_optimizer`). */
  traces: boolean;
  limit: LimitFunction;
  /** Where `minibatch_{fail|succ}_NNN.json` go. */
  patchesDir?: string;
}

/** Notes from an analyst reply: strings kept, objects give `note` or `content`. */
export function extractNotes(raw: unknown): string[] {
  if (typeof raw === 'string') return raw.trim() ? [raw.trim()] : [];
  if (!Array.isArray(raw)) return [];
  return raw
    .map((n) =>
      typeof n === 'string'
        ? n
        : n && typeof n === 'object'
          ? String((n as { note?: unknown; content?: unknown }).note ?? (n as { content?: unknown }).content ?? '')
          : '',
    )
    .map((n) => n.trim())
    .filter(Boolean);
}

function systemPrompt(s: ReflectSettings, source: 'failure' | 'success'): string {
  const base = fill(
    loadPrompt(source === 'failure' ? 'analyst_failure' : 'analyst_success', s.ctx.env),
    outputFormat(s.ctx.mode),
  ).trimEnd();
  const parts = [base];
  if (s.target === 'description') {
    parts.push(loadPrompt('formats/description').trim());
    if (s.whenToUse) parts.push(loadPrompt('formats/when_to_use').trim());
  } else if (s.files?.size && s.ctx.mode === 'patch') parts.push(loadPrompt('formats/patch_package').trim());
  if (s.analystGuide.trim()) parts.push(`## About these tasks\n${s.analystGuide.trim()}`);
  if (s.skillAware && s.ctx.mode !== 'full_rewrite_minibatch') {
    if (source === 'failure') parts.push(loadPrompt('skill_aware_failure').trim());
    else if (s.appendixSource !== 'failure_only') parts.push(loadPrompt('skill_aware_success').trim());
  }
  return parts.join('\n\n');
}

/** What the step may change and how much: the description alone, or the skill (with its package) within the budget. */
function budgetSections(s: ReflectSettings, batch: Trajectory[]): string[] {
  if (s.target === 'description')
    return [
      `## Current Description\n${skillListing(s.skill).description ?? '(none)'}`,
      ...(s.whenToUse ? [`## Current when_to_use\n${skillListing(s.skill).whenToUse ?? '(none)'}`] : []),
      `## Edits Budget\nThis step trains the description only: propose at most ${s.budget} \`set_description\` edit${s.budget === 1 ? '' : 's'}, and no other edit.`,
    ];
  const sections = s.files?.size ? [packageView(s.files, packageUsage(batch))] : [];
  if (s.ctx.mode === 'full_rewrite_minibatch')
    sections.push('## Update Format\nPropose one complete replacement skill; no edits or suggestions.');
  else {
    const label = s.ctx.mode === 'patch' ? 'Edits' : 'Suggestions';
    sections.push(`## ${label} Budget\nPropose at most ${s.budget} ${label.toLowerCase()}.`);
  }
  return sections;
}

function userMessage(s: ReflectSettings, source: 'failure' | 'success', batch: Trajectory[]): string {
  const sections = [`## Current Skill\n${s.skill}`, ...budgetSections(s, batch)];
  if (s.stepBufferText.trim()) sections.push(`## Previous Steps in This Epoch\n${s.stepBufferText}`);
  const meta = metaSkillBlock(s.metaSkill);
  if (meta) sections.push(meta);
  const title = source === 'failure' ? 'Failed Trajectories' : 'Successful Trajectories';
  sections.push(
    `## ${title} (${batch.length} total)\n${batch.map((t, i) => renderTrajectory(t, i + 1, { traces: s.traces })).join('\n\n---\n\n')}`,
  );
  return sections.join('\n\n');
}

/** One analyst call on one minibatch. */
export async function analyse(
  s: ReflectSettings,
  source: 'failure' | 'success',
  index: number,
  batch: Trajectory[],
): Promise<AnalystResult> {
  const mode = s.ctx.mode;
  const schema = analystReplySchema(mode, source);
  const reply = await ask(s.ctx, {
    purpose: 'analyst',
    system: systemPrompt(s, source),
    user: userMessage(s, source, batch),
    schema,
    schemaName: `analyst_${source}`,
    meta: {
      kind: 'analyst',
      source,
      mode,
      skill: s.skill,
      ...(s.files?.size ? { files: fileList(s.files) } : {}),
      budget: s.budget,
      ...(s.target === 'description' ? { target: 'description' } : {}),
      ...(s.target === 'description' && s.whenToUse ? { whenToUse: true } : {}),
      trajectories: batch.map(trajectoryView),
      stepBuffer: s.stepBuffer,
      metaSkill: s.metaSkill,
      skillAware: s.skillAware,
      analystGuide: s.analystGuide,
    },
    maxTokens: mode === 'full_rewrite_minibatch' ? Math.max(s.ctx.maxTokens, 64000) : undefined,
    during: `${source} minibatch ${index}`,
    fallback: 'this minibatch gives no patch',
  });
  if (!reply) return { source, index, patch: null, notes: [], findings: [], failed: true };
  let items = itemsOf(mode, reply.patch);
  if (mode !== 'full_rewrite_minibatch') items = items.slice(0, Math.max(0, s.budget));
  // Support is the number of trajectories actually read, not a count the model reports.
  items = items.map((item) => ({ ...item, source_type: source, support_count: batch.length }));
  const notesAllowed = s.skillAware && (source === 'failure' || s.appendixSource !== 'failure_only');
  const notes = notesAllowed ? extractNotes(reply.appendix_notes) : [];
  const findings = (
    (reply as { failure_summary?: { failure_type: string; description: string }[] }).failure_summary ?? []
  ).map((f) => (f.description ? `${f.failure_type}: ${f.description}` : f.failure_type));
  if (s.patchesDir) {
    const file = path.join(s.patchesDir, `minibatch_${source === 'failure' ? 'fail' : 'succ'}_${pad3(index)}.json`);
    writeFileAtomic(
      file,
      toJson({ ...reply, source_type: source, n_trajectories: batch.length, trajectory_ids: batch.map((t) => t.id) }),
      { durable: false },
    );
  }
  return {
    source,
    index,
    patch: items.length ? { reasoning: String(reply.patch?.reasoning ?? ''), items, source } : null,
    notes,
    findings,
    failed: false,
  };
}

/** A reflector's analyst calls, by the kind of trajectories they read. */
export interface AnalystCalls {
  failure: Promise<AnalystResult>[];
  success: Promise<AnalystResult>[];
}

/**
 * Forms minibatches as rollouts finish and starts each analyst call as soon as its minibatch is
 * complete. Trajectories are taken in a fixed (seeded) order: a minibatch holds the next M
 * failures (or successes) of that order, whatever the order of completion.
 */
export class Reflector {
  private readonly known: (Trajectory | undefined)[];
  private cursor = 0;
  private readonly open = { failure: [] as Trajectory[], success: [] as Trajectory[] };
  private readonly calls = { failure: [] as Promise<AnalystResult>[], success: [] as Promise<AnalystResult>[] };
  private closed = false;

  constructor(
    private readonly s: ReflectSettings,
    /** Indices of the batch's items in the order minibatches are formed. */
    private readonly order: number[],
  ) {
    this.known = new Array(order.length).fill(undefined);
  }

  /** Records a finished rollout (item `index` of the batch). */
  add(index: number, t: Trajectory): void {
    this.known[index] = t;
    while (this.cursor < this.order.length && this.known[this.order[this.cursor]!]) {
      this.take(this.known[this.order[this.cursor]!]!);
      this.cursor++;
    }
  }

  private take(t: Trajectory): void {
    if (t.error) return;
    const source = isFailure(t) ? 'failure' : 'success';
    if (source === 'success' && this.s.failureOnly) return;
    this.open[source].push(t);
    if (this.open[source].length >= this.s.minibatchSize) this.dispatch(source);
  }

  private dispatch(source: 'failure' | 'success'): void {
    const batch = this.open[source];
    if (batch.length === 0) return;
    this.open[source] = [];
    const index = this.calls[source].length;
    // Carried: the analyst's call is recorded as made for the work that fed this minibatch.
    const call = this.s.limit(carried(() => analyse(this.s, source, index, batch)));
    // Awaited by the step; if the step ends first (a stop, another failure), its rejection must not go unhandled.
    call.catch(() => {});
    this.calls[source].push(call);
  }

  /** After the last rollout: sends the partial minibatches and returns every call. */
  close(): AnalystCalls {
    if (!this.closed) {
      this.closed = true;
      this.dispatch('failure');
      this.dispatch('success');
    }
    return this.calls;
  }
}
