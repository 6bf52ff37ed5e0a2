/**
 * The actions on a run that exists: what may be done with it now (`GET run`), the jobs, stop,
 * resume (with a raised budget) and evaluate. Mounted under `/api/action/`, behind the guard.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Hono } from 'hono';
import { z } from 'zod';
import { BudgetSchema, RoleSchema } from '../../config/schema.ts';
import { errorMessage } from '../../errors.ts';
import { runningOwner } from '../../run/lock.ts';
import { resumeArgs, resumeCommand, shownPath } from '../../run/resume-command.ts';
import { EVALS_DIR } from '../runs/evals.ts';
import type { RunLocation } from '../files/roots.ts';
import { HttpError, isFileInside } from '../files/safe-path.ts';
import { BUDGET_LIMITS } from './config-view.ts';
import type { JobInfo } from './jobs.ts';
import { stamp } from './out-dir.ts';
import { isRunOf } from './process-check.ts';
import { body } from './request.ts';
import type { ActionsContext } from './context.ts';
import { budgetStop, runInvocation } from './run-command.ts';

/** The states a run is resumed from. */
const RESUMABLE = ['stopped', 'interrupted', 'failed'];

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

/** A new directory of its own for one evaluation: made here, so that two clicks never share one. */
function reserveEvalDir(evalsDir: string, name: string): string {
  fs.mkdirSync(evalsDir, { recursive: true });
  for (let n = 1; ; n++) {
    const dir = path.join(evalsDir, n === 1 ? name : `${name}-${n}`);
    try {
      fs.mkdirSync(dir);
      return dir;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

export function runRoutes(ctx: ActionsContext): Hono {
  const { configs, jobs, roots } = ctx;
  /** SIGINTs sent to runs through their lock (runs this server did not start). */
  const lockInterrupts = new Map<string, number>();
  const routes = new Hono();

  /** The live process of a run: a job of this server, else the owner of its lock. */
  const liveProcess = (loc: RunLocation): { job?: JobInfo; pid?: number } | undefined => {
    const job = jobs.running(loc.dir, ['train', 'resume']);
    if (job) return { job, pid: job.pid };
    const owner = runningOwner(ctx.readerFor(loc).lockContent());
    if (owner) return { pid: owner.pid };
    lockInterrupts.delete(loc.dir);
    return undefined;
  };

  const invocation = (loc: RunLocation) => runInvocation(ctx.readerFor(loc), jobs.program, jobs.cwd, configs);

  routes.get('/run', (c) => {
    const loc = roots.resolve(c.req.query('run'));
    const reader = ctx.readerFor(loc);
    const live = liveProcess(loc);
    const status = reader.overview().status;
    const inv = invocation(loc);
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

  routes.get('/jobs', (c) => {
    const run = c.req.query('run');
    return c.json({ jobs: jobs.list(run ? roots.resolve(run).dir : undefined) });
  });

  // SIGINT: the run stops at a safe point, as on Ctrl-C; a second one exits at once.
  routes.post('/stop', async (c) => {
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
    // A lock is a file anyone with write access to the run root can forge: the pid it names is
    // signalled only when that process is a skillopt training of this directory.
    const check = isRunOf(live.pid!, loc.dir);
    if (!check.ok)
      throw new HttpError(
        409,
        `not stopped: the run lock names process ${live.pid}, which is not a skillopt training of this run (${check.why})`,
      );
    process.kill(live.pid!, 'SIGINT');
    lockInterrupts.set(loc.dir, (lockInterrupts.get(loc.dir) ?? 0) + 1);
    return c.json({ pid: live.pid });
  });

  // `train --resume DIR` with the run's config and overrides; a budget raise replaces those limits.
  routes.post('/resume', async (c) => {
    const req = await body(c, ResumeBody);
    const loc = roots.resolve(req.run);
    if (liveProcess(loc)) throw new HttpError(409, 'this run is running; stop it first');
    if (jobs.running(loc.dir, ['eval']))
      throw new HttpError(409, 'an evaluation of this run is running; resume it once the evaluation has ended');
    const status = ctx.readerFor(loc).overview().status;
    if (!RESUMABLE.includes(status)) throw new HttpError(409, `a ${status} run is not resumed`);
    const inv = invocation(loc);
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

  // `skillopt eval` of the run's best skill (and its initial one), into a new directory of the run's evals/.
  routes.post('/eval', async (c) => {
    const req = await body(c, EvalBody);
    const loc = roots.resolve(req.run);
    if (liveProcess(loc)) throw new HttpError(409, 'the run is training: evaluate it once it has stopped or finished');
    const run = ctx.readerFor(loc).run;
    if (!isFileInside(run.root, run.bestSkill)) throw new HttpError(409, 'the run has no best_skill.md yet');
    const inv = invocation(loc);
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
    const outDir = reserveEvalDir(run.path(EVALS_DIR), `${stamp('')}_${req.split}`);
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

  return routes;
}
