/**
 * The package check before the gate: a candidate whose edits broke its package (a script that no
 * longer compiles, JSON that no longer parses, a link to a file that is not there, front matter
 * an agent would refuse, a failing self-test) is never scored. What was already broken in the
 * package the step started from is not the candidate's doing and does not count against it, so
 * a public skill with one dead link still trains; the run says so once, at its start.
 */
import { packageHash, type SkillPackage } from '../../skill/package/package.ts';
import {
  type PackageCheck,
  type PackageValidation,
  validatePackage,
  type ValidateOptions,
} from '../../skill/package/validate.ts';

const key = (c: PackageCheck) => `${c.check}\0${c.file ?? ''}`;

/** The checks the candidate fails that its parent passed (or did not have). */
export function brokenByEdits(parent: PackageValidation, candidate: PackageValidation): PackageCheck[] {
  const failing = new Set(parent.checks.filter((c) => !c.ok).map(key));
  return candidate.checks.filter((c) => !c.ok && !failing.has(key(c)));
}

/** The run's package checks, each package checked once (by its hash). */
export class PackageChecker {
  private readonly done = new Map<string, Promise<PackageValidation>>();

  constructor(private readonly options: Omit<ValidateOptions, 'signal'> = {}) {}

  validate(pkg: SkillPackage, signal?: AbortSignal): Promise<PackageValidation> {
    const hash = packageHash(pkg);
    let checking = this.done.get(hash);
    if (!checking) {
      checking = validatePackage(pkg, { ...this.options, ...(signal ? { signal } : {}) });
      // A stopped check is checked again next time.
      checking.catch(() => this.done.delete(hash));
      this.done.set(hash, checking);
    }
    return checking;
  }
}
