/** The files of one step under `steps/step_NNNN/` (the original's layout), written as the stages finish. */
import path from 'node:path';
import type { RunDir } from '../../run/layout.ts';

export class StepFiles {
  readonly root: string;

  constructor(
    private readonly dir: RunDir,
    step: number,
    /** Batches of the step: with accumulation, each has its own `batch_N/` directory. */
    private readonly batches: number,
  ) {
    this.root = dir.step(step);
  }

  /** Where batch `a`'s rollout and patches go. */
  batch(a: number): string {
    return this.batches > 1 ? path.join(this.root, `batch_${a}`) : this.root;
  }

  write(name: string, value: unknown): void {
    this.dir.writeArtifact(path.join(this.root, name), value);
  }
}
