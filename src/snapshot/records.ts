import { RECORD_TABLE, type ShardIndex } from '../contract/index.ts';
import type { LruCache } from '../utils/lru.ts';
import type { CheckedReads, ReadBuffers } from './checked-reads.ts';
import { bytesEqual } from './storage.ts';
import { shardPositionHolding } from './keys.ts';
import { findLine } from './lines.ts';
import { findEntry, type HeldTable, type RecordTable } from './record-table.ts';
import type { Cached, ShardReads } from './shard-reads.ts';

/** Reads of records made past the cache, and how many of them were slow (SnapshotOptions.slowReadMs): a caller's counters. */
export type ReadCounts = { reads: number; slow: number };

/**
 * Where a long run of record reads may give the host its turn: `pause`, told how many records were handed over since
 * it was last called (or the start), is awaited before a read once they are `every` or more, never after the last read. Reads from a local disk are
 * synchronous, so without it a batch of an export's reads (thousands of records, each opened, read and hashed) holds
 * the event loop from its first read to its last.
 */
export type ReadSlices = { every: number; pause: (handed: number) => Promise<void> };

/** Records handed over since the last pause, and when to pause before the next read. */
type SliceState = { slices: ReadSlices; handed: number };

async function beforeRead(state: SliceState | undefined): Promise<void> {
  if (!state || state.handed < state.slices.every) return;
  const handed = state.handed;
  state.handed = 0;
  await state.slices.pause(handed);
}

/**
 * Records of one shard fewer bytes apart than this are read together for an export, unless the storage says otherwise
 * (`SnapshotStorage.rangeGapBytes`): on a local disk reading the gap costs less than another open and read of the file
 * (a record is a kilobyte or so, a shard a hundred kilobytes or so).
 */
const RECORD_GAP = 16 * 1024;

/**
 * Single records, cut from verified bytes: a record shard is checked whole against the manifest the first time it is
 * used in a snapshot, so that a file that does not match is never used at all; after that, each record is read from
 * the byte range the record table gives and checked against the table's digest of it.
 */
export class RecordReads {
  constructor(
    private readonly recordIndex: ShardIndex,
    private readonly reads: CheckedReads,
    private readonly table: RecordTable,
    private readonly shards: ShardReads,
    private readonly cache: LruCache<string, Cached>,
    private readonly snapshotId: string,
    private readonly slowReadMs: number,
  ) {}

  private missing(kNumber: string | undefined): Error {
    return new Error(`snapshot ${this.snapshotId} has no record ${kNumber}`);
  }

  /** A record, through the cache when `keep` (what it reads is kept), or past it, into `buffers` when given. */
  async read(kNumber: string, keep: boolean, buffers?: ReadBuffers): Promise<Uint8Array | null> {
    const cached = this.cache.get(`r${kNumber}`);
    if (cached) return cached as Uint8Array;
    const position = shardPositionHolding(this.recordIndex, kNumber);
    if (position < 0) return null;
    const shard = this.recordIndex.shards[position] as ShardIndex['shards'][number];
    const cachedShard = this.shards.cached(shard.path);
    if (cachedShard) {
      const at = findLine(cachedShard, kNumber);
      return at < 0 ? null : cachedShard.bytes.subarray(cachedShard.starts[at], cachedShard.ends[at]);
    }
    if (!this.reads.verified.has(shard.path)) {
      // Read whole into a lent buffer and checked; only the record is kept (a copy), not the other entries.
      const lent = keep ? this.shards.lend('clearance', position) : this.shards.read('clearance', position, buffers).then((lines) => ({ lines, release: () => {} }));
      const { lines, release } = await lent;
      try {
        const at = findLine(lines, kNumber);
        if (at < 0) return null;
        const bytes = lines.bytes.subarray(lines.starts[at], lines.ends[at]);
        if (!keep) return bytes;
        // A copy of its own (not `slice()`: the storage may hand back a Node Buffer, whose slice is a view).
        const own = new Uint8Array(bytes);
        this.cache.set(`r${kNumber}`, own);
        return own;
      } finally {
        release();
      }
    }
    const { table, first } = await this.table.entries(position);
    const entry = findEntry(table, first, shard.count, Number(kNumber.slice(1)));
    if (entry < 0) return null;
    const at = entry * RECORD_TABLE.entryBytes;
    const view = new DataView(table.buffer, table.byteOffset, table.byteLength);
    const bytes = await this.reads.range(shard.path, view.getUint32(at + 4, true), view.getUint32(at + 8, true), buffers).catch(() => this.reads.unreadable(shard.path));
    if (!bytesEqual(this.reads.storage.sha256(bytes), 0, table, at + 12, RECORD_TABLE.digestBytes)) {
      // The file changed since it was checked whole.
      await this.reads.changedSince(shard.path);
    }
    if (keep) this.cache.set(`r${kNumber}`, bytes);
    return bytes;
  }

