import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ConfigError } from '../../src/errors.ts';
import { defaultSleepConfigPath, loadSleepConfig, SleepConfigSchema } from '../../src/sleep/config.ts';
import { tmpDir } from '../helpers/tmp.ts';

function configFile(text: string): string {
  const file = path.join(tmpDir('skillopt-sleep-config-'), 'sleep.yaml');
  fs.writeFileSync(file, text);
  return file;
}

function refused(text: string): string {
  const file = configFile(text);
  try {
    loadSleepConfig(file, {});
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return (err as Error).message.replace(file, '<file>');
  }
  assert.fail('the config was accepted');
}

test('no config file: the defaults (every agent, the project of the working directory, the last 72 hours, at most 120 sessions)', () => {
  const home = tmpDir('skillopt-sleep-nohome-');
  const loaded = loadSleepConfig(undefined, { XDG_CONFIG_HOME: path.join(home, 'xdg') });
  assert.equal(loaded.exists, false);
  assert.equal(loaded.file, path.join(home, 'xdg/skillopt/sleep.yaml'));
  assert.deepEqual(loaded.config, SleepConfigSchema.parse({}));
  assert.equal(loaded.config.harvest.sources, 'all');
  assert.equal(loaded.config.harvest.projects, 'invoked');
  assert.equal(loaded.config.harvest.lookback_hours, 72);
  assert.equal(loaded.config.harvest.max_sessions, 120);
});

test("the file in the user's config directory, or the one SKILLOPT_SLEEP_CONFIG names", () => {
  assert.equal(defaultSleepConfigPath({}, 'linux', '/home/dev'), '/home/dev/.config/skillopt/sleep.yaml');
  assert.equal(
    defaultSleepConfigPath({ APPDATA: 'C:\\Users\\dev\\AppData\\Roaming' }, 'win32', 'C:\\Users\\dev').endsWith(
      'sleep.yaml',
    ),
    true,
  );
  const file = configFile('harvest:\n  sources: [claude, codex]\n  projects: [~/work/acme]\n  lookback_hours: 24\n');
  const loaded = loadSleepConfig(undefined, { SKILLOPT_SLEEP_CONFIG: file });
  assert.equal(loaded.file, file);
  assert.deepEqual(loaded.config.harvest.sources, ['claude', 'codex']);
  assert.equal(loaded.config.harvest.lookback_hours, 24);
  assert.equal(
    loadSleepConfig(configFile(''), {}).config.harvest.max_sessions,
    120,
    'an empty file means the defaults',
  );
});

test('every key is checked: an unknown key (with the likely one), a wrong type, an unknown agent, each naming the file and the key', () => {
  assert.equal(
    refused('harvest:\n  lookback_hour: 24\n'),
    "<file>: unknown key 'harvest.lookback_hour' (did you mean 'lookback_hours'?)",
  );
  assert.equal(refused('harvst:\n  sources: all\n'), "<file>: unknown key 'harvst' (did you mean 'harvest'?)");
  assert.equal(
    refused('harvest:\n  max_sessions: many\n'),
    '<file>: harvest.max_sessions: expected number, got string "many"',
  );
  assert.match(
    refused('harvest:\n  sources: [claude, cursr]\n'),
    /^<file>: harvest\.sources: unknown agent 'cursr' \(did you mean 'cursor'\?\)/,
  );
  assert.match(
    refused('harvest:\n  sources: claude\n'),
    /^<file>: harvest\.sources: expected 'all' or a list of agents \(claude, codex, /,
  );
  assert.match(
    refused('harvest:\n  projects: somewhere\n'),
    /^<file>: harvest\.projects: expected 'invoked', 'all' or a list of project folders, got string "somewhere"/,
  );
  assert.match(refused('harvest:\n  lookback_hours: -1\n'), /^<file>: harvest\.lookback_hours: .*>=0/);
});

test('a file that is not YAML, or not a mapping, is refused with its name; a named file that does not exist too', () => {
  assert.match(refused('harvest: [unclosed\n'), /^<file>: not valid YAML/);
  assert.match(refused('- a\n- b\n'), /^<file>: expected a mapping of keys/);
  assert.throws(
    () => loadSleepConfig('/nonexistent/sleep.yaml', {}),
    /\/nonexistent\/sleep\.yaml: the Sleep config file does not exist/,
  );
});
