/**
 * Every example a user is shown is run: the `--cfg-options` examples of `--help` and of the
 * README and the guides in docs/ are loaded and validated; every `node bin/skillopt.js …` line of
 * them is parsed by the real command-line program, and for `train` and `eval` its config is loaded
 * (commands that need a server or data stop there).
 */
import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { Command } from 'commander';
import { loadConfig } from '../../src/config/load.ts';
import { CFG_OPTIONS_EXAMPLE, type ConfigOptions } from '../../src/cli/common.ts';
import { loadFromOptions } from '../../src/cli/load-config.ts';
import { buildProgram } from '../../src/cli/main.ts';
import { RUNS_ROOT } from '../../src/run/runs-root.ts';
import { ROOT } from '../helpers/cli.ts';

/** The pages a user reads: the README, bench/README.md and every page under docs/. */
const PAGES = [
  'README.md',
  'bench/README.md',
  ...(fs.readdirSync(path.join(ROOT, 'docs'), { recursive: true }) as string[])
    .filter((f) => f.endsWith('.md'))
    .map((f) => path.join('docs', f)),
];
const README = PAGES.map((f) => fs.readFileSync(path.join(ROOT, f), 'utf8')).join('\n');
const SIM = path.join(ROOT, 'configs/sim/default.yaml');

interface Captured {
  command: string;
  opts: Record<string, unknown>;
  args: unknown[];
}

/** The real program, its actions replaced by a capture of what they were given. */
function capturingProgram(): { program: Command; captured: Captured[]; help: string[] } {
  const program = buildProgram();
  const captured: Captured[] = [];
  const help: string[] = [];
  const visit = (cmd: Command, name: string) => {
    cmd.configureOutput({ writeOut: (s) => help.push(s), writeErr: (s) => help.push(s) });
    cmd.exitOverride();
    if (cmd.commands.length === 0) {
      cmd.action((...args: unknown[]) => {
        captured.push({ command: name, opts: cmd.opts(), args: args.slice(0, -2) });
      });
    }
    for (const sub of cmd.commands) visit(sub, `${name} ${sub.name()}`.trim());
  };
  visit(program, '');
  return { program, captured, help };
}

async function run(argv: string[]): Promise<Captured> {
  const { program, captured } = capturingProgram();
  await program.parseAsync(['node', 'skillopt', ...argv]);
  assert.equal(captured.length, 1, argv.join(' '));
  return captured[0]!;
}

async function helpOf(command: string): Promise<string> {
  const { program, help } = capturingProgram();
  await assert.rejects(
    program.parseAsync(['node', 'skillopt', command, '--help']),
    (e: { code?: string }) => e.code === 'commander.helpDisplayed',
  );
  return help.join('');
}

/** `key=value` tokens of an example text (placeholders such as k=v left out). */
function overrideTokens(text: string): string[] {
  return (text.match(/(?<![\w-])[a-z_]+(?:\.[a-z_]+)*=\S+/g) ?? [])
    .filter((t) => !/^(k|key)=/.test(t))
    .map((t) => t.replace(/[`),.;]+$/, ''));
}

/** How the docs run the program: node on its script, which starts at once (npx adds seconds). */
const PROGRAM = 'node bin/skillopt.js';

/** The `node bin/skillopt.js …` command lines of the docs' shell blocks (continuations joined, comments dropped), with the variables its `export` lines set. */
function readmeCommands(): { argv: string[]; env: Record<string, string>; line: string }[] {
  const out: { argv: string[]; env: Record<string, string>; line: string }[] = [];
  for (const block of README.matchAll(/```sh\n([\s\S]*?)```/g)) {
    const env: Record<string, string> = {};
    const lines = block[1]!.replace(/\\\n\s*/g, ' ').split('\n');
    for (const raw of lines) {
      const line = raw.replace(/\s+#.*$/, '').trim();
      if (line.startsWith('export ')) {
        for (const [, k, v] of line.slice(7).matchAll(/(\w+)=(\S+)/g)) env[k!] = v!;
      }
      if (!line.startsWith(`${PROGRAM} `)) continue;
      assert.ok(!/["'$`]/.test(line), `a documented command the test cannot split: ${line}`);
      out.push({ argv: line.split(/\s+/).slice(PROGRAM.split(' ').length), env, line });
    }
  }
  return out;
}

describe('the examples in --help', () => {
  for (const command of ['train', 'eval']) {
    it(`${command} --help: every --cfg-options example is a key the config accepts, and the original's flags are one compact group`, async () => {
      const help = await helpOf(command);
      const tokens = overrideTokens(help);
      assert.ok(tokens.length >= 3, `examples found: ${tokens.join(' ')}`);
      assert.deepEqual(tokens, overrideTokens(CFG_OPTIONS_EXAMPLE));
      const { config } = loadConfig(SIM, { environment: {}, overrides: tokens });
      assert.equal(config.evaluation.use_gate, false);
      assert.deepEqual(config.evaluation.leading_words, ['MUST', 'NEVER']);
      assert.match(help, /--batch_size/);
      assert.match(help, /--target_model/);
      // The hundred-odd backend flags are accepted but not listed one per line.
      assert.doesNotMatch(
        help,
        /--target_azure_openai_managed_identity_client_id|--optimizer_qwen_chat_timeout_seconds/,
      );
    });
  }
});

