/** Rollouts on workers (`run.queue`), loaded only by the runs that use them (BullMQ and Redis are not small). */
import type { LoadedConfig } from '../config/load.ts';
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
