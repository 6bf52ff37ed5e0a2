import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load.ts';
import { ROOT } from '../helpers/cli.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';

const BENCHES = ['alfworld', 'docvqa', 'livemathematicianbench', 'officeqa', 'searchqa', 'spreadsheetbench'];
const ORIGINAL = path.join(ROOT, 'test/fixtures/original-configs');
const SEARCH_KEYS = [
  'max_queries_per_turn',
  'search_api_url',
  'search_auth_env',
  'search_provider',
  'search_max_num_results',
  'search_timeout_seconds',
];

describe("the benchmark configs load, in the original's layout and ours", () => {
  for (const bench of BENCHES) {
    it(`${bench}: the original's config, every key`, () => {
      const file = path.join(ORIGINAL, bench, 'default.yaml');
      const loaded = loadConfig(file, { environment: {} });
      assert.equal(loaded.config.env.name, bench);
      // The base file's model keys have their own warnings (test/config/original-configs.test.ts); here, the env's.
      const envWarnings = loaded.warnings.filter((w) => w.startsWith(`${file}:`));
      if (bench === 'officeqa') {
        assert.equal(envWarnings.length, SEARCH_KEYS.length, envWarnings.join('\n'));
        for (const key of SEARCH_KEYS) {
          const once = loaded.warnings.filter((w) => w.includes(`env.${key} `));
          assert.equal(once.length, 1, key);
          assert.match(
            once[0]!,
            new RegExp(
              `^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: env\\.${key} is not supported yet and is ignored: web search \\(the original's search_mode custom_search and azure_search\\) is not supported yet`,
            ),
          );
          assert.equal(key in loaded.config.env, false, `${key} is dropped`);
        }
        assert.deepEqual(
          [loaded.config.env.max_tool_turns, loaded.config.env.search_mode, loaded.config.env.max_completion_tokens],
          [24, 'offline', 16384],
        );
      } else if (bench === 'alfworld') {
        assert.deepEqual(
          envWarnings.map((w) => w.split(' is not supported')[0]),
          [`${file}: env.max_api_workers`],
        );
        assert.deepEqual(
          [loaded.config.env.max_steps, loaded.config.env.max_completion_tokens, loaded.config.env.split_dir],
          [50, 16384, 'data/alfworld_path_split'],
        );
      } else assert.deepEqual(envWarnings, []);
      if (bench === 'docvqa') assert.equal(loaded.config.env.image_detail, 'auto');
      if (bench === 'livemathematicianbench')
        assert.deepEqual([loaded.config.env.exec_timeout, loaded.config.env.shuffle_choices], [300, true]);
      if (bench === 'spreadsheetbench') {
        const e = loaded.config.env;
        assert.deepEqual(
          [e.mode, e.max_turns, e.exec_timeout, e.data_root, e.max_completion_tokens],
          ['multi', 30, 600, 'data/spreadsheetbench_verified_400', 16384],
        );
      }
    });

    it(`${bench}: our own config, no warning`, () => {
      const loaded = loadConfig(path.join(ROOT, 'configs', bench, 'default.yaml'), { environment: {} });
      assert.equal(loaded.config.env.name, bench);
      assert.deepEqual(loaded.warnings, []);
    });
  }

  it('a key set on the command line is warned about the same way', () => {
    const loaded = loadConfig(path.join(ROOT, 'configs/officeqa/default.yaml'), {
      environment: {},
      overrides: [{ item: 'env.search_provider=bing', source: '--set' }],
    });
    assert.deepEqual(
      loaded.warnings.map((w) => w.split(' is not supported')[0]),
      ['--set: env.search_provider'],
    );
  });

  it('a typo of a real key stays an error, with a suggestion', () => {
    const dir = tmpDir();
    writeFiles(dir, {
      'oq.yaml': `_base_: ${path.join(ROOT, 'configs/officeqa/default.yaml')}\nenv:\n  search_provder: duckduckgo\n`,
      'dv.yaml': `_base_: ${path.join(ROOT, 'configs/docvqa/default.yaml')}\nenv:\n  image_detial: high\n`,
      'bad.yaml': `_base_: ${path.join(ROOT, 'configs/docvqa/default.yaml')}\nenv:\n  image_detail: medium\n`,
    });
    assert.throws(
      () => loadConfig(path.join(dir, 'oq.yaml'), { environment: {} }),
      /oq\.yaml: unknown key 'env\.search_provder' for env 'officeqa' \(did you mean 'search_provider'\?\)/,
    );
    assert.throws(
      () => loadConfig(path.join(dir, 'dv.yaml'), { environment: {} }),
      /dv\.yaml: unknown key 'env\.image_detial' for env 'docvqa' \(did you mean 'image_detail'\?\)/,
    );
    assert.throws(
      () => loadConfig(path.join(dir, 'bad.yaml'), { environment: {} }),
      /bad\.yaml: env\.image_detail: expected one of "low", "high", "auto", got string "medium"/,
    );
  });
});
