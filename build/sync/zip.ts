import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { pipeline, Readable } from 'node:stream';
import { crc32 as zlibCrc32, createInflateRaw } from 'node:zlib';

/**
 * Reads a zip without holding it: the central directory from the file's tail (a truncated download loses it first),
 * then one entry at a time, streamed through inflate with a cap on the bytes it may inflate to, each entry's size and
 * CRC-32 checked against the directory. Entries nobody asks for are never inflated.
 */

/** Bytes a zip is read from: a file on disk, or bytes in memory (tests). */
export type ZipSource = {
  size: number;
  read(offset: number, length: number): Promise<Buffer>;
  /** The bytes from `start` to `end` inclusive. */
  stream(start: number, end: number): Readable;
  close(): Promise<void>;
};

export type ZipEntryInfo = { name: string; method: number; crc: number; compressedSize: number; size: number; localOffset: number };

export type ZipEntry = { name: string; bytes: Uint8Array };

/** An entry inflated past its cap. */
export class EntryLimitError extends Error {
  override readonly name = 'EntryLimitError';
}

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
const ZIP64_MARK = 0xffffffff;

export async function fileZipSource(path: string): Promise<ZipSource> {
  const handle = await open(path, 'r');
  const { size } = await handle.stat();
  return {
    size,
    async read(offset, length) {
      const out = Buffer.alloc(Math.max(0, Math.min(length, size - offset)));
      let got = 0;
      while (got < out.length) {
        const { bytesRead } = await handle.read(out, got, out.length - got, offset + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      return out.subarray(0, got);
    },
    // A descriptor of its own: destroying a stream made from the handle would close the handle too.
    stream: (start, end) => createReadStream(path, { start, end, highWaterMark: 64 * 1024 }),
    close: () => handle.close(),
  };
}

export function bytesZipSource(bytes: Uint8Array): ZipSource {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return {
    size: buf.length,
    read: async (offset, length) => buf.subarray(offset, offset + length),
    stream: (start, end) => Readable.from([buf.subarray(start, end + 1)]),
    close: async () => {},
  };
}

/** The entries the central directory lists, folders included (their names end in `/`). */
export async function zipDirectory(src: ZipSource): Promise<ZipEntryInfo[]> {
  // The end record is 22 bytes plus a comment of at most 65,535.
  const tailStart = Math.max(0, src.size - 22 - 0xffff);
  const tail = await src.read(tailStart, src.size - tailStart);
  let eocd = -1;
  for (let i = tail.length - 22; i >= 0; i--) {
    if (tail.readUInt32LE(i) === EOCD) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error('not a complete zip: no end-of-central-directory record (truncated?)');
  const count = tail.readUInt16LE(eocd + 10);
  const dirSize = tail.readUInt32LE(eocd + 12);
  const dirOffset = tail.readUInt32LE(eocd + 16);
  if (dirOffset + dirSize > tailStart + eocd) throw new Error('not a complete zip: the central directory lies past the end record');
  const dir = await src.read(dirOffset, dirSize);
  const out: ZipEntryInfo[] = [];
  let p = 0;
  for (let n = 0; n < count; n++) {
    if (p + 46 > dir.length || dir.readUInt32LE(p) !== CENTRAL) throw new Error('not a complete zip: damaged central directory');
    const nameLength = dir.readUInt16LE(p + 28);
    const extraLength = dir.readUInt16LE(p + 30);
    const commentLength = dir.readUInt16LE(p + 32);
    const entry: ZipEntryInfo = {
      method: dir.readUInt16LE(p + 10),
      crc: dir.readUInt32LE(p + 16),
      compressedSize: dir.readUInt32LE(p + 20),
      size: dir.readUInt32LE(p + 24),
      localOffset: dir.readUInt32LE(p + 42),
      name: dir.subarray(p + 46, p + 46 + nameLength).toString('latin1'),
    };
    applyZip64(entry, dir.subarray(p + 46 + nameLength, p + 46 + nameLength + extraLength));
    out.push(entry);
    p += 46 + nameLength + extraLength + commentLength;
  }
  return out;
}

/** A ZIP64 extra field holds, in this order, each of the three values whose 32-bit field is all ones. */
function applyZip64(entry: ZipEntryInfo, extra: Buffer): void {
  for (let q = 0; q + 4 <= extra.length; ) {
    const id = extra.readUInt16LE(q);
    const length = extra.readUInt16LE(q + 2);
    if (id === 0x0001) {
      let r = q + 4;
      const next = (): number => {
        if (r + 8 > q + 4 + length) throw new Error('not a complete zip: damaged ZIP64 field');
        const value = Number(extra.readBigUInt64LE(r));
        r += 8;
        return value;
      };
      if (entry.size === ZIP64_MARK) entry.size = next();
      if (entry.compressedSize === ZIP64_MARK) entry.compressedSize = next();
      if (entry.localOffset === ZIP64_MARK) entry.localOffset = next();
      return;
    }
    q += 4 + length;
  }
}

/**
 * Inflates one entry in chunks handed to `onChunk`, never more than `limit` bytes: an entry whose directory declares
 * more is refused before anything is inflated, and one that inflates past its declared size (a directory may lie)
 * stops there. `limitName` names the limit in the message.
 */
export async function inflateEntry(src: ZipSource, entry: ZipEntryInfo, limit: number, limitName: string, onChunk: (chunk: Buffer) => void): Promise<number> {
  const n = (v: number) => v.toLocaleString('en-US');
  if (entry.size > limit) throw new EntryLimitError(`${entry.name} would inflate to ${n(entry.size)} bytes, past the limit of ${n(limit)} bytes (${limitName})`);
  const local = await src.read(entry.localOffset, 30);
  if (local.length < 30 || local.readUInt32LE(0) !== LOCAL) throw new Error(`not a complete zip: no local header for ${entry.name}`);
  const start = entry.localOffset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
  if (start + entry.compressedSize > src.size) throw new Error(`not a complete zip: ${entry.name} runs past the end of the file`);
  if (entry.method !== 0 && entry.method !== 8) throw new Error(`${entry.name} uses compression method ${entry.method}, which this reader does not inflate`);
  const raw = entry.compressedSize === 0 ? Readable.from([]) : src.stream(start, start + entry.compressedSize - 1);
  const data: Readable = entry.method === 8 ? pipeline(raw, createInflateRaw(), () => {}) : raw;
  let total = 0;
  let crc = 0;
  try {
    for await (const chunk of data as AsyncIterable<Buffer>) {
      total += chunk.byteLength;
      if (total > limit) throw new EntryLimitError(`${entry.name} inflates past the limit of ${n(limit)} bytes (${limitName}); inflating stopped there`);
      crc = zlibCrc32(chunk, crc);
      onChunk(chunk);
    }
  } catch (err) {
    if (err instanceof EntryLimitError) throw err;
    throw new Error(`the zip does not inflate (${entry.name}: ${(err as Error).message})`);
  } finally {
    raw.destroy();
    data.destroy();
  }
  // 0xFFFFFFFF without a ZIP64 field is a size the 32-bit field cannot hold: the CRC still decides.
  if (entry.size !== ZIP64_MARK && total !== entry.size) throw new Error(`${entry.name} inflates to ${total} bytes where the zip says ${entry.size}`);
  if (crc !== entry.crc) throw new Error(`${entry.name} fails its CRC-32 check`);
  return total;
}

/** Every file entry of a zip in memory, checked (for tests and small zips). */
export async function readZip(bytes: Uint8Array, limit = Number.MAX_SAFE_INTEGER): Promise<ZipEntry[]> {
  const src = bytesZipSource(bytes);
  const out: ZipEntry[] = [];
  for (const entry of await zipDirectory(src)) {
    if (entry.name.endsWith('/')) continue;
    const chunks: Buffer[] = [];
    await inflateEntry(src, entry, limit, 'limit', (c) => chunks.push(c));
    out.push({ name: entry.name, bytes: Buffer.concat(chunks) });
  }
  return out;
}

export function crc32(data: Uint8Array): number {
  return zlibCrc32(data) >>> 0;
}