  /** See `Snapshot.eachRecordUncached`. */
  async eachUncached(
    kNumbers: readonly string[],
    take: (i: number, bytes: Uint8Array) => void,
    reads?: ReadCounts,
    tables?: HeldTable,
    slices?: ReadSlices,
  ): Promise<void> {
    const buffers: ReadBuffers = { bytes: new Uint8Array(0) };
    const state = slices ? { slices, handed: 0 } : undefined;
    for (let i = 0; i < kNumbers.length; ) {
      const position = shardPositionHolding(this.recordIndex, kNumbers[i] as string);
      const shard = this.recordIndex.shards[position];
      if (!shard) throw this.missing(kNumbers[i]);
      let end = i + 1;
      while (end < kNumbers.length && (kNumbers[end] as string) <= shard.last) end++;
      await beforeRead(state);
      const cached = this.shards.cached(shard.path);
      if (!cached) {
        const { table, first } = tables ? await this.table.heldEntries(position, tables) : await this.table.entries(position);
        await this.eachChecked(shard.path, table, first, shard.count, kNumbers, i, end, take, buffers, reads, state);
        i = end;
        continue;
      }
      if (state) state.handed += end - i;
      for (; i < end; i++) {
        const k = kNumbers[i] as string;
        const at = findLine(cached, k);
        if (at < 0) throw this.missing(k);
        take(i, cached.bytes.subarray(cached.starts[at], cached.ends[at]));
      }
    }
  }

  /** See `Snapshot.prefetchRecords`. */
  prefetch(kNumbers: readonly string[], seen: Set<string>): void {
    const storage = this.reads.storage;
    if (!storage.prefetch) return;
    const paths: string[] = [];
    for (let i = 0; i < kNumbers.length; ) {
      const shard = this.recordIndex.shards[shardPositionHolding(this.recordIndex, kNumbers[i] as string)];
      // A K number no shard holds is for the read to refuse.
      if (!shard) {
        i++;
        continue;
      }
      while (i < kNumbers.length && (kNumbers[i] as string) <= shard.last) i++;
      if (seen.has(shard.path) || this.shards.cached(shard.path) !== undefined) continue;
      seen.add(shard.path);
      paths.push(shard.path);
    }
    if (paths.length > 0) storage.prefetch(paths);
  }

  /**
   * The records kNumbers[from..to) of one shard, ascending, handed to `take`: records less than the storage's gap
   * (`RECORD_GAP` on a local disk) apart are read together (one open and read of the file for most of an export's
   * records of a shard, rather than one per record), and each is checked against its digest in the record table.
   */
  private async eachChecked(
    path: string,
    table: Uint8Array,
    first: number,
    count: number,
    kNumbers: readonly string[],
    from: number,
    to: number,
    take: (i: number, bytes: Uint8Array) => void,
    buffers: ReadBuffers,
    reads?: ReadCounts,
    state?: SliceState,
  ): Promise<void> {
    const view = new DataView(table.buffer, table.byteOffset, table.byteLength);
    // Each record's table entry, then its offset and length in the shard (entries ascend by K number, offsets too).
    const n = to - from;
    // Kept in the buffers from shard to shard: an export reads a few records of each of thousands of shards.
    if (!buffers.entries || buffers.entries.length < n) {
      const size = Math.max(n, 2 * (buffers.entries?.length ?? 0), 64);
      buffers.entries = new Uint32Array(size);
      buffers.offsets = new Uint32Array(size);
      buffers.lengths = new Uint32Array(size);
    }
    const { entries, offsets, lengths } = buffers as Required<ReadBuffers>;
    for (let j = 0; j < n; j++) {
      const entry = findEntry(table, first, count, Number((kNumbers[from + j] as string).slice(1)));
      if (entry < 0) throw this.missing(kNumbers[from + j]);
      entries[j] = entry;
      offsets[j] = view.getUint32(entry * RECORD_TABLE.entryBytes + 4, true);
      lengths[j] = view.getUint32(entry * RECORD_TABLE.entryBytes + 8, true);
    }
    const storage = this.reads.storage;
    const gap = storage.rangeGapBytes ?? RECORD_GAP;
    const hashAsync = storage.sha256Async;
    for (let j = 0; j < n; ) {
      // Not before the shard's first read: the caller paused there already when it was time.
      if (j > 0) await beforeRead(state);
      const start = offsets[j] as number;
      let stop = start + (lengths[j] as number);
      let last = j + 1;
      while (last < n && (offsets[last] as number) - stop < gap) {
        stop = (offsets[last] as number) + (lengths[last] as number);
        last++;
      }
      const began = reads ? performance.now() : 0;
      const bytes = await this.reads.range(path, start, stop - start, buffers).catch(() => this.reads.unreadable(path));
      if (state) state.handed += last - j;
      if (reads) {
        reads.reads++;
        if (performance.now() - began > this.slowReadMs) reads.slow++;
      }
      const recordAt = (k: number): Uint8Array => bytes.subarray((offsets[k] as number) - start, (offsets[k] as number) - start + (lengths[k] as number));
      // Where the host's fast hash is asynchronous only (Web Crypto in a Worker), the read's records are hashed with it
      // all at once: the read was awaited anyway, and the script's hash was some 40% of the isolate's profile of an
      // export by K number.
      const digests = hashAsync ? await Promise.all(Array.from({ length: last - j }, (_, i) => hashAsync.call(storage, recordAt(j + i)))) : null;
      for (let i = 0; j < last; j++, i++) {
        const record = recordAt(j);
        const digestAt = (entries[j] as number) * RECORD_TABLE.entryBytes + 12;
        const digest = digests ? (digests[i] as Uint8Array) : storage.sha256(record);
        if (record.length !== lengths[j] || !bytesEqual(digest, 0, table, digestAt, RECORD_TABLE.digestBytes)) {
          await this.reads.changedSince(path);
        }
        take(from + j, record);
      }
    }
  }
}
