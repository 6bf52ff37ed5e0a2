/**
 * Bad data: an unreadable file, a missing field, an empty split, a duplicate id. The message
 * names the file, the line (or row) and the field, so the user can go straight to it.
 */
import { UserError } from '../../errors.ts';

/** Where a record came from: its file and, when known, its line (text files) or row (Parquet). */
export interface Location {
  file: string;
  /** 1-based line of the record's start in a text file. */
  line?: number;
  /** 1-based position of the record in its file (its row, line record or array element). */
  index?: number;
  /** How `index` is called for this format. */
  unit?: 'item' | 'row' | 'record';
}

export function formatLocation(loc: Location): string {
  if (loc.line !== undefined && loc.index !== undefined && loc.unit === 'item')
    return `${loc.file}:${loc.line} (item ${loc.index})`;
  if (loc.line !== undefined) return `${loc.file}:${loc.line}`;
  if (loc.index !== undefined) return `${loc.file}: ${loc.unit ?? 'record'} ${loc.index}`;
  return loc.file;
}

export class DataError extends UserError {
  override name = 'DataError';
  constructor(
    message: string,
    readonly location?: Location,
    readonly field?: string,
  ) {
    super(location ? `${formatLocation(location)}: ${message}` : message);
  }
}
