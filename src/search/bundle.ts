/**
 * The byte format of one file of the chunked search index (src/contract/search-chunks.ts): a few named values in one
 * buffer. Layout: a u32 (little-endian) giving the length of a JSON header, the header, then each value's bytes at the
 * offset the header gives. Values are JSON, a typed array (u8, u16, u32, little-endian, at a multiple of its width),
 * or rows (lists of ascending ids, such as a word's documents) as LEB128 varints: per row its length, then its first
 * id and the gaps between ids. Gaps of sorted lists are small, so rows take one or two bytes a posting where a u32
 * takes four. Pure and portable: the build writes bundles, a browser or a Worker reads them.
 */
import type { Rows } from './csr.ts';

export type BundleValue =
  | { json: unknown }
  | { u8: Uint8Array }
  | { u16: Uint16Array }
  | { u32: Uint32Array }
  | { rows: Rows };

type Entry = { name: string; kind: 'json' | 'u8' | 'u16' | 'u32' | 'rows'; offset: number; bytes: number; count?: number; total?: number };

export class BundleFormatError extends Error {
  override name = 'BundleFormatError';
}

/** Grows as varints are written. */
class Writer {
  buf = new Uint8Array(1024);
  length = 0;
  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }
  varint(v: number): void {
    this.room(5);
    while (v >= 0x80) {
      this.buf[this.length++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[this.length++] = v;
  }
  view(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}

/** Rows as varints: each row's length, then its ids as gaps. Throws on a row that does not ascend. */
export function encodeRows(rows: Rows): Uint8Array {
  const w = new Writer();
  const { offsets, values } = rows;
  for (let r = 0; r + 1 < offsets.length; r++) {
    const from = offsets[r]!;
    const to = offsets[r + 1]!;
    w.varint(to - from);
    let last = 0;
    for (let i = from; i < to; i++) {
      const v = values[i]!;
      if (i > from && v <= last) throw new RangeError(`row ${r} does not ascend`);
      w.varint(i === from ? v : v - last);
      last = v;
    }
  }
  return w.view();
}

/** `count` rows holding `total` ids from their varints; a format error on bytes that do not decode to exactly that. */
export function decodeRows(bytes: Uint8Array, count: number, total: number): Rows {
  const offsets = new Uint32Array(count + 1);
  const values = new Uint32Array(total);
  let at = 0;
  let n = 0;
  const next = (): number => {
    let v = 0;
    let shift = 0;
    for (;;) {
      if (at >= bytes.length) throw new BundleFormatError('rows end early');
      const b = bytes[at++]!;
      v += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return v;
      shift += 7;
      if (shift > 28) throw new BundleFormatError('a varint is longer than five bytes');
    }
  };
  for (let r = 0; r < count; r++) {
    const len = next();
    if (n + len > total) throw new BundleFormatError('rows hold more ids than stated');
    let last = 0;
    for (let i = 0; i < len; i++) {
      last = i === 0 ? next() : last + next();
      values[n++] = last;
    }
    offsets[r + 1] = n;
  }
  if (n !== total || at !== bytes.length) throw new BundleFormatError('rows hold fewer ids than stated');
  return { offsets, values };
}

const WIDTH = { u8: 1, u16: 2, u32: 4 } as const;

function isLittleEndian(): boolean {
  return new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
}

/** The named values as one buffer. */
export function encodeBundle(values: Record<string, BundleValue>): Uint8Array {
  if (!isLittleEndian()) throw new Error('bundles are written on little-endian machines only');
  const pieces: Uint8Array[] = [];
  const entries: Entry[] = [];
  let offset = 0;
  for (const [name, v] of Object.entries(values)) {
    let bytes: Uint8Array;
    let entry: Entry;
    if ('json' in v) {
      bytes = new TextEncoder().encode(JSON.stringify(v.json));
      entry = { name, kind: 'json', offset, bytes: bytes.length };
    } else if ('rows' in v) {
      bytes = encodeRows(v.rows);
      entry = { name, kind: 'rows', offset, bytes: bytes.length, count: v.rows.offsets.length - 1, total: v.rows.values.length };
    } else {
      const kind = 'u8' in v ? 'u8' : 'u16' in v ? 'u16' : 'u32';
      const arr = 'u8' in v ? v.u8 : 'u16' in v ? v.u16 : v.u32;
      bytes = new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength);
      entry = { name, kind, offset, bytes: bytes.length };
    }
    entries.push(entry);
    pieces.push(bytes);
    offset += bytes.length;
    const pad = (8 - (offset % 8)) % 8;
    if (pad) {
      pieces.push(new Uint8Array(pad));
      offset += pad;
    }
  }
  const header = new TextEncoder().encode(JSON.stringify(entries));
  // The values start at a multiple of 8 after the header, so that a reader can lay a typed array over them.
  const start = Math.ceil((4 + header.length) / 8) * 8;
  const out = new Uint8Array(start + offset);
  new DataView(out.buffer).setUint32(0, header.length, true);
  out.set(header, 4);
  let at = start;
  for (const p of pieces) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export type Decoded = { json: unknown } | { u8: Uint8Array } | { u16: Uint16Array } | { u32: Uint32Array } | { rows: Rows };

/** The named values of a bundle; a BundleFormatError on bytes that are not one. Typed arrays are views, not copies. */
export function decodeBundle(bytes: Uint8Array): Map<string, Decoded> {
  if (bytes.length < 4) throw new BundleFormatError('too short for a bundle');
  const headerLength = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0, true);
  if (4 + headerLength > bytes.length) throw new BundleFormatError('the header runs past the end');
  let entries: Entry[];
  try {
    entries = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + headerLength))) as Entry[];
  } catch {
    throw new BundleFormatError('the header is not JSON');
  }
  if (!Array.isArray(entries)) throw new BundleFormatError('the header is not a list');
  const start = Math.ceil((4 + headerLength) / 8) * 8;
  // Typed arrays need an aligned offset into their buffer: copy once when the bytes sit at an odd place.
  const base = (bytes.byteOffset + start) % 8 === 0 ? bytes : bytes.slice();
  const out = new Map<string, Decoded>();
  for (const e of entries) {
    if (!Number.isInteger(e.offset) || !Number.isInteger(e.bytes) || e.offset < 0 || e.bytes < 0 || start + e.offset + e.bytes > base.length) {
      throw new BundleFormatError(`value ${String(e.name)} lies outside the bundle`);
    }
    const raw = base.subarray(start + e.offset, start + e.offset + e.bytes);
    if (e.kind === 'json') {
      try {
        out.set(e.name, { json: JSON.parse(new TextDecoder().decode(raw)) });
      } catch {
        throw new BundleFormatError(`value ${e.name} is not JSON`);
      }
    } else if (e.kind === 'rows') {
      out.set(e.name, { rows: decodeRows(raw, e.count ?? 0, e.total ?? 0) });
    } else if (e.kind === 'u8' || e.kind === 'u16' || e.kind === 'u32') {
      const w = WIDTH[e.kind];
      if (e.bytes % w !== 0) throw new BundleFormatError(`value ${e.name} is not a whole number of ${e.kind}`);
      const at = raw.byteOffset;
      const arr = e.kind === 'u8' ? new Uint8Array(raw.buffer, at, e.bytes) : e.kind === 'u16' ? new Uint16Array(raw.buffer, at, e.bytes / 2) : new Uint32Array(raw.buffer, at, e.bytes / 4);
      out.set(e.name, { [e.kind]: arr } as Decoded);
    } else throw new BundleFormatError(`value ${String(e.name)} has an unknown kind`);
  }
  return out;
}

/** One value of a decoded bundle, of the kind expected; a BundleFormatError otherwise. */
export function valueOf<K extends 'json' | 'u8' | 'u16' | 'u32' | 'rows'>(
  bundle: Map<string, Decoded>,
  name: string,
  kind: K,
): Extract<Decoded, Record<K, unknown>>[K] {
  const v = bundle.get(name) as Record<string, unknown> | undefined;
  if (!v || !(kind in v)) throw new BundleFormatError(`the bundle has no ${kind} value ${name}`);
  return v[kind] as Extract<Decoded, Record<K, unknown>>[K];
}
