import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { castValue } from '../../src/config/cast.ts';
import { loadConfig } from '../../src/config/load.ts';
import { ROOT, runCli } from '../helpers/cli.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';
import { rejects } from './rejects.ts';

const noEnv = { environment: {} };

describe('config: _base_ inheritance', () => {
  it('merges a chain of three files, child winning, mappings merged deeply, lists replaced', () => {
    const dir = tmpDir();
    writeFiles(dir, {
      'base/root.yaml':
        'train:\n  num_epochs: 4\n  batch_size: 40\nevaluation:\n  leading_words: [MUST, NEVER]\nenv:\n  name: sim\n',
      'base/mid.yaml':
        '_base_: root.yaml\ntrain:\n  batch_size: 20\noptimizer:\n  learning_rate: 3\nevaluation:\n  leading_words: [ALWAYS]\n',
      'exp/child.yaml':
        '_base_: ../base/mid.yaml\ntrain:\n  seed: 7\noptimizer:\n  lr_scheduler: linear\nmodel:\n  backend: sim\n',
    });
    const { config, files } = loadConfig(path.join(dir, 'exp/child.yaml'), noEnv);
    assert.equal(config.train.num_epochs, 4); // from root
    assert.equal(config.train.batch_size, 20); // mid overrides root
    assert.equal(config.train.seed, 7); // child
    assert.equal(config.optimizer.learning_rate, 3); // mid, kept beside the child's lr_scheduler
    assert.equal(config.optimizer.lr_scheduler, 'linear');
    assert.deepEqual(config.evaluation.leading_words, ['ALWAYS']); // lists are replaced whole
    assert.equal(config.env.name, 'sim');
    assert.deepEqual(
      files.map((f) => path.relative(dir, f)),
      ['base/root.yaml', 'base/mid.yaml', 'exp/child.yaml'],
    );
  });

  it('accepts a list of bases, later ones winning', () => {
    const dir = tmpDir();
    writeFiles(dir, {
      'a.yaml': 'train:\n  batch_size: 10\n  seed: 1\n',
      'b.yaml': 'train:\n  batch_size: 12\n',
      'c.yaml': '_base_: [a.yaml, b.yaml]\nmodel:\n  backend: sim\n',
    });
    const { config } = loadConfig(path.join(dir, 'c.yaml'), noEnv);
    assert.equal(config.train.batch_size, 12);
    assert.equal(config.train.seed, 1);
  });

  it('names the file and the key when a _base_ file is missing', () => {
    const dir = tmpDir();
    writeFiles(dir, { 'c.yaml': '_base_: nowhere.yaml\n' });
    rejects(() => loadConfig(path.join(dir, 'c.yaml'), noEnv), /c\.yaml/, /_base_/, /nowhere\.yaml/);
  });

  it('skillopt:NAME names a shipped config, so a copy of one works anywhere', () => {
    const dir = tmpDir();
    fs.copyFileSync(path.join(ROOT, 'configs/tasks/example.yaml'), path.join(dir, 'mine.yaml'));
    const { config, files } = loadConfig(path.join(dir, 'mine.yaml'), noEnv);
    assert.equal(config.env.name, 'tasks');
    assert.equal(files[0], path.join(ROOT, 'configs/_base_/default.yaml'));
    writeFiles(dir, { 'sim.yaml': '_base_: skillopt:sim/default\ntrain: {seed: 3}\n' });
    assert.equal(loadConfig(path.join(dir, 'sim.yaml'), noEnv).config.model.backend, 'sim');
    writeFiles(dir, { 'typo.yaml': '_base_: skillopt:defualt\n' });
    rejects(
      () => loadConfig(path.join(dir, 'typo.yaml'), noEnv),
      /typo\.yaml: _base_: no shipped config 'skillopt:defualt' \(did you mean 'skillopt:default'\?\)/,
    );
  });

  it('a relative _base_ that is not there says it is relative to the file, and how to name the shipped base', () => {
    const dir = tmpDir();
    writeFiles(dir, { 'copied.yaml': '_base_: ../_base_/default.yaml\nmodel: {backend: sim}\n' });
    rejects(
      () => loadConfig(path.join(dir, 'copied.yaml'), noEnv),
      /copied\.yaml: _base_ file '\.\.\/_base_\/default\.yaml' not found \(looked for .*\): a relative _base_ is relative to the file that names it; for the shipped base write _base_: skillopt:default/,
    );
  });

  it('refuses circular inheritance', () => {
    const dir = tmpDir();
    writeFiles(dir, { 'a.yaml': '_base_: b.yaml\n', 'b.yaml': '_base_: a.yaml\n' });
    rejects(() => loadConfig(path.join(dir, 'a.yaml'), noEnv), /circular/);
  });

  it('reads the original flat spelling and the role shorthand', () => {
    const dir = tmpDir();
    writeFiles(dir, {
      'flat.yaml':
        'env: sim\nedit_budget: 6\nbatch_size: 8\nuse_gate: false\nmodel:\n  target: sim-big\n  target_backend: sim\n  optimizer_backend: sim\n',
    });
    const { config } = loadConfig(path.join(dir, 'flat.yaml'), noEnv);
    assert.equal(config.env.name, 'sim');
    assert.equal(config.optimizer.learning_rate, 6);
    assert.equal(config.train.batch_size, 8);
    assert.equal(config.evaluation.use_gate, false);
    assert.equal(config.model.target.model, 'sim-big');
    assert.equal(config.model.target.backend, 'sim');
  });

  it('warns about retired keys and drops them', () => {
    const dir = tmpDir();
    writeFiles(dir, { 'r.yaml': 'model:\n  backend: sim\ngradient:\n  max_analyst_rounds: 3\n' });
    const { warnings } = loadConfig(path.join(dir, 'r.yaml'), noEnv);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /max_analyst_rounds/);
    // The flat spellings of the original, in a file and as overrides.
    writeFiles(dir, { 'flat.yaml': 'env: sim\nmodel_backend: sim\nmeta_edit_budget: 2\nmax_analyst_rounds: 3\n' });
    const flat = loadConfig(path.join(dir, 'flat.yaml'), { ...noEnv, overrides: ['meta_edit_budget=3'] }).warnings;
    assert.equal(flat.filter((w) => /meta_learning_rate|meta_edit_budget/.test(w)).length, 2, flat.join('\n'));
    assert.equal(flat.filter((w) => /max_analyst_rounds/.test(w)).length, 1, flat.join('\n'));
  });
});

