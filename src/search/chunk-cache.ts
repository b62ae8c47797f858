import type { Decoded } from './bundle.ts';
import { countKept } from './kept.ts';

/** A file of the chunked index, decoded, with what was made from it (a widened column, the decision years). */
export type CachedChunk = {
  readonly bundle: Map<string, Decoded>;
  /** Values made from the bundle, kept and let go of with it. */
  readonly derived: Map<string, unknown>;
  /** The bundle's bytes plus those of its derived values. */
  bytes: number;
  pins: number;
  /** When it was last used (the cache's count of uses): the least recently used files go first. */
  used: number;
};

/**
 * The decoded files of the chunked index (src/search/chunked.ts), bounded by bytes, shared by every index that reads
 * through it (in a Worker, one per isolate). A file's name is its content's hash, so the same path always holds the
 * same bytes, whatever snapshot names it. The least recently used files go first, but never a pinned one: a request
 * pins the files it reads until it is answered, so that a budget smaller than one request's files makes that request
 * read each once (and go over the budget while it runs), never read them in a loop. `budget` Infinity keeps all.
 */
export class ChunkCache {
  readonly budget: number;
  private readonly map = new Map<string, CachedChunk>();
  private total = 0;
  /** Uses so far: a file's `used` is this count at its last use (kept per file, not by reordering the map). */
  private uses = 0;
  /** Bytes held outside the entries by the indexes' views (concatenated rows), counted against the budget. */
  private readonly extras = new Map<object, number>();
  private readonly onEvict = new Set<(path: string) => void>();
  /** Bytes other caches of the same memory hold now, each read when the cache counts (countAlso). */
  private readonly others = new Map<object, () => number>();

  constructor(budget: number) {
    if (!(budget >= 0)) throw new RangeError(`Expected \`budget\` to be a number of bytes from 0 and up, got ${String(budget)}`);
    this.budget = budget;
  }

  /** Bytes held now: files, what was made from them, the views over them, and what other caches counted here hold. */
  get bytes(): number {
    let extra = 0;
    for (const n of this.extras.values()) extra += n;
    for (const held of this.others.values()) extra += held();
    return this.total + extra;
  }

  /**
   * Counts what another cache of the same memory holds (`held`, read at each count) against this budget, so that the
   * budget bounds both: files are let go of to make room for the other's bytes, which keep their own bound. `null`
   * stops counting it. A Worker counts its record and answer caches here: its isolate has one budget.
   */
  countAlso(owner: object, held: (() => number) | null): void {
    if (held) this.others.set(owner, held);
    else this.others.delete(owner);
  }

  get size(): number {
    return this.map.size;
  }

  get(path: string): CachedChunk | undefined {
    const entry = this.map.get(path);
    if (entry) entry.used = ++this.uses;
    return entry;
  }

  has(path: string): boolean {
    return this.map.has(path);
  }

  /**
   * A file held, read without counting it as used: reading an index over every loaded file reads them all, and only
   * a request holding a file (`pin`) says that it is used.
   */
  peek(path: string): CachedChunk | undefined {
    return this.map.get(path);
  }

  /** The paths of the files held now. */
  paths(): IterableIterator<string> {
    return this.map.keys();
  }

  /** Keeps a decoded file (replacing none: a path's bytes never change); the caller trims when its request is done. */
  set(path: string, bundle: Map<string, Decoded>, bytes: number): CachedChunk {
    const known = this.map.get(path);
    if (known) return known;
    const entry: CachedChunk = { bundle, derived: new Map(), bytes, pins: 0, used: ++this.uses };
    this.map.set(path, entry);
    this.total += bytes;
    return entry;
  }

  /** Counts a value made from a file against the budget. */
  grow(path: string, entry: CachedChunk, bytes: number): void {
    entry.bytes += bytes;
    if (this.map.get(path) === entry) this.total += bytes;
  }

  /** A value made once from a file that is held, and kept with it (let go of when the file is). */
  derive<T>(path: string, name: string, make: () => T, bytes: (value: T) => number): T {
    const entry = this.peek(path)!;
    if (entry.derived.has(name)) return entry.derived.get(name) as T;
    const value = make();
    entry.derived.set(name, value);
    this.grow(path, entry, bytes(value));
    return value;
  }

  /** Bytes an index's view holds beyond the files (0 lets go of the count). */
  setExtra(owner: object, bytes: number): void {
    if (bytes > 0) this.extras.set(owner, bytes);
    else this.extras.delete(owner);
  }

  /** Adds to the bytes an owner holds beyond the files. */
  addExtra(owner: object, bytes: number): void {
    this.setExtra(owner, (this.extras.get(owner) ?? 0) + bytes);
  }

