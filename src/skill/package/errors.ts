/**
 * The one error a skill package that cannot be read ends with: a `UserError` (the input is wrong)
 * that says which rule it broke, so a caller can tell the cases apart without reading the text.
 */
import { UserError } from '../../errors.ts';

export const PACKAGE_PROBLEMS = [
  /** Nothing is at the place named, or no installed skill of that name. */
  'not-found',
  /** A folder or archive without `SKILL.md` at its root. */
  'no-skill-md',
  /** `SKILL.md` is not UTF-8 text. */
  'not-text',
  /** `SKILL.md`'s front matter breaks the Agent Skills rules. */
  'front-matter',
  /** A symlink that leaves the folder or leads nowhere, or a symlink entry in an archive. */
  'symlink',
  /** A file, the whole package or its number of files over the limits. */
  'too-large',
  /** A path that leaves the package (`..`, absolute) or is not a plain relative POSIX path. */
  'path',
  /** An archive entry that inflates past the size it declares, or entries that share their bytes. */
  'zip-bomb',
  /** Not a zip archive, or one this reader refuses (corrupt, encrypted, unknown compression). */
  'bad-archive',
] as const;
export type PackageProblem = (typeof PACKAGE_PROBLEMS)[number];

export class PackageError extends UserError {
  override name = 'PackageError';
  constructor(
    /** The rule broken. */
    readonly problem: PackageProblem,
    /** The file, folder or archive entry at fault, as the user named it. */
    readonly file: string,
    message: string,
  ) {
    super(message);
  }
}