describe('config: overrides', () => {
  it('casts values as the original does', () => {
    assert.equal(castValue('true'), true);
    assert.equal(castValue('Yes'), true);
    assert.equal(castValue('no'), false);
    assert.equal(castValue('12'), 12);
    assert.equal(castValue('-3'), -3);
    assert.equal(castValue('0.25'), 0.25);
    assert.equal(castValue('1e-3'), 0.001);
    assert.equal(castValue('null'), 'null');
    assert.equal(castValue('gpt-5.5'), 'gpt-5.5');
  });

  it('applies dotted and flat overrides over the files', () => {
    const dir = tmpDir();
    writeFiles(dir, { 'c.yaml': 'model:\n  backend: sim\ntrain:\n  batch_size: 40\n' });
    const { config } = loadConfig(path.join(dir, 'c.yaml'), {
      ...noEnv,
      overrides: [
        'train.batch_size=8',
        'evaluation.use_gate=false',
        'edit_budget=2',
        'evaluation.gate_mixed_weight=0.25',
        'model.optimizer=sim-large',
      ],
    });
    assert.equal(config.train.batch_size, 8);
    assert.equal(config.evaluation.use_gate, false);
    assert.equal(config.optimizer.learning_rate, 2);
    assert.equal(config.evaluation.gate_mixed_weight, 0.25);
    assert.equal(config.model.optimizer.model, 'sim-large');
  });

  it('an error in an override names where it was given: the library option, --cfg-options or --set', () => {
    const dir = tmpDir();
    writeFiles(dir, { 'c.yaml': 'model:\n  backend: sim\n' });
    const file = path.join(dir, 'c.yaml');
    rejects(
      () => loadConfig(file, { ...noEnv, overrides: ['train.batch_sise=3'] }),
      /^overrides: unknown key 'train\.batch_sise' \(did you mean/,
    );
    rejects(
      () => loadConfig(file, { ...noEnv, overrides: [{ item: 'train.batch_size=-1', source: '--set' }] }),
      /^--set: train\.batch_size: /,
    );
    const set = runCli(['train', '--config', file, '--set', 'train.batch_sise=3']);
    assert.equal(set.status, 2);
    assert.match(set.stderr, /^skillopt: --set: unknown key 'train\.batch_sise'/);
    const cfg = runCli(['train', '--config', file, '--cfg-options', 'train.batch_sise=3']);
    assert.equal(cfg.status, 2);
    assert.match(cfg.stderr, /^skillopt: --cfg-options: unknown key 'train\.batch_sise'/);
  });

  it('reads lists and mappings as YAML flow or JSON, keeping the scalar casts inside them', () => {
    assert.deepEqual(castValue('[/a,/b]'), ['/a', '/b']);
    assert.deepEqual(castValue('["/a"]'), ['/a']);
    assert.deepEqual(castValue('{"a":1}'), { a: 1 });
    assert.deepEqual(castValue(' [1, true, x] '), [1, true, 'x']);
    assert.deepEqual(castValue('{input: question, answer: [gold, alt]}'), {
      input: 'question',
      answer: ['gold', 'alt'],
    });
    assert.throws(() => castValue('[/a,'), /not a valid list/);
    assert.throws(() => castValue('{a: [1}'), /not a valid mapping/);
  });

  it('list and mapping overrides load into list and mapping keys of the config and of an env', () => {
    const dir = tmpDir();
    writeFiles(dir, {
      'o.yaml': 'model:\n  backend: sim\nenv:\n  name: officeqa\n',
      't.yaml': 'model:\n  backend: sim\nenv:\n  name: tasks\n  data_path: d.jsonl\n',
    });
    const office = loadConfig(path.join(dir, 'o.yaml'), {
      ...noEnv,
      overrides: [
        'env.data_dirs=[/a,/b]',
        'evaluation.leading_words=["MUST", "NEVER"]',
        'model.target.price={"input":1,"output":2}',
      ],
    });
    assert.deepEqual(office.config.env.data_dirs, ['/a', '/b']);
    assert.deepEqual(office.config.evaluation.leading_words, ['MUST', 'NEVER']);
    assert.deepEqual(office.config.model.target.price, { input: 1, output: 2 });
    assert.deepEqual(
      loadConfig(path.join(dir, 'o.yaml'), { ...noEnv, overrides: ['data_dirs=["/c"]'] }).config.env.data_dirs,
      ['/c'],
    );
    const tasks = loadConfig(path.join(dir, 't.yaml'), {
      ...noEnv,
      overrides: ['env.fields={input: question, answer: [gold, alt]}'],
    });
    assert.deepEqual((tasks.config.env.fields as { answer: unknown }).answer, ['gold', 'alt']);
    rejects(
      () => loadConfig(path.join(dir, 'o.yaml'), { ...noEnv, overrides: ['env.data_dirs=[/a,'] }),
      /overrides: env\.data_dirs: "\[\/a," is not a valid list/,
    );
  });

  it("applies the original's flat flags after --cfg-options, naming them in errors", () => {
    const dir = tmpDir();
    writeFiles(dir, { 'c.yaml': 'model:\n  backend: sim\ntrain:\n  batch_size: 40\n' });
    const { config } = loadConfig(path.join(dir, 'c.yaml'), {
      ...noEnv,
      overrides: ['train.batch_size=8', 'optimizer.learning_rate=3'],
      flags: [
        ['batch_size', '4'],
        ['target_model', 'sim-big'],
        ['backend', 'sim'],
        ['env', 'sim'],
        ['out_root', 'runs/x'],
      ],
    });
    assert.equal(config.train.batch_size, 4); // the flag wins over --cfg-options
    assert.equal(config.optimizer.learning_rate, 3);
    assert.equal(config.model.target.model, 'sim-big');
    assert.equal(config.env.name, 'sim');
    assert.equal(config.env.out_root, 'runs/x');
    rejects(
      () => loadConfig(path.join(dir, 'c.yaml'), { ...noEnv, flags: [['num_epochs', 'many']] }),
      /--num_epochs: train\.num_epochs: expected number, got string "many"/,
    );
  });

  it('reports a bad override against the overrides', () => {
    const dir = tmpDir();
    writeFiles(dir, { 'c.yaml': 'model:\n  backend: sim\n' });
    rejects(
      () => loadConfig(path.join(dir, 'c.yaml'), { ...noEnv, overrides: ['train.batch_sise=8'] }),
      /^overrides: /,
      /batch_sise/,
      /did you mean 'batch_size'/,
    );
    rejects(
      () => loadConfig(path.join(dir, 'c.yaml'), { ...noEnv, overrides: ['train.batch_size=many'] }),
      /^overrides: /,
      /train\.batch_size/,
      /expected number/,
    );
    rejects(() => loadConfig(path.join(dir, 'c.yaml'), { ...noEnv, overrides: ['justakey'] }), /key=value/);
  });
});

describe('config: validation errors name the file and the key', () => {
  it('an unknown key, with a suggestion', () => {
    const dir = tmpDir();
    writeFiles(dir, {
      'base.yaml': 'model:\n  backend: sim\n',
      'c.yaml': '_base_: base.yaml\noptimizer:\n  learning_rat: 3\n',
    });
    rejects(
      () => loadConfig(path.join(dir, 'c.yaml'), noEnv),
      new RegExp(`${dir}/c\\.yaml`),
      /unknown key 'optimizer\.learning_rat'/,
      /did you mean 'learning_rate'/,
    );
  });

  it('an unknown section', () => {
    const dir = tmpDir();
    writeFiles(dir, { 'c.yaml': 'model:\n  backend: sim\ntrian:\n  seed: 1\n' });
    rejects(() => loadConfig(path.join(dir, 'c.yaml'), noEnv), /c\.yaml/, /trian/);
  });

  it('a wrong type, in the file that set it', () => {
    const dir = tmpDir();
    writeFiles(dir, {
      'base.yaml': 'train:\n  batch_size: lots\n',
      'c.yaml': '_base_: base.yaml\nmodel:\n  backend: sim\n',
    });
    const err = rejects(
      () => loadConfig(path.join(dir, 'c.yaml'), noEnv),
      /base\.yaml/,
      /train\.batch_size/,
      /expected number, got string "lots"/,
    );
    assert.equal(err.file, path.join(dir, 'base.yaml'));
  });

  it('a value outside its choices', () => {
    const dir = tmpDir();
    writeFiles(dir, { 'c.yaml': 'model:\n  backend: sim\noptimizer:\n  lr_scheduler: cosin\n' });
    rejects(
      () => loadConfig(path.join(dir, 'c.yaml'), noEnv),
      /optimizer\.lr_scheduler/,
      /"cosine"/,
      /did you mean 'cosine'/,
    );
  });

  it('an unknown env option, checked by the env', () => {
    const dir = tmpDir();
    writeFiles(dir, { 'c.yaml': 'model:\n  backend: sim\nenv:\n  name: sim\n  n_trian: 5\n' });
    rejects(
      () => loadConfig(path.join(dir, 'c.yaml'), noEnv),
      /c\.yaml/,
      /n_trian/,
      /env 'sim'/,
      /did you mean 'n_train'/,
    );
  });

  it('an unknown env and an unknown backend', () => {
    const dir = tmpDir();
    writeFiles(dir, {
      'e.yaml': 'model:\n  backend: sim\nenv:\n  name: smi\n',
      'b.yaml': 'model:\n  target:\n    backend: simm\n',
    });
    rejects(
      () => loadConfig(path.join(dir, 'e.yaml'), noEnv),
      /e\.yaml/,
      /env\.name/,
      /unknown env 'smi'/,
      /did you mean 'sim'/,
    );
    rejects(
      () => loadConfig(path.join(dir, 'b.yaml'), noEnv),
      /b\.yaml/,
      /model\.target\.backend/,
      /unknown backend 'simm'/,
    );
  });

  it("a backend option, checked by the backend's own schema", () => {
    const dir = tmpDir();
    writeFiles(dir, {
      'o.yaml': 'model:\n  backend: sim\n  target:\n    options:\n      latency_mss: 5\n',
      't.yaml': 'model:\n  backend: sim\n  optimizer:\n    options:\n      harmful: lots\n',
    });
    rejects(
      () => loadConfig(path.join(dir, 'o.yaml'), noEnv),
      /o\.yaml/,
      /unknown key 'model\.target\.options\.latency_mss' for backend 'sim'/,
      /did you mean 'latency_ms'/,
    );
    rejects(
      () => loadConfig(path.join(dir, 't.yaml'), noEnv),
      /t\.yaml/,
      /model\.optimizer\.options\.harmful: expected number/,
    );
  });

  it('invalid YAML, with the line', () => {
    const dir = tmpDir();
    writeFiles(dir, { 'c.yaml': 'train:\n  batch_size: [1, 2\n' });
    rejects(() => loadConfig(path.join(dir, 'c.yaml'), noEnv), /c\.yaml:\d+/, /invalid YAML/);
  });
});

describe('config: errors that point to the fix', () => {
  it('a key written into a role points to api_key_env; the value is not shown', () => {
    const dir = tmpDir();
    writeFiles(dir, { 'c.yaml': 'model:\n  backend: sim\n  target:\n    api_key: sk-live-0123456789\n' });
    const err = rejects(
      () => loadConfig(path.join(dir, 'c.yaml'), noEnv),
      /c\.yaml: unknown key 'model\.target\.api_key': a key is never written in a config; put it in an environment variable and name that variable in model\.target\.api_key_env/,
    );
    assert.doesNotMatch(err.message, /sk-live/);
  });

  it('a wrong choice of a discriminated mapping (a scorer type) names the choices and the nearest', () => {
    const dir = tmpDir();
    writeFiles(dir, {
      'c.yaml': 'model: {backend: sim}\nenv:\n  name: tasks\n  data_path: x.jsonl\n  scorer:\n    type: exact_mach\n',
    });
    rejects(
      () => loadConfig(path.join(dir, 'c.yaml'), noEnv),
      /c\.yaml: env\.scorer\.type: expected one of "exact_match", "token_f1", .*"custom", got string "exact_mach" \(did you mean 'exact_match'\?\)/,
    );
  });

  it('train --confg names the unknown option, not a missing --config', () => {
    const r = runCli(['train', '--confg', 'x.yaml']);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /^error: unknown option '--confg'\n\(Did you mean --config\?\)/);
    const missing = runCli(['eval', '--skill', 'a.md']);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /^error: required option '-c, --config <file>' not specified/);
  });
});

