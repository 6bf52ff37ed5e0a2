/**
 * The generated reference pages are what `npm run docs` writes today: a schema key, a comment or
 * a command option changed without regenerating fails here (and so in CI).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { Command } from 'commander';
import { generatedPages, ROOT } from '../../scripts/docs/pages.ts';
import { buildProgram } from '../../src/cli/main.ts';
import { ConfigSchema } from '../../src/config/schema.ts';

const pages = generatedPages();

describe('the generated reference pages', () => {
  for (const [file, text] of Object.entries(pages)) {
    it(`${file} is up to date (run npm run docs)`, () => {
      const committed = fs.readFileSync(path.join(ROOT, file), 'utf8');
      assert.ok(committed === text, `${file} is stale: run npm run docs and commit the result`);
    });
  }

  it('the config reference has a row for every key of every section, with its default', () => {
    const page = pages['docs/reference/config.md']!;
    const missing: string[] = [];
    for (const [section, schema] of Object.entries(ConfigSchema.shape)) {
      const defaults = (schema as { parse: (v: unknown) => Record<string, unknown> }).parse(undefined);
      for (const [key, value] of Object.entries(defaults)) {
        const shown =
          section === 'model' && ['target', 'optimizer', 'judge'].includes(key) ? null : `${section}.${key}`;
        if (shown === null) continue;
        const row = page.split('\n').find((l) => l.startsWith(`| \`${shown}\` |`));
        // A group of keys (`evaluation.audit`) has a row for each of its own.
        const group = value !== null && typeof value === 'object' && !Array.isArray(value);
        if (group && page.includes(`| \`${shown}.`)) continue;
        if (!row) missing.push(shown);
        else if (typeof value !== 'object' && !row.includes(`\`${value === '' ? "''" : String(value)}\``))
          missing.push(`${shown} (default ${String(value)})`);
      }
    }
    assert.deepEqual(missing, []);
    // Every key says what it does: a key added without a JSDoc comment fails here.
    const undescribed = page.split('\n').filter((l) => /^\| `[^`]+` \|.*\|\s*\|$/.test(l));
    assert.deepEqual(undescribed, []);
    // A description read from a JSDoc comment of the schema source.
    assert.match(page, /\| `optimizer\.learning_rate` \| integer[^|]*\| `4` \| Maximum edits applied per step/);
    // A role's keys, and an env's and a backend's own.
    assert.match(page, /\| `model\.<role>\.timeout_s` \|/);
    assert.match(page, /### env\.name: tasks[\s\S]*\| `env\.fields\.answer` \|/);
    assert.match(page, /### backend: anthropic[\s\S]*\| `options\.thinking_budget` \|[^\n]*Extended thinking/);
  });

  it('the CLI reference lists every option of every command, --force-unlock and --json of the sleep commands included', () => {
    const page = pages['docs/reference/cli.md']!;
    const missing: string[] = [];
    const visit = (cmd: Command, name: string) => {
      const at = page.indexOf(`\n## ${name}\n`);
      const own = at < 0 ? '' : page.slice(at, page.indexOf('\n## ', at + 1) >>> 0);
      if (at < 0) missing.push(name);
      for (const option of cmd.options) {
        if ((option as { hidden?: boolean }).hidden) continue;
        if (!own.includes(`\`${option.flags}\``)) missing.push(`${name} ${option.long}`);
      }
      for (const sub of cmd.commands) visit(sub, `${name} ${sub.name()}`);
    };
    visit(buildProgram(), 'skillopt');
    assert.deepEqual(missing, []);
    for (const sub of ['run', 'adopt', 'rollback'])
      assert.match(page, new RegExp(`## skillopt sleep ${sub}\\n[\\s\\S]*?\`--force-unlock\``));
    assert.match(page, /## skillopt sleep status\n[\s\S]*?`--json`/);
  });
});
