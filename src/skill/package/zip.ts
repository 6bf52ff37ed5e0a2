/**
 * The zip format, as far as skill archives need it. Writing goes through fflate; reading parses
 * the central directory here, because the Unix mode (kept in an entry's external attributes, so
 * that scripts stay executable) is what no maintained reader hands back, and because each entry
 * is inflated under a cap: an entry that inflates past the size it declares is stopped there
 * (a zip bomb's lie), not held in memory whole.
 *
 * Read: stored and deflated entries, Zip64 sizes and offsets, UTF-8 or ASCII names. Refused:
 * encrypted entries, other compression methods, archives split over disks, entries whose bytes
 * overlap (the other zip bomb's trick) or lie outside the file, a CRC that does not match.
 */
import { Inflate, zipSync, type Zippable } from 'fflate';
import { PackageError } from './errors.ts';

export type EntryType = 'file' | 'directory' | 'symlink' | 'special';

export interface ZipEntry {
  /** The entry's name as stored (a directory's ends with '/'). */
  name: string;
  type: EntryType;
  /** Permission bits from the external attributes (0 when the archive keeps none). */
  mode: number;
  /** Declared sizes, from the central directory. */
  size: number;
  compressedSize: number;
  method: number;
  crc: number;
  /** Where the entry's compressed bytes start in the archive. */
  dataStart: number;
}

const SIG_EOCD = 0x06054b50;
const SIG_ZIP64_LOCATOR = 0x07064b50;
const SIG_ZIP64_EOCD = 0x06064b50;
const SIG_CENTRAL = 0x02014b50;
const SIG_LOCAL = 0x04034b50;
const STORED = 0;
const DEFLATED = 8;
const FLAG_ENCRYPTED = 0x1;
const FLAG_UTF8 = 0x800;
const S_IFMT = 0o170000;
/** Input fed to the inflater at a time: deflate expands at most ~1,032 times, so one feed yields at most ~16 MB. */
const INFLATE_FEED = 16 * 1024;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

class Reader {
  readonly view: DataView;
  constructor(
    readonly bytes: Uint8Array,
    readonly where: string,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  fail(message: string): never {
    throw new PackageError(
      'bad-archive',
      this.where,
      `${this.where} is not a zip archive skillopt can read: ${message}`,
    );
  }
  need(offset: number, length: number, what: string): void {
    if (offset < 0 || offset + length > this.bytes.byteLength) this.fail(`its ${what} lies outside the file`);
  }
  u16(offset: number): number {
    return this.view.getUint16(offset, true);
  }
  u32(offset: number): number {
    return this.view.getUint32(offset, true);
  }
  u64(offset: number): number {
    const value = this.view.getBigUint64(offset, true);
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) this.fail('a Zip64 size or offset is out of range');
    return Number(value);
  }
}

/** Where the central directory is and how many entries it holds. */
function centralDirectory(r: Reader): { offset: number; size: number; count: number } {
  const len = r.bytes.byteLength;
  let eocd = -1;
  for (let at = len - 22; at >= 0 && at >= len - 22 - 0xffff; at--) {
    if (r.u32(at) === SIG_EOCD) {
      eocd = at;
      break;
    }
  }
  if (eocd < 0) r.fail('it has no end of central directory record');
  if (r.u16(eocd + 4) !== 0 || r.u16(eocd + 6) !== 0) r.fail('it is split over several disks');
  let count = r.u16(eocd + 10);
  let size = r.u32(eocd + 12);
  let offset = r.u32(eocd + 16);
  if ((count === 0xffff || size === 0xffffffff || offset === 0xffffffff) && eocd >= 20) {
    if (r.u32(eocd - 20) === SIG_ZIP64_LOCATOR) {
      const at = r.u64(eocd - 12);
      r.need(at, 56, 'Zip64 end of central directory');
      if (r.u32(at) !== SIG_ZIP64_EOCD) r.fail('its Zip64 end of central directory record is missing');
      count = r.u64(at + 32);
      size = r.u64(at + 40);
      offset = r.u64(at + 48);
    }
  }
  r.need(offset, size, 'central directory');
  return { offset, size, count };
}

