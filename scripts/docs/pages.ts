/** The generated reference pages, by their path in the repository. */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cliReference } from './cli-reference.ts';
import { configReference } from './config-reference.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export function generatedPages(): Record<string, string> {
  return {
    'docs/reference/config.md': configReference(ROOT),
    'docs/reference/cli.md': cliReference(),
  };
}