  /**
   * Counts what the engine keeps made from `key` (an array of this file's or made from it: kept.ts) with the file,
   * let go of with it.
   */
  countWith(path: string, key: object): void {
    const entry = this.map.get(path);
    if (entry) countKept(key, (bytes) => this.grow(path, entry, bytes));
  }

  /** Holds a file in for a request, and counts it as used now (a request's files go last); false when it is not held. */
  pin(path: string): boolean {
    const entry = this.get(path);
    if (entry) entry.pins++;
    return entry !== undefined;
  }

  unpin(path: string): void {
    const entry = this.map.get(path);
    if (entry && entry.pins > 0) entry.pins--;
  }

  /** Told of each file let go of (an index drops its view over it). */
  watch(listener: (path: string) => void): () => void {
    this.onEvict.add(listener);
    return () => this.onEvict.delete(listener);
  }

  /** Lets go of the least recently used unpinned files until what is held fits the budget (or only pinned ones are left). */
  trim(): void {
    if (this.bytes <= this.budget) return;
    const byUse = [...this.map].filter(([, entry]) => entry.pins === 0).sort((a, b) => a[1].used - b[1].used);
    for (const [path, entry] of byUse) {
      if (this.bytes <= this.budget) break;
      this.map.delete(path);
      this.total -= entry.bytes;
      for (const listener of this.onEvict) listener(path);
    }
  }
}

/** The files one request reads, kept in the cache until it is answered (`release`). */
export class Lease {
  private readonly cache: ChunkCache;
  private readonly held = new Set<string>();

  constructor(cache: ChunkCache) {
    this.cache = cache;
  }

  /** Whether this lease holds the file. */
  holds(path: string): boolean {
    return this.held.has(path);
  }

  /** The files held. */
  paths(): string[] {
    return [...this.held];
  }

  /** Whether every file held passes `test`. */
  every(test: (path: string) => boolean): boolean {
    for (const path of this.held) if (!test(path)) return false;
    return true;
  }

  /** Keeps a file in (once per lease); false when the cache does not hold it (nothing is kept then). */
  hold(path: string): boolean {
    if (this.held.has(path)) return true;
    if (!this.cache.pin(path)) return false;
    this.held.add(path);
    return true;
  }

  /** Lets the files go, and what was counted for the request beyond them (its own index), and the cache back down to its budget. */
  release(): void {
    for (const path of this.held) this.cache.unpin(path);
    this.held.clear();
    this.cache.setExtra(this, 0);
    this.cache.trim();
  }
}

/**
 * Bytes a decoded file holds: its buffer when a typed array is a view into it (else it is garbage once decoded),
 * typed arrays of their own, decoded rows, and JSON at two bytes a character.
 */
export function bundleBytes(raw: Uint8Array, bundle: Map<string, Decoded>): number {
  let n = 0;
  let views = false;
  for (const v of bundle.values()) {
    if ('rows' in v) n += v.rows.offsets.byteLength + v.rows.values.byteLength;
    else if ('json' in v) n += jsonBytes(v.json);
    else {
      const a = typedOf(v);
      if (a.buffer === raw.buffer) views = true;
      else n += a.byteLength;
    }
  }
  return n + (views ? raw.buffer.byteLength : 0);
}

function typedOf(v: { u8: Uint8Array } | { u16: Uint16Array } | { u32: Uint32Array }): Uint8Array | Uint16Array | Uint32Array {
  return 'u8' in v ? v.u8 : 'u16' in v ? v.u16 : v.u32;
}

/**
 * A decoded file without the bytes it was read as, when its typed arrays are a small part of them (a word's chunk,
 * whose rows, decoded, are most of it): those arrays are copied out, so that the buffer, whose varints are decoded
 * already, can go. A file that is mostly typed arrays (a column, a K number block) is left as it is: its arrays are
 * views into its buffer.
 */
export function withoutRawBytes(raw: Uint8Array, bundle: Map<string, Decoded>): Map<string, Decoded> {
  let typed = 0;
  for (const v of bundle.values()) if (!('rows' in v) && !('json' in v)) typed += typedOf(v).byteLength;
  if (typed * 4 >= raw.buffer.byteLength) return bundle;
  const out = new Map<string, Decoded>();
  for (const [name, v] of bundle) {
    if ('u8' in v) out.set(name, { u8: v.u8.slice() });
    else if ('u16' in v) out.set(name, { u16: v.u16.slice() });
    else if ('u32' in v) out.set(name, { u32: v.u32.slice() });
    else out.set(name, v);
  }
  return out;
}

function jsonBytes(value: unknown): number {
  if (typeof value === 'string') return 16 + value.length * 2;
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + 8 + jsonBytes(v), 16);
  if (typeof value === 'object' && value !== null) return Object.entries(value).reduce((n, [k, v]) => n + 8 + k.length * 2 + jsonBytes(v), 16);
  return 8;
}
