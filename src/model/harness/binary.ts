/**
 * Finding an agent CLI and checking its version: the configured path (a file, or a name looked
 * up on PATH), else the CLI's usual name on PATH. A CLI that is missing or older than the oldest
 * version the harness was verified with stops the run with what to install; a newer one runs,
 * with a note that it was not tested.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { FatalModelError } from '../types.ts';

export interface CliIdentity {
  /** How users know it: 'Codex CLI'. */
  title: string;
  /** Its executable name on PATH: 'codex'. */
  command: string;
  /** How to install it. */
  install: string;
  /** The role option that sets its path, for messages: 'model.target.options.path'. */
  optionKey: string;
  /** Oldest version verified to work with this harness, and the newest tested. */
  minVersion: string;
  testedVersion: string;
}

function executable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function onPath(name: string, pathVar: string | undefined): string | undefined {
  for (const dir of (pathVar ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (executable(candidate)) return candidate;
  }
  return undefined;
}

/** The absolute path of the CLI, or a FatalModelError saying how to get it. */
export function resolveCli(cli: CliIdentity, configured: string, pathVar: string | undefined): string {
  const wanted = configured.trim();
  if (wanted && (wanted.includes('/') || wanted.includes(path.sep))) {
    const file = path.resolve(wanted);
    if (executable(file)) return file;
    throw new FatalModelError(
      `${cli.optionKey}: the ${cli.title} at '${wanted}' ${fs.existsSync(file) ? 'is not an executable file' : 'does not exist'}. ${cli.install}, or correct the path`,
    );
  }
  const name = wanted || cli.command;
  const found = onPath(name, pathVar);
  if (found) return found;
  throw new FatalModelError(
    `the ${cli.title} ('${name}') was not found on PATH. ${cli.install}, or set ${cli.optionKey} to its path`,
  );
}

/** x.y.z as numbers; undefined when the text holds no version. */
export function parseVersion(text: string): [number, number, number] | undefined {
  const m = /(\d+)\.(\d+)\.(\d+)/.exec(text);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

export function compareVersions(a: [number, number, number], b: [number, number, number]): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

export interface VersionCheck {
  version: string;
  /** Set when the version is newer than the newest tested one. */
  note?: string;
}

const checked = new Map<string, Promise<VersionCheck>>();

/** Runs `<binary> --version` once per binary; refuses versions older than `minVersion`. */
export function checkCliVersion(cli: CliIdentity, binary: string, env: Record<string, string>): Promise<VersionCheck> {
  let pending = checked.get(binary);
  if (!pending) {
    pending = new Promise<VersionCheck>((resolve, reject) => {
      execFile(binary, ['--version'], { env, timeout: 30_000 }, (err, stdout, stderr) => {
        const text = `${stdout}\n${stderr}`;
        const version = parseVersion(text);
        if (!version) {
          const why = err ? err.message : `it printed '${text.trim().slice(0, 200)}'`;
          reject(
            new FatalModelError(`could not read the version of the ${cli.title} at ${binary} (${why}). ${cli.install}`),
          );
          return;
        }
        const shown = version.join('.');
        if (compareVersions(version, parseVersion(cli.minVersion)!) < 0) {
          reject(
            new FatalModelError(
              `the ${cli.title} at ${binary} is version ${shown}; versions ${cli.minVersion} and later are supported (tested: ${cli.testedVersion}). Update it: ${cli.install}`,
            ),
          );
          return;
        }
        const newer = compareVersions(version, parseVersion(cli.testedVersion)!) > 0;
        resolve({
          version: shown,
          ...(newer
            ? {
                note: `the ${cli.title} is version ${shown}, newer than the newest tested with skillopt (${cli.testedVersion})`,
              }
            : {}),
        });
      });
    });
    checked.set(binary, pending);
    pending.catch(() => checked.delete(binary));
  }
  return pending;
}
