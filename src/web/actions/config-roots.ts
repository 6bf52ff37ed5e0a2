/**
 * The directories the dashboard may take configs from (`configs/` of the project, the package's
 * own `configs/`, and those added with `--configs`), the YAML files under them, and the one way
 * a config id from a request becomes a file. A config id is `<root index>/<path under the root>`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { HttpError, isFileInside, realDir, resolveInside, within } from '../files/safe-path.ts';

/** The configs shipped with skillopt (the sim demo among them). */
export const PACKAGE_CONFIGS = path.resolve(import.meta.dirname, '../../../configs');

const MAX_DEPTH = 4;
const SKIP = new Set(['node_modules', '_base_']);
const YAML = /\.ya?ml$/i;

export interface ConfigRoot {
  index: number;
  given: string;
  real: string;
}

export interface ConfigEntry {
  id: string;
  /** The root as given. */
  root: string;
  /** Path under the root. */
  rel: string;
}

/** The default roots: `configs/` in the working directory when it exists, then the package's. */
export function defaultConfigRoots(cwd = process.cwd()): string[] {
  const local = path.join(cwd, 'configs');
  return [...(fs.existsSync(local) ? [local] : []), PACKAGE_CONFIGS];
}

export class ConfigRoots {
  readonly roots: ConfigRoot[];

  constructor(given: string[]) {
    const seen = new Set<string>();
    this.roots = [];
    for (const g of given) {
      const real = realDir(g);
      if (seen.has(real)) continue;
      seen.add(real);
      this.roots.push({ index: this.roots.length, given: g, real });
    }
  }

  /** Every config file under the roots (`_base_` directories left out), and the roots that cannot be read. */
  list(): { configs: ConfigEntry[]; problems: string[] } {
    const configs: ConfigEntry[] = [];
    const problems: string[] = [];
    for (const root of this.roots) {
      root.real = realDir(root.given);
      if (!fs.existsSync(root.real) || !fs.statSync(root.real).isDirectory()) {
        problems.push(`config root ${root.given} is not a directory`);
        continue;
      }
      this.walk(root, '', 0, configs);
    }
    return { configs, problems };
  }

  private walk(root: ConfigRoot, rel: string, depth: number, out: ConfigEntry[]): void {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(rel ? path.join(root.real, rel) : root.real, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.name.startsWith('.') || SKIP.has(e.name)) continue;
      const child = rel ? `${rel}/${e.name}` : e.name;
      // Links are not followed: a config must live inside its root.
      if (e.isDirectory() && depth + 1 < MAX_DEPTH) this.walk(root, child, depth + 1, out);
      else if (e.isFile() && YAML.test(e.name))
        out.push({ id: `${root.index}/${child}`, root: root.given, rel: child });
    }
  }

  /** The root whose tree holds `file` (its real path, symlinks resolved), if any. */
  rootOf(file: string): ConfigRoot | undefined {
    let real: string;
    try {
      real = fs.realpathSync(file);
    } catch {
      return undefined;
    }
    return this.roots.find((r) => {
      r.real = realDir(r.given);
      return within(r.real, real) && real !== r.real;
    });
  }

  /** The roots, as given, for messages. */
  describe(): string {
    return this.roots.map((r) => r.given).join(', ');
  }

  /** The file of a config id; refused unless it is a YAML file inside its root. */
  resolve(id: unknown): { id: string; file: string; root: ConfigRoot } {
    if (typeof id !== 'string' || !id)
      throw new HttpError(
        400,
        'config: the config to use is missing (an id from /api/action/configs, such as 0/sim/default.yaml)',
      );
    const m = /^(\d+)\/(.+)$/.exec(id);
    if (!m) throw new HttpError(400, `config: not a config id: ${id} (expected <root index>/<path under the root>)`);
    const root = this.roots[Number(m[1])];
    if (!root) throw new HttpError(404, `config: no config root number ${m[1]} (there are ${this.roots.length})`);
    root.real = realDir(root.given);
    const file = resolveInside(root.real, m[2]!, 'config', `the config root ${root.given}`);
    if (!YAML.test(file)) throw new HttpError(403, `config: only YAML files (.yaml, .yml) are configs, not ${m[2]}`);
    if (!isFileInside(root.real, file)) throw new HttpError(404, `config: no config file ${m[2]} under ${root.given}`);
    return { id, file, root };
  }
}