describe("the original's flat flags on the command line", () => {
  it('train takes them after --cfg-options, as the original', async () => {
    const c = await run([
      'train',
      '--config',
      SIM,
      '--cfg-options',
      'train.batch_size=8',
      'train.seed=3',
      '--batch_size',
      '4',
      '--edit_budget=2',
      '--use_gate',
      '0',
      '--target_model',
      'sim-2',
      '--out_root',
      'runs/x',
    ]);
    const { config } = loadFromOptions(c.opts as unknown as ConfigOptions);
    assert.equal(config.train.batch_size, 4);
    assert.equal(config.train.seed, 3);
    assert.equal(config.optimizer.learning_rate, 2);
    assert.equal(config.evaluation.use_gate, false);
    assert.equal(config.model.target.model, 'sim-2');
    assert.equal(config.env.out_root, 'runs/x');
  });

  it('eval takes them too; --out_root names its output directory', async () => {
    const c = await run([
      'eval',
      '--config',
      SIM,
      '--skill',
      'a.md',
      '--split',
      'val',
      '--env',
      'sim',
      '--test_env_num',
      '5',
      '--out_root',
      'runs/e',
    ]);
    const { config } = loadFromOptions(c.opts as unknown as ConfigOptions);
    assert.equal(config.evaluation.test_env_num, 5);
    assert.equal(c.opts.out_root, 'runs/e');
  });

  it('a misspelt flag is still refused', async () => {
    const { program } = capturingProgram();
    await assert.rejects(
      program.parseAsync(['node', 'skillopt', 'train', '--config', SIM, '--batch_sise', '4']),
      (e: { code?: string }) => e.code === 'commander.unknownOption',
    );
  });
});

describe('the examples in the README and docs/', () => {
  it('the runs its train and eval commands write go under the runs root, which ui shows and --resume searches', () => {
    const outs = readmeCommands().flatMap(({ argv }) =>
      ['train', 'eval'].includes(argv[0]!) ? argv.filter((_, i) => argv[i - 1] === '--out') : [],
    );
    assert.ok(outs.length >= 3, outs.join(' '));
    for (const out of outs) assert.ok(out.startsWith(`${RUNS_ROOT}/`), `${out} is not under ${RUNS_ROOT}/`);
  });

  it('every --cfg-options and --set example loads against one of the shipped configs (an env key against its env)', () => {
    const configs = fs
      .readdirSync(path.join(ROOT, 'configs'))
      .map((d) => path.join(ROOT, 'configs', d, 'default.yaml'))
      .filter((f) => fs.existsSync(f));
    // Shell quotes around a value are the shell's: drop them as the shell would.
    const examples = [...README.matchAll(/`--(?:cfg-options|set) ([^`]+)`/g)].flatMap((m) =>
      overrideTokens(m[1]!.replace(/'([^']*)'/g, '$1')),
    );
    assert.ok(examples.length >= 4, examples.join(' '));
    for (const example of examples) {
      const errors = configs.flatMap((file) => {
        try {
          loadConfig(file, { environment: {}, overrides: [example] });
          return [];
        } catch (err) {
          return [(err as Error).message];
        }
      });
      assert.ok(errors.length < configs.length, `${example}: ${errors.join('; ')}`);
    }
  });

  it('runs the program without npx, whose linking takes seconds on every call', () => {
    const slow = [...README.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((b) =>
      b[1]!.split('\n').filter((l) => /^\s*(npx|npm exec) skillopt\b/.test(l)),
    );
    assert.deepEqual(slow, []);
  });

  it('every `node bin/skillopt.js` command parses with the real program; train and eval load their config', async () => {
    const commands = readmeCommands();
    assert.ok(commands.length >= 10, `found ${commands.length}`);
    const seen = new Set<string>();
    for (const { argv, env, line } of commands) {
      const resolved = argv.map((a, i) => (argv[i - 1] === '--config' ? path.join(ROOT, a) : a));
      const c = await run(resolved);
      seen.add(c.command);
      if (c.command === 'train' || c.command === 'eval') {
        const environment = { ...process.env, ...env };
        const opts = c.opts as unknown as ConfigOptions;
        assert.doesNotThrow(
          () => loadConfig(opts.config, { environment, overrides: [...(opts.cfgOptions ?? []), ...(opts.set ?? [])] }),
          line,
        );
      }
    }
    assert.deepEqual([...seen].sort(), [
      'audit',
      'data materialize',
      'deploy',
      'eval',
      'export',
      'sleep adopt',
      'sleep dry-run',
      'sleep harvest',
      'sleep history',
      'sleep install',
      'sleep rollback',
      'sleep run',
      'sleep schedule',
      'sleep status',
      'sleep uninstall',
      'sleep unschedule',
      'tasks draft',
      'train',
      'ui',
    ]);
  });
});
