/**
 * Finding the JSON object in a model's reply: a ```json fence first, then the span from the
 * first '{' to the last '}', then a tolerant repair, but only when the text holds exactly one
 * object that looks like JSON (never a guess between several, never prose such as `{op: x}`).
 * With `whole`, an object the text ends inside (a reply cut off by the output limit) is not
 * repaired either: closing it would make up an ending the model never wrote.
 */
import { jsonrepair } from 'jsonrepair';

const FENCE = /```(?:json)?\s*\n?([\s\S]*?)```/i;

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Spans of top-level {...} objects, skipping braces inside double-quoted strings. */
export function topLevelObjects(text: string): string[] {
  const spans: string[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === '\\') escaped = true;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === '{') {
      if (depth === 0) start = i;
      depth++;
    } else if (ch === '}' && depth > 0) {
      depth--;
      if (depth === 0) spans.push(text.slice(start, i + 1));
    }
  }
  if (depth > 0 && start >= 0) spans.push(text.slice(start));
  return spans;
}

function looksLikeJson(candidate: string): boolean {
  return /^\{\s*["}]/.test(candidate.trim());
}

/** Whether `text` ends inside an object it opened (or inside a string of one). */
export function endsInsideObject(text: string): boolean {
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (const ch of text) {
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === '\\') escaped = true;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = depth > 0;
    else if (ch === '{') depth++;
    else if (ch === '}' && depth > 0) depth--;
  }
  return depth > 0;
}

export function extractJson(text: string, options: { whole?: boolean } = {}): unknown {
  if (!text) return undefined;
  const fence = text.match(FENCE);
  if (fence) {
    const parsed = tryParse(fence[1]!.trim());
    if (parsed !== undefined) return parsed;
  }
  const first = text.indexOf('{');
  const last = text.lastIndexOf('}');
  if (first >= 0 && last > first) {
    const parsed = tryParse(text.slice(first, last + 1));
    if (parsed !== undefined) return parsed;
  }
  let candidate: string | undefined;
  if (fence) {
    const inFence = topLevelObjects(fence[1]!);
    if (inFence.length === 1) candidate = inFence[0];
  }
  if (candidate === undefined) {
    const objects = topLevelObjects(text);
    if (objects.length === 1) candidate = objects[0];
  }
  if (candidate === undefined || !looksLikeJson(candidate)) return undefined;
  if (options.whole && endsInsideObject(candidate)) return undefined;
  try {
    const repaired = JSON.parse(jsonrepair(candidate)) as unknown;
    return repaired && typeof repaired === 'object' && !Array.isArray(repaired) && Object.keys(repaired).length > 0
      ? repaired
      : undefined;
  } catch {
    return undefined;
  }
}
