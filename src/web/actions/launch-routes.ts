/**
 * Starting a new run: list the configs, show one resolved with the form's overrides, its command
 * and its dry-run plan (`check`), check the endpoints (`preflight`) and launch. The check picks the
 * run directory and says it; the page sends it back with the launch, so what runs is what it showed.
 * Mounted under `/api/action/`, behind the guard.
 */
import path from 'node:path';
import { Hono } from 'hono';
import { z } from 'zod';
import { redactText } from '../../config/redact.ts';
import { errorMessage } from '../../errors.ts';
import { shownPath } from '../../run/resume-command.ts';
import { readTextCapped } from '../files/file-cache.ts';
import { HttpError } from '../files/safe-path.ts';
import { configLines, FORM_FIELDS, formValues, resolvedBase } from './config-view.ts';
import { OutSchema, outDirFor } from './out-dir.ts';
import { preflightRun } from './preflight.ts';
import { body, loadWithOverrides } from './request.ts';
import type { ActionsContext } from './context.ts';

const ConfigBody = z
  .object({ config: z.string(), overrides: z.array(z.string()).default([]), out: OutSchema.optional() })
  .strict();

export function launchRoutes(ctx: ActionsContext): Hono {
  const { configs, jobs, roots } = ctx;
  const routes = new Hono();
  const taken = (dir: string) => jobs.list(dir).some((j) => j.state === 'running');
  const trainArgs = (file: string, outDir: string, overrides: string[]) => [
    'train',
    '--config',
    shownPath(file, jobs.cwd),
    '--out',
    shownPath(outDir, jobs.cwd),
    ...overrides.flatMap((o) => ['--set', o]),
  ];

  routes.get('/configs', async (c) => {
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

  // The config resolved with the overrides, its keys marked, the form's values, the command, the run directory and the dry-run plan.
  routes.post('/check', async (c) => {
    const req = await body(c, ConfigBody);
    const { file, root } = configs.resolve(req.config);
    // The file as written, with anything shaped like a key, or a secret variable's value, masked.
    const read = readTextCapped(root.real, file, 256 << 10);
    const source = read && { ...read, text: redactText(read.text) };
    const { loaded, error } = loadWithOverrides(file, req.overrides);
    const out = outDirFor(roots, req.out, loaded?.config.env.name ?? path.basename(path.dirname(file)), taken);
    const command = jobs.command(trainArgs(file, out.dir, req.overrides));
    if (!loaded) return c.json({ valid: false, error, command, out: out.out, source: source?.text });
    const { base, problem } = resolvedBase(file);
    let plan: unknown;
    let planError: string | undefined;
    try {
      const [{ planRun }, { planInputFor }] = await Promise.all([
        import('../../app/plan.ts'),
        import('../../app/plan-input.ts'),
      ]);
      plan = planRun(await planInputFor(loaded));
    } catch (err) {
      planError = errorMessage(err);
    }
    return c.json({
      valid: true,
      command,
      run: out.id,
      out: out.out,
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

  routes.post('/preflight', async (c) => {
    const req = await body(c, ConfigBody);
    const { loaded, error } = loadWithOverrides(configs.resolve(req.config).file, req.overrides);
    if (!loaded) throw new HttpError(400, error!);
    return c.json({ preflight: await preflightRun(loaded, ctx.preflight) });
  });

  // Checks first; nothing starts unless every check passes.
  routes.post('/launch', async (c) => {
    const req = await body(c, ConfigBody);
    const { file } = configs.resolve(req.config);
    const { loaded, error } = loadWithOverrides(file, req.overrides);
    if (!loaded) throw new HttpError(400, error!);
    const out = outDirFor(roots, req.out, loaded.config.env.name, taken);
    const preflight = await preflightRun(loaded, ctx.preflight);
    if (!preflight.ok) return c.json({ launched: false, preflight });
    const job = jobs.start('train', trainArgs(file, out.dir, req.overrides), { runDir: out.dir });
    return c.json({ launched: true, run: out.id, job, preflight });
  });

  return routes;
}
