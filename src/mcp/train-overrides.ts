/**
 * The `set` items of the MCP `train` tool, checked before the run starts: only keys of the
 * allow-list (`config/key-kinds.ts`) may be set; a path must lie inside the project (links
 * followed); a change of where requests go or which key goes with them (a role's backend,
 * `base_url`, `api_key_env`, the transfer targets, the queue) is returned for the user to confirm.
 * Every other key is refused: a config file of the project can set it.
 */
import { castValue, parseOverride } from '../config/cast.ts';
import { keyKind } from '../config/key-kinds.ts';
import { overridePath } from '../config/load.ts';
import { UserError } from '../errors.ts';
import { insideProject } from '../util/project-paths.ts';

export interface CheckedOverrides {
  /** The items as the CLI takes them. */
  items: string[];
  /** Those that change an endpoint or a key variable: the user confirms them first. */
  endpoints: string[];
}

function pathsIn(value: unknown): string[] | undefined {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value as string[];
  return undefined;
}

export function checkOverrides(project: string, set: string[]): CheckedOverrides {
  const endpoints: string[] = [];
  for (const [i, item] of set.entries()) {
    const where = `set[${i}]`;
    let parsed: { key: string; value: string };
    let value: unknown;
    try {
      parsed = parseOverride(item);
      value = castValue(parsed.value);
    } catch (err) {
      throw new UserError(`${where}: ${(err as Error).message}`);
    }
    const key = overridePath(parsed.key);
    const kind = keyKind(key, value);
    if (kind === undefined)
      throw new UserError(
        `${where}: ${parsed.key} cannot be set through the train tool (it may name a program, code or a file the tool cannot check); set it in a config file of the project`,
      );
    if (kind === 'path') {
      const paths = pathsIn(value);
      if (!paths) throw new UserError(`${where}: ${parsed.key} expects a path (or a list of paths) inside the project`);
      for (const p of paths) if (p !== '') insideProject(project, p, `${where}: ${parsed.key}`);
    }
    if (kind === 'endpoint') endpoints.push(item);
  }
  return { items: set, endpoints };
}
