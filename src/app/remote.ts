/** Rollouts on workers (`run.queue`), loaded only by the runs that use them (BullMQ and Redis are not small). */
import type { LoadedConfig } from '../config/load.ts';
import type { Config } from '../config/schema.ts';
import { UserError } from '../errors.ts';
import type { RemoteEnvOptions, RemoteRollouts } from '../queue/remote-env.ts';

export async function remoteRollouts(
  o: Omit<RemoteEnvOptions, 'spec'> & { loaded: LoadedConfig },
): Promise<RemoteRollouts> {
  const [{ RemoteRollouts }, { runSpecOf }] = await Promise.all([
    import('../queue/remote-env.ts'),
    import('../queue/run-spec.ts'),
  ]);
  const { loaded, ...rest } = o;
  return new RemoteRollouts({ ...rest, spec: runSpecOf(loaded) });
}

/**
 * What workers cannot take, refused before anything is paid: a package skill (its files do not
 * travel to workers yet) and batch pricing (a worker makes its calls live, one rollout at a time).
 * `fix` ends the message: what to run instead.
 */
export function refuseOnWorkers(config: Config, o: { packageFile?: string; fix: string }): void {
  if (!config.run.queue) return;
  if (o.packageFile)
    throw new UserError(
      `run.queue: rollouts on workers take single-document skills; ${o.packageFile} is a package (its files do not travel to workers yet). ${o.fix} without run.queue`,
    );
  const batched = (['target', 'judge'] as const).find((role) => config.model[role].batch);
  if (batched)
    throw new UserError(
      `model.${batched}.batch and run.queue are both set: workers make their calls live, one rollout at a time, so nothing would go as a batch; ${o.fix} without run.queue, or set model.${batched}.batch: false`,
    );
}
