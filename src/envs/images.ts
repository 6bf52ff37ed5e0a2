/** Image references in data: URLs and data URIs as they are, local paths resolved and checked. */
import fs from 'node:fs';
import path from 'node:path';

export function isRemoteImage(ref: string): boolean {
  return /^(https?:|data:)/i.test(ref);
}

/** The absolute path of a local image, looked up under each base directory in turn; undefined when absent. */
export function resolveImage(ref: string, baseDirs: readonly string[]): string | undefined {
  if (isRemoteImage(ref)) return ref;
  if (path.isAbsolute(ref)) return fs.existsSync(ref) ? ref : undefined;
  for (const dir of baseDirs) {
    const candidate = path.resolve(dir, ref);
    if (fs.existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** One or several image references from a field: a string, a list, or a JSON list in a string. */
export function imageRefs(value: unknown): string[] {
  if (value === undefined || value === null || value === '') return [];
  if (Array.isArray(value)) return value.flatMap(imageRefs);
  if (typeof value === 'string') {
    const t = value.trim();
    if (t.startsWith('[')) {
      try {
        const parsed: unknown = JSON.parse(t);
        if (Array.isArray(parsed)) return parsed.flatMap(imageRefs);
      } catch {
        // a path that starts with '['
      }
    }
    return [t];
  }
  return [String(value)];
}