/** The values a Zip64 extra field (id 1) holds for the fixed fields set to their maximum. */
function zip64Values(r: Reader, extraStart: number, extraLength: number, wanted: boolean[]): number[] {
  let at = extraStart;
  const end = extraStart + extraLength;
  while (at + 4 <= end) {
    const id = r.u16(at);
    const length = r.u16(at + 2);
    if (id === 0x0001) {
      const values: number[] = [];
      let p = at + 4;
      for (const w of wanted) {
        if (!w) continue;
        if (p + 8 > at + 4 + length) r.fail('a Zip64 extra field is too short');
        values.push(r.u64(p));
        p += 8;
      }
      return values;
    }
    at += 4 + length;
  }
  return r.fail('an entry marks its sizes as Zip64 but has no Zip64 extra field');
}

function decodeName(r: Reader, raw: Uint8Array, flags: number): string {
  if (!(flags & FLAG_UTF8) && raw.every((b) => b < 0x80)) return String.fromCharCode(...raw);
  try {
    return utf8.decode(raw);
  } catch {
    return r.fail('an entry name is neither ASCII nor UTF-8');
  }
}

function typeAndMode(versionMadeBy: number, external: number, name: string): { type: EntryType; mode: number } {
  // The Unix mode sits in the upper 16 bits (Info-ZIP and Python on Unix, 7-Zip on Windows);
  // archives made on DOS or Windows leave it 0 and mark a directory with attribute bit 0x10.
  const unix = external >>> 16;
  const dosDirectory = versionMadeBy >> 8 === 0 && (external & 0x10) !== 0;
  const kind = unix & S_IFMT;
  const type: EntryType =
    kind === 0o120000
      ? 'symlink'
      : kind === 0o040000 || name.endsWith('/') || dosDirectory
        ? 'directory'
        : kind === 0 || kind === 0o100000
          ? 'file'
          : 'special';
  return { type, mode: unix & 0o777 };
}

/**
 * The archive's entries, in the order of its central directory, checked for the format's traps;
 * more than `maxEntries` is refused before any is parsed.
 */
export function readZipEntries(bytes: Uint8Array, where: string, maxEntries = Number.POSITIVE_INFINITY): ZipEntry[] {
  const r = new Reader(bytes, where);
  if (bytes.byteLength < 22) r.fail('it is too short');
  const dir = centralDirectory(r);
  if (dir.count > maxEntries)
    throw new PackageError(
      'too-large',
      where,
      `${where} holds ${dir.count.toLocaleString('en')} entries, more than the ${maxEntries.toLocaleString('en')} a package's files and folders may have`,
    );
  const entries: (ZipEntry & { headerStart: number })[] = [];
  let at = dir.offset;
  for (let i = 0; i < dir.count; i++) {
    r.need(at, 46, 'central directory');
    if (r.u32(at) !== SIG_CENTRAL) r.fail('its central directory is damaged');
    const versionMadeBy = r.u16(at + 4);
    const flags = r.u16(at + 8);
    const method = r.u16(at + 10);
    const crc = r.u32(at + 16);
    let compressedSize = r.u32(at + 20);
    let size = r.u32(at + 24);
    const nameLength = r.u16(at + 28);
    const extraLength = r.u16(at + 30);
    const commentLength = r.u16(at + 32);
    const external = r.u32(at + 38);
    let headerStart = r.u32(at + 42);
    r.need(at + 46, nameLength + extraLength + commentLength, 'central directory');
    const rawName = bytes.subarray(at + 46, at + 46 + nameLength);
    const name = decodeName(r, rawName, flags);
    const wanted = [size === 0xffffffff, compressedSize === 0xffffffff, headerStart === 0xffffffff];
    if (wanted.some(Boolean)) {
      const values = zip64Values(r, at + 46 + nameLength, extraLength, wanted);
      if (wanted[0]) size = values.shift()!;
      if (wanted[1]) compressedSize = values.shift()!;
      if (wanted[2]) headerStart = values.shift()!;
    }
    if (flags & FLAG_ENCRYPTED) r.fail(`'${name}' is encrypted`);
    const { type, mode } = typeAndMode(versionMadeBy, external, name);
    if (type === 'file' && method !== STORED && method !== DEFLATED)
      r.fail(`'${name}' uses compression method ${method}; only stored (0) and deflate (8) are read`);
    r.need(headerStart, 30, `local header of '${name}'`);
    if (r.u32(headerStart) !== SIG_LOCAL) r.fail(`the local header of '${name}' is missing`);
    const localNameLength = r.u16(headerStart + 26);
    const localName = bytes.subarray(headerStart + 30, headerStart + 30 + localNameLength);
    if (localNameLength !== nameLength || !localName.every((b, k) => b === rawName[k]))
      r.fail(`the local header of '${name}' names another file`);
    const dataStart = headerStart + 30 + localNameLength + r.u16(headerStart + 28);
    if (dataStart + compressedSize > dir.offset) r.fail(`the bytes of '${name}' run into the central directory`);
    entries.push({ name, type, mode, size, compressedSize, method, crc, dataStart, headerStart });
    at += 46 + nameLength + extraLength + commentLength;
  }
  const byOffset = [...entries].sort((a, b) => a.headerStart - b.headerStart);
  for (let i = 1; i < byOffset.length; i++) {
    const before = byOffset[i - 1]!;
    const entry = byOffset[i]!;
    if (entry.headerStart < before.dataStart + before.compressedSize)
      throw new PackageError(
        'zip-bomb',
        `${where}: ${entry.name}`,
        `${where} is refused: the entries '${before.name}' and '${entry.name}' share their bytes (overlapping entries, a zip bomb's trick)`,
      );
  }
  return entries.map(({ headerStart: _, ...entry }) => entry);
}