describe('config: environment variables', () => {
  it('substitutes ${VAR} from the environment and marks secret variables', () => {
    const dir = tmpDir();
    writeFiles(dir, {
      'c.yaml':
        'model:\n  backend: sim\n  target:\n    base_url: ${BASE:-http://127.0.0.1:9}\n  optimizer:\n    base_url: ${MY_API_KEY}\n',
    });
    const loaded = loadConfig(path.join(dir, 'c.yaml'), { environment: { MY_API_KEY: 'sk-secret-123' } });
    assert.equal(loaded.config.model.target.base_url, 'http://127.0.0.1:9');
    assert.equal(loaded.config.model.optimizer.base_url, 'sk-secret-123');
    assert.ok(loaded.secretPaths.has('model.optimizer.base_url'));
  });

  it('names the variable, the key and the file when a variable is missing', () => {
    const dir = tmpDir();
    writeFiles(dir, { 'c.yaml': 'model:\n  target:\n    base_url: ${NOT_SET_ANYWHERE}\n' });
    rejects(
      () => loadConfig(path.join(dir, 'c.yaml'), noEnv),
      /c\.yaml/,
      /model\.target\.base_url/,
      /NOT_SET_ANYWHERE/,
    );
  });

  it('reads a .env file in the working directory without overriding the shell', () => {
    const dir = tmpDir();
    const name = `SKILLOPT_TEST_${process.pid}`;
    writeFiles(dir, {
      '.env': `${name}=from-dotenv\n`,
      'c.yaml': `model:\n  backend: sim\n  target:\n    base_url: \${${name}}\n`,
    });
    delete process.env[name];
    assert.equal(loadConfig(path.join(dir, 'c.yaml'), { cwd: dir }).config.model.target.base_url, 'from-dotenv');
    process.env[name] = 'from-shell';
    assert.equal(loadConfig(path.join(dir, 'c.yaml'), { cwd: dir }).config.model.target.base_url, 'from-shell');
    delete process.env[name];
  });
});
