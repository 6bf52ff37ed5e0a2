import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import {
  parseResumeCommand,
  programName,
  resumeArgs,
  resumeCommand,
  shellSplit,
} from '../../src/run/resume-command.ts';

describe('the resume command read back', () => {
  const inv = {
    program: 'npx skillopt',
    config: 'configs/my tasks.yaml',
    overrides: ['train.num_epochs=2', 'budget.max_calls=100', "env.prompt.user=it's {{input}}", 'env.tags=[a, "b c"]'],
  };

  it('splits a command line into the words a POSIX shell gives the program', () => {
    const line = resumeCommand(inv, '/home/u/proj/outputs/tasks/20250101_120000', [], '/home/u/proj');
    // The shell itself is the judge: it prints each word it passes on a line of its own.
    const byShell = execFileSync('/bin/sh', ['-c', `printf '%s\\n' ${line}`], { encoding: 'utf8' })
      .split('\n')
      .slice(0, -1);
    assert.deepEqual(shellSplit(line), byShell);
    assert.deepEqual(shellSplit(`a\\ b 'c d'e  "f"`), ['a b', 'c de', 'f']);
    // Double quotes, as agent CLIs write the commands they run: the shell judges again.
    const quoted = `"grep 'x' \\"my file\\" \\$HOME \\n"'$PATH'"\\\\"`;
    const shell = execFileSync('/bin/sh', ['-c', `printf '%s\\n' ${quoted}`], { encoding: 'utf8' });
    assert.deepEqual(shellSplit(quoted), [shell.slice(0, -1)]);
    assert.throws(() => shellSplit("a 'b"), /unbalanced quote/);
  });

  it('gives back the config, the run directory and every override of the command the run printed', () => {
    const line = resumeCommand(
      inv,
      '/home/u/proj/outputs/tasks/20250101_120000',
      ['budget.max_calls=200'],
      '/home/u/proj',
    );
    assert.deepEqual(parseResumeCommand(line), {
      program: 'npx skillopt',
      config: 'configs/my tasks.yaml',
      runDir: 'outputs/tasks/20250101_120000',
      overrides: [
        'train.num_epochs=2',
        "env.prompt.user=it's {{input}}",
        'env.tags=[a, "b c"]',
        'budget.max_calls=200',
      ],
    });
    assert.equal(parseResumeCommand('skillopt eval --config c.yaml'), undefined);
    assert.equal(parseResumeCommand('skillopt train --config c.yaml --resume d --force-unlock'), undefined);
    assert.equal(parseResumeCommand("skillopt train --config 'c.yaml"), undefined);
  });

  it('has the same words to run as to show, a raised limit replacing the one it was started with', () => {
    const args = resumeArgs(inv, '/p/out/run', ['budget.max_calls=300'], '/p');
    assert.deepEqual(args.slice(0, 5), ['train', '--config', 'configs/my tasks.yaml', '--resume', 'out/run']);
    assert.deepEqual(
      args.filter((a) => a.startsWith('budget.')),
      ['budget.max_calls=300'],
    );
    assert.deepEqual(shellSplit(resumeCommand(inv, '/p/out/run', ['budget.max_calls=300'], '/p')).slice(2), args);
  });
});

describe('the program in the commands printed', () => {
  it('is what the user typed: npx skillopt, node bin/skillopt.js in a checkout, else skillopt', () => {
    assert.equal(programName({ npm_command: 'exec' }, '/p/bin/skillopt.js', '/p'), 'npx skillopt');
    assert.equal(programName({}, '/p/bin/skillopt.js', '/p'), 'node bin/skillopt.js');
    assert.equal(
      programName({}, '/p/bin/skillopt.js', '/p/sub'),
      'skillopt',
      'run from elsewhere: an installed command',
    );
    assert.equal(programName({}, '/usr/local/bin/skillopt', '/p'), 'skillopt');
    assert.equal(programName({}, '/my dir/bin/skillopt.js', '/my dir'), 'node bin/skillopt.js');
  });
});