/**
 * The bytes of a file entry, checked: inflation stops as soon as it passes the size the entry
 * declares (`zip-bomb`), and the result must have exactly that size and its CRC.
 */
export function readZipEntry(bytes: Uint8Array, entry: ZipEntry, where: string): Uint8Array {
  const r = new Reader(bytes, where);
  const data = bytes.subarray(entry.dataStart, entry.dataStart + entry.compressedSize);
  let out: Uint8Array;
  if (entry.method === STORED) {
    if (entry.compressedSize !== entry.size)
      r.fail(`'${entry.name}' is stored with ${entry.compressedSize} bytes but declares ${entry.size}`);
    out = data.slice();
  } else {
    out = new Uint8Array(entry.size);
    let filled = 0;
    const inflater = new Inflate((chunk) => {
      if (filled + chunk.length > entry.size)
        throw new PackageError(
          'zip-bomb',
          `${where}: ${entry.name}`,
          `${where} is refused: '${entry.name}' inflates to more than the ${entry.size.toLocaleString('en')} bytes it declares (a zip bomb's lie)`,
        );
      out.set(chunk, filled);
      filled += chunk.length;
    });
    try {
      if (data.length === 0) inflater.push(data, true);
      for (let at = 0; at < data.length; at += INFLATE_FEED)
        inflater.push(data.subarray(at, at + INFLATE_FEED), at + INFLATE_FEED >= data.length);
    } catch (err) {
      if (err instanceof PackageError) throw err;
      r.fail(`'${entry.name}' does not inflate: ${(err as Error).message}`);
    }
    if (filled !== entry.size) r.fail(`'${entry.name}' inflates to ${filled} bytes but declares ${entry.size}`);
  }
  if (crc32(out) !== entry.crc) r.fail(`'${entry.name}' does not match its CRC: the archive is damaged`);
  return out;
}

export interface ZipFileInput {
  name: string;
  bytes: Uint8Array;
  mode: number;
}

/** The date every entry carries, so that the same files always give the same archive bytes. */
const FIXED_TIME = new Date(1980, 0, 1, 0, 0, 0);

/**
 * A zip of `files` in their order, as Python's `zipfile` writes one on Unix: each entry deflated
 * (level 6, zlib's default), made by Unix (version 2.0), its mode in the upper 16 bits of the
 * external attributes with the regular-file type, no directory entries; one fixed date.
 */
export function writeZip(files: readonly ZipFileInput[]): Uint8Array {
  const zippable: Zippable = {};
  for (const file of files)
    zippable[file.name] = [file.bytes, { level: 6, os: 3, attrs: (0o100000 | file.mode) << 16, mtime: FIXED_TIME }];
  return zipSync(zippable);
}

let crcTable: Uint32Array | undefined;

/** The CRC-32 of zip (and gzip, PNG): polynomial 0xEDB88320, reflected. */
export function crc32(bytes: Uint8Array): number {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (const b of bytes) crc = crcTable[(crc ^ b) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
