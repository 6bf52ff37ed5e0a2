/**
 * What the commands share: config options. Light to import (`--help` loads it); loading a
 * config is in `load-config.ts`, which the actions import when they run.
 */
import { Option, type Command } from 'commander';
import { COMMON_FLAGS, flagValue, ORIGINAL_FLAGS } from '../config/original-flags.ts';

/** `--cfg-options a=1 b=2` and `--set a=1` collect into one list, in order. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export interface ConfigOptions {
  config: string;
  cfgOptions?: string[];
  set?: string[];
  acceptUnreviewed?: boolean;
}

/** `--accept-unreviewed`: a trigger eval set's drafted queries are run as they are (`env.accept_unreviewed`). */
export const ACCEPT_UNREVIEWED = [
  '--accept-unreviewed',
  'run a trigger eval set that still holds drafted queries no one reviewed ("draft": true)',
] as const;

/** The `--set` items the option stands for, added to the command's own. */
export function withUnreviewed(opts: ConfigOptions): void {
  if (opts.acceptUnreviewed) opts.set = [...(opts.set ?? []), 'env.accept_unreviewed=true'];
}

/** Examples of `--cfg-options`, shown in `--help` (a test loads each one). */
export const CFG_OPTIONS_EXAMPLE = 'train.batch_size=8 evaluation.use_gate=false evaluation.leading_words=[MUST,NEVER]';

const ORIGINAL_FLAGS_HELP = `
The original SkillOpt's flat flags work too, each setting one config key after --cfg-options
(e.g. --batch_size 8, --edit_budget 2, --target_model gpt-5.5, --out_root runs/x):
  ${wrap(COMMON_FLAGS.map((f) => `--${f}`).join(' '), 88, '  ')}
  and the original's other flat keys: --azure_openai_*, --qwen_chat_*, --minimax_*, --max_turns, ...`;

function wrap(text: string, width: number, indent: string): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + word.length + 1 > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines.join(`\n${indent}`);
}

export function addConfigOptions(cmd: Command): Command {
  // Checked before the action rather than by commander's required option, which is checked
  // first: a misspelt --confg would be reported as a missing --config instead of by its name.
  cmd
    .option('-c, --config <file>', 'YAML config file, required (may inherit others through _base_)')
    .hook('preAction', (command) => {
      if (typeof command.opts().config !== 'string')
        command.error("error: required option '-c, --config <file>' not specified", {
          code: 'commander.missingMandatoryOptionValue',
        });
    })
    .option(
      '--cfg-options <key=value...>',
      `override config keys; lists and mappings as [a,b] or {k: v}, e.g. ${CFG_OPTIONS_EXAMPLE}`,
    )
    .option('--set <key=value>', 'override one config key (repeatable; same as --cfg-options)', collect);
  for (const flag of ORIGINAL_FLAGS) cmd.addOption(new Option(`--${flag} <value>`).hideHelp());
  return cmd.addHelpText('after', ORIGINAL_FLAGS_HELP);
}

/** The original's flat flags given on the command line, in a stable order, as the original reads them. */
export function originalFlagsOf(opts: object): [string, string][] {
  const given = opts as Record<string, unknown>;
  return ORIGINAL_FLAGS.filter((f) => typeof given[f] === 'string').map((f) => [f, flagValue(f, given[f] as string)]);
}
