/**
 * The dashboard's actions: list the configs, show one resolved with the form's overrides and
 * its dry-run plan, check the endpoints, launch a run, stop, resume (with a raised budget) and
 * evaluate one. All under `/api/action/`, behind the access guard (access.ts); the token for the
 * page is at `GET /api/actions`. Every process is an ordinary `skillopt` command (jobs.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import { defaultOutRoot } from '../../run/runs-root.ts';
import { loadConfig, type LoadedConfig } from '../../config/load.ts';
import { redactText } from '../../config/redact.ts';
import { BudgetSchema, RoleSchema } from '../../config/schema.ts';
import { UserError, errorMessage } from '../../errors.ts';
import { runningOwner } from '../../run/lock.ts';
import { resumeArgs, resumeCommand, shownPath } from '../../run/resume-command.ts';
import { EVALS_DIR } from '../evals.ts';
import { readTextCapped } from '../file-cache.ts';
import { isRunDir, type Roots, type RunLocation } from '../roots.ts';
import type { RunReader } from '../run-reader.ts';
import { HttpError, isFileInside, resolveInside } from '../safe-path.ts';
import type { ActionAccess } from './access.ts';
import type { ConfigRoots } from './config-roots.ts';
import { BUDGET_LIMITS, configLines, FORM_FIELDS, formValues, resolvedBase } from './config-view.ts';
import type { JobInfo, Jobs } from './jobs.ts';
import { preflightRun, type PreflightOptions } from './preflight.ts';
import { budgetStop, runInvocation } from './run-command.ts';

export interface ActionsContext {
  access: ActionAccess;
  configs: ConfigRoots;
  jobs: Jobs;
  roots: Roots;
  readerFor(loc: RunLocation): RunReader;
  preflight?: PreflightOptions;
}

/** The states a run is resumed from. */
const RESUMABLE = ['stopped', 'interrupted', 'failed'];

/** How deep under a run root a run is still found (roots.ts looks three levels down). */
const MAX_RUN_DEPTH = 3;

const OutSchema = z.object({ root: z.number().int().nonnegative(), path: z.string().min(1) }).strict();
const ConfigBody = z
  .object({ config: z.string(), overrides: z.array(z.string()).default([]), out: OutSchema.optional() })
  .strict();
const StopBody = z.union([z.object({ run: z.string() }).strict(), z.object({ job: z.string() }).strict()]);
const ResumeBody = z.object({ run: z.string(), budget: z.record(z.string(), z.number()).default({}) }).strict();
const EvalBody = z
  .object({
    run: z.string(),
    split: z.enum(['test', 'val', 'train', 'all']).default('test'),
    targets: z.array(z.string()).default([]),
    repeats: z.number().int().min(1).max(100).default(1),
    compareInitial: z.boolean().default(false),
  })
  .strict();

