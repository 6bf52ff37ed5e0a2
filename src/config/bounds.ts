/**
 * The bounds of the config's counts, shared by its schemas: far above what any run needs, low
 * enough that a slip of the keyboard (`num_epochs: 99999999999`) is refused instead of starting a
 * run, or a plan, that never ends.
 */
/**
 * The message of a count over its bound. Made when a value is refused, not when the schemas are
 * built: the first number formatted for a locale sets up ICU's formatting, some 25 ms of CPU that
 * every command loading the config would otherwise pay at start.
 */
export const atMost = (max: number) => ({ error: () => `expected at most ${max.toLocaleString('en-US')}` });
export const THOUSAND = 1_000;
export const TEN_THOUSAND = 10_000;
export const MILLION = 1_000_000;
export const HUNDRED_MILLION = 100_000_000;
export const DAY_S = 86_400;
