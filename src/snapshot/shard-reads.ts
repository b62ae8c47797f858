import type { ShardIndex } from '../contract/index.ts';
import { BufferPool } from '../utils/buffer-pool.ts';
import type { LruCache } from '../utils/lru.ts';
import { READ_BUFFER_MIN_BYTES, type CheckedReads, type ReadBuffers } from './checked-reads.ts';
import { indexLines, type ShardLines } from './lines.ts';

export type ShardKind = 'clearance' | 'product-code';
type Shard = ShardIndex['shards'][number];

/** What the snapshot's byte cache holds: verified shards (`s` + path) and records or files (`r` + K number, `f` + path). */
export type Cached = ShardLines | Uint8Array;

/** Lent buffers kept between requests, by size class up to 1 MiB: eight of the smallest, 1 MiB of each larger class. */
const lendPool = (): BufferPool => new BufferPool(READ_BUFFER_MIN_BYTES, 1024 * 1024, 8, 1024 * 1024);

/**
 * Whole shards, each checked against the manifest and indexed by line: kept in the byte cache (`lines`), lent for one
 * request in a buffer given back after (`lend`), or read straight into a caller's buffer as one JSON array
 * (`recordArrayInto`). A shard must hold one line per entry its index counts.
 */
export class ShardReads {
  /** Buffers record shards are read into for one request and given back after (see `lend`). */
  private readonly lendable = lendPool();

  /** Bytes of the buffers kept for lending. */
  get pooledBytes(): number {
    return this.lendable.keptBytes;
  }

  constructor(
    private readonly indexes: Readonly<Record<ShardKind, ShardIndex>>,
    private readonly reads: CheckedReads,
    private readonly cache: LruCache<string, Cached>,
    private readonly snapshotId: string,
  ) {}

  at(kind: ShardKind, position: number): Shard {
    const shard = this.indexes[kind].shards[position];
    if (!shard) throw new Error(`snapshot ${this.snapshotId} has no ${kind} shard ${position}`);
    return shard;
  }

  /** The shard at `path` when the byte cache holds it. */
  cached(path: string): ShardLines | undefined {
    return this.cache.get(`s${path}`) as ShardLines | undefined;
  }

  /** The i-th shard of a kind, checked whole against the manifest, with where each entry's line is; kept. */
  async lines(kind: ShardKind, position: number): Promise<ShardLines> {
    const shard = this.at(kind, position);
    const cached = this.cached(shard.path);
    if (cached) return cached;
    const lines = await this.read(kind, position);
    this.cache.set(`s${shard.path}`, lines);
    return lines;
  }

  /**
   * The i-th shard of a kind for one request: from the cache when it is there, else read into a buffer lent from a
   * small pool and checked as `lines` checks, without being kept. Its bytes are valid until `release()`, which gives
   * the buffer back. Record shards go this way: a catalog page or a record's first read uses a shard once, and a new
   * buffer for each read is work for the allocator and the garbage collector that a pool avoids.
   */
  async lend(kind: ShardKind, position: number): Promise<{ lines: ShardLines; release: () => void }> {
    const shard = this.at(kind, position);
    const cached = this.cached(shard.path);
    if (cached) return { lines: cached, release: () => {} };
    const buffers: ReadBuffers = { bytes: new Uint8Array(this.lendable.take(this.reads.entry(shard.path).bytes)) };
    let lent = true;
    const release = () => {
      if (!lent) return;
      lent = false;
      this.lendable.give(buffers.bytes.buffer);
    };
    try {
      return { lines: await this.read(kind, position, buffers), release };
    } catch (err) {
      release();
      throw err;
    }
  }

  /**
   * The i-th record shard's entries as one JSON array, `[e1,e2,…]`, read straight into `room(size)` (a buffer of at
   * least the file's `size` the caller gives) and checked as `lend` checks them: the file's bytes against the
   * manifest (hashed unless the file is provably the one that matched), and one line per entry. Then the newlines
   * are taken out in place: a shard is `[`, its entries each followed by `,` but the last, and `]`, a line each, and
   * JSON text has no raw newline inside a string. Returns the array's length in bytes, or null, with `room` not
   * called, when the byte cache holds the shard (the caller cuts its page from there). A catalog page that is one
   * whole shard is then made with no buffer lent and no copy of the page between the read and the answer.
   */
  async recordArrayInto(position: number, room: (size: number) => Uint8Array): Promise<number | null> {
    const shard = this.at('clearance', position);
    if (this.cached(shard.path)) return null;
    const into = room(this.reads.entry(shard.path).bytes);
    const read = await this.reads.whole(shard.path, { bytes: into });
    this.reads.verified.add(shard.path);
    // A storage that cannot read into a given buffer hands back bytes of its own.
    let bytes = read;
    if (read.buffer !== into.buffer || read.byteOffset !== into.byteOffset) {
      into.set(read);
      bytes = into.subarray(0, read.length);
    }
    // Newlines out, in place: each line moves left by the newlines before it.
    let end = 0;
    let from = 0;
    let lines = 0;
    for (;;) {
      const newline = bytes.indexOf(0x0a, from);
      const stop = newline < 0 ? bytes.length : newline;
      if (stop > from) {
        if (end !== from) bytes.copyWithin(end, from, stop);
        end += stop - from;
        lines++;
      }
      if (newline < 0) break;
      from = newline + 1;
    }
    // `[` and `]` are lines of their own.
    this.checkLineCount(shard, lines - 2);
    return end;
  }

  /** The i-th shard of a kind, read now (into `buffers` when given) and checked whole against the manifest, not kept. */
  async read(kind: ShardKind, position: number, buffers?: ReadBuffers): Promise<ShardLines> {
    const shard = this.at(kind, position);
    const bytes = await this.reads.whole(shard.path, buffers);
    const lines = indexLines(bytes, shard.count);
    this.checkLineCount(shard, lines.starts.length);
    this.reads.verified.add(shard.path);
    return lines;
  }

  /** A shard must hold one line per entry its index counts: a build that wrote otherwise is refused, not served. */
  private checkLineCount(shard: Shard, lines: number): void {
    if (lines !== shard.count) throw new Error(`${shard.path} of snapshot ${this.snapshotId} holds ${lines} lines for ${shard.count} entries`);
  }
}