export async function body<T>(c: Context, schema: z.ZodType<T>): Promise<T> {
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch {
    throw new HttpError(400, 'the request body must be JSON');
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new HttpError(400, `${issue.path.join('.') || 'body'}: ${issue.message}`);
}

const stamp = (env: string) => path.basename(defaultOutRoot(env));

export function mountActions(app: Hono, ctx: ActionsContext): void {
  const { access, configs, jobs, roots } = ctx;
  /** SIGINTs sent to runs through their lock (runs this server did not start). */
  const lockInterrupts = new Map<string, number>();

  app.get('/api/actions', (c) => c.json(access.describe(c)));
  app.use('/api/action/*', access.guard());

  const load = (file: string, overrides: string[]): { loaded?: LoadedConfig; error?: string } => {
    try {
      // The form's overrides run as `--set` items: their errors say so, as the CLI's do.
      return { loaded: loadConfig(file, { overrides: overrides.map((item) => ({ item, source: '--set' })) }) };
    } catch (err) {
      if (err instanceof UserError) return { error: err.message };
      throw err;
    }
  };

  /** The run directory a launch writes: the one asked for inside a run root, else `<first root>/<env>/<timestamp>`. */
  const outFor = (out: z.infer<typeof OutSchema> | undefined, env: string): { dir: string; id: string } => {
    if (out) {
      const root = roots.roots[out.root];
      if (!root) throw new HttpError(400, `out.root: no run root number ${out.root} (there are ${roots.roots.length})`);
      const rel = out.path
        .replace(/\\/g, '/')
        .split('/')
        .filter((p) => p && p !== '.')
        .join('/');
      const dir = resolveInside(root.real, rel, 'out.path', `the run root ${root.given}`);
      if (rel.split('/').length > MAX_RUN_DEPTH)
        throw new HttpError(
          400,
          `out.path: ${rel} is more than ${MAX_RUN_DEPTH} levels under ${root.given}, where the dashboard would not find the run`,
        );
      if (fs.existsSync(dir) && isRunDir(dir))
        throw new HttpError(
          409,
          `out.path: ${rel} under ${root.given} already holds a run; resume it from its page, or choose another directory`,
        );
      return { dir, id: `${root.index}/${rel}` };
    }
    const root = roots.roots[0]!;
    const base = `${env || 'run'}/${stamp(env)}`;
    let rel = base;
    for (let n = 2; fs.existsSync(path.join(root.real, rel)) || jobs.list(path.join(root.real, rel)).length > 0; n++)
      rel = `${base}-${n}`;
    return { dir: path.join(root.real, rel), id: `${root.index}/${rel}` };
  };

  const trainArgs = (file: string, outDir: string, overrides: string[]) => [
    'train',
    '--config',
    shownPath(file, jobs.cwd),
    '--out',
    shownPath(outDir, jobs.cwd),
    ...overrides.flatMap((o) => ['--set', o]),
  ];

  app.get('/api/action/configs', async (c) => {
    const { backendNames } = await import('../../model/registry.ts');
    const { configs: list, problems } = configs.list();
    return c.json({
      roots: configs.roots.map((r) => r.given),
      configs: list,
      problems,
      runRoots: roots.roots.map((r) => r.given),
      fields: FORM_FIELDS,
      backends: backendNames(),
    });
  });

  // The config resolved with the overrides, its keys marked, the form's values, the command and the dry-run plan.
  app.post('/api/action/check', async (c) => {
    const req = await body(c, ConfigBody);
    const { file, root } = configs.resolve(req.config);
    // The file as written, with anything shaped like a key, or a secret variable's value, masked.
    const read = readTextCapped(root.real, file, 256 << 10);
    const source = read && { ...read, text: redactText(read.text) };
    const { loaded, error } = load(file, req.overrides);
    const out = outFor(req.out, loaded?.config.env.name ?? path.basename(path.dirname(file)));
    const command = jobs.command(trainArgs(file, out.dir, req.overrides));
    if (!loaded) return c.json({ valid: false, error, command, source: source?.text });
    const { base, problem } = resolvedBase(file);
    let plan: unknown;
    let planError: string | undefined;
    try {
      const { planInputFor, planRun } = await import('../../app/plan.ts');
      plan = planRun(await planInputFor(loaded));
    } catch (err) {
      planError = errorMessage(err);
    }
    return c.json({
      valid: true,
      command,
      run: out.id,
      source: source?.text,
      lines: configLines(loaded, base, req.overrides),
      baseProblem: problem,
      files: loaded.files.map((f) => shownPath(f, jobs.cwd)),
      form: formValues(loaded.config),
      warnings: loaded.warnings,
      plan,
      planError,
    });
  });

  app.post('/api/action/preflight', async (c) => {
    const req = await body(c, ConfigBody);
    const { loaded, error } = load(configs.resolve(req.config).file, req.overrides);
    if (!loaded) throw new HttpError(400, error!);
    return c.json({ preflight: await preflightRun(loaded, ctx.preflight) });
  });

  // Checks first; nothing starts unless every check passes.
  app.post('/api/action/launch', async (c) => {
    const req = await body(c, ConfigBody);
    const { file } = configs.resolve(req.config);
    const { loaded, error } = load(file, req.overrides);
    if (!loaded) throw new HttpError(400, error!);
    const preflight = await preflightRun(loaded, ctx.preflight);
    if (!preflight.ok) return c.json({ launched: false, preflight });
    const out = outFor(req.out, loaded.config.env.name);
    const job = jobs.start('train', trainArgs(file, out.dir, req.overrides), { runDir: out.dir });
    return c.json({ launched: true, run: out.id, job, preflight });
  });

  /** The live process of a run: a job of this server, else the owner of its lock. */
  const liveProcess = (loc: RunLocation): { job?: JobInfo; pid?: number } | undefined => {
    const job = jobs.running(loc.dir, ['train', 'resume']);
    if (job) return { job, pid: job.pid };
    const owner = runningOwner(ctx.readerFor(loc).lockContent());
    if (owner) return { pid: owner.pid };
    lockInterrupts.delete(loc.dir);
    return undefined;
  };

  app.get('/api/action/run', (c) => {
    const loc = roots.resolve(c.req.query('run'));
    const reader = ctx.readerFor(loc);
    const live = liveProcess(loc);
    const status = reader.overview().status;
    const inv = runInvocation(reader, jobs.program, jobs.cwd);
    const bestSkill = isFileInside(reader.run.root, reader.run.bestSkill);
    const resumable = RESUMABLE.includes(status);
    return c.json({
      running: Boolean(live),
      pid: live?.pid,
      stopping: live ? (live.job?.interrupts ?? lockInterrupts.get(loc.dir) ?? 0) > 0 : false,
      canResume: !live && resumable && inv.ok && !jobs.running(loc.dir, ['eval']),
      resumeProblem: !live && resumable && !inv.ok ? inv.reason : undefined,
      resumeCommand: inv.ok ? resumeCommand(inv.inv, loc.dir, [], jobs.cwd) : undefined,
      budget: reader.budget(),
      budgetStop: budgetStop(reader),
      canEvaluate: !live && bestSkill && inv.ok,
      evalProblem: live
        ? 'the run is training: evaluate it once it has stopped or finished'
        : !bestSkill
          ? 'the run has no best_skill.md yet'
          : inv.ok
            ? undefined
            : inv.reason,
      jobs: jobs.list(loc.dir),
    });
  });

  app.get('/api/action/jobs', (c) => {
    const run = c.req.query('run');
    return c.json({ jobs: jobs.list(run ? roots.resolve(run).dir : undefined) });
  });

  // SIGINT: the run stops at a safe point, as on Ctrl-C; a second one exits at once.
  app.post('/api/action/stop', async (c) => {
    const req = await body(c, StopBody);
    if ('job' in req) {
      const job = jobs.get(req.job);
      if (!job) throw new HttpError(404, `no job ${req.job}`);
      if (job.state !== 'running') throw new HttpError(409, `job ${req.job} has already ended`);
      return c.json({ job: jobs.interrupt(job.id) });
    }
    const loc = roots.resolve(req.run);
    const live = liveProcess(loc);
    if (!live) throw new HttpError(409, 'this run is not running: no process on this machine holds its lock');
    if (live.job) return c.json({ job: jobs.interrupt(live.job.id) });
    process.kill(live.pid!, 'SIGINT');
    lockInterrupts.set(loc.dir, (lockInterrupts.get(loc.dir) ?? 0) + 1);
    return c.json({ pid: live.pid });
  });

  // `train --resume DIR` with the run's config and overrides; a budget raise replaces those limits.
  app.post('/api/action/resume', async (c) => {
    const req = await body(c, ResumeBody);
    const loc = roots.resolve(req.run);
    if (liveProcess(loc)) throw new HttpError(409, 'this run is running; stop it first');
    if (jobs.running(loc.dir, ['eval']))
      throw new HttpError(409, 'an evaluation of this run is running; resume it once the evaluation has ended');
    const reader = ctx.readerFor(loc);
    const status = reader.overview().status;
    if (!RESUMABLE.includes(status)) throw new HttpError(409, `a ${status} run is not resumed`);
    const inv = runInvocation(reader, jobs.program, jobs.cwd);
    if (!inv.ok) throw new HttpError(409, `this run cannot be resumed from the dashboard: ${inv.reason}`);
    const shape = BudgetSchema.shape as Record<string, z.ZodType>;
    const raised = Object.entries(req.budget).map(([k, v]) => {
      if (!BUDGET_LIMITS.includes(k))
        throw new HttpError(400, `budget.${k}: not a budget limit (they are ${BUDGET_LIMITS.join(', ')})`);
      const check = shape[k]!.safeParse(v);
      if (!check.success) throw new HttpError(400, `budget.${k}: ${check.error.issues[0]!.message}`);
      return `budget.${k}=${v}`;
    });
    const job = jobs.start('resume', resumeArgs(inv.inv, loc.dir, raised, jobs.cwd), { runDir: loc.dir });
    return c.json({ job });
  });

  // `skillopt eval` of the run's best skill (and its initial one), into the run's evals/.
  app.post('/api/action/eval', async (c) => {
    const req = await body(c, EvalBody);
    const loc = roots.resolve(req.run);
    if (liveProcess(loc)) throw new HttpError(409, 'the run is training: evaluate it once it has stopped or finished');
    const reader = ctx.readerFor(loc);
    const run = reader.run;
    if (!isFileInside(run.root, run.bestSkill)) throw new HttpError(409, 'the run has no best_skill.md yet');
    const inv = runInvocation(reader, jobs.program, jobs.cwd);
    if (!inv.ok) throw new HttpError(409, `this run cannot be evaluated from the dashboard: ${inv.reason}`);
    const { targetRole } = await import('../../app/eval/evaluate.ts');
    const targets = req.targets.map((t) => t.trim()).filter(Boolean);
    for (const t of targets) {
      try {
        targetRole(t, RoleSchema.parse({}));
      } catch (err) {
        throw new HttpError(400, errorMessage(err));
      }
    }
    const skills = [
      ...(req.compareInitial && isFileInside(run.root, run.skill(0)) ? [run.skill(0)] : []),
      run.bestSkill,
    ];
    const name = `${stamp('')}_${req.split}`;
    let outDir = run.path(EVALS_DIR, name);
    for (let n = 2; fs.existsSync(outDir); n++) outDir = run.path(EVALS_DIR, `${name}-${n}`);
    const args = [
      'eval',
      '--config',
      inv.inv.config,
      ...inv.inv.overrides.flatMap((o) => ['--set', o]),
      ...skills.flatMap((s) => ['--skill', shownPath(s, jobs.cwd)]),
      '--split',
      req.split,
      ...targets.flatMap((t) => ['--target', t]),
      '--repeats',
      String(req.repeats),
      '--out',
      shownPath(outDir, jobs.cwd),
    ];
    return c.json({ job: jobs.start('eval', args, { runDir: loc.dir, outDir }) });
  });
}
