/**
 * Errors that end a command. `UserError` means the input was wrong (bad config, missing file,
 * bad flag): the CLI exits with code 2. Anything else that ends a run exits with code 1.
 */
export class UserError extends Error {
  override name = 'UserError';
}

/** A problem found in a configuration file, with where it came from. */
export class ConfigError extends UserError {
  override name = 'ConfigError';
  constructor(
    message: string,
    readonly file?: string,
    readonly key?: string,
  ) {
    super(message);
  }
}

/** The user stopped the command (Ctrl-C or SIGTERM); what it did is saved and reported. */
export class Interrupted extends Error {
  override name = 'Interrupted';
  /** The shell's code for a process ended by SIGINT. */
  static readonly exitCode = 130;
}

/** A command that ends with its own exit code (after saying why, when `message` is set). */
export class CommandExit extends Error {
  override name = 'CommandExit';
  constructor(
    readonly code: number,
    message = '',
  ) {
    super(message);
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Said when a registry is empty: the composition root that fills them was not imported. */
export const NOTHING_REGISTERED =
  "no environment or backend is registered: import 'src/builtins.ts' first (the CLI and the library's index.ts do)";
