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

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
