import { RECORD_TABLE, recordTablePartPath, type ShardIndex } from '../contract/index.ts';
import { partitionPoint } from '../utils/bisect.ts';
import { LruCache } from '../utils/lru.ts';
import type { CheckedReads } from './checked-reads.ts';

/**
 * The record table's parts kept for readers of many records (exports), by part: see `Snapshot.eachRecordUncached`. A
 * Map keeps them for one reader; a bounded cache shared by readers (src/operations/export-tables.ts) may drop one at
 * any time.
 */
export type HeldTable = { get(part: number): Uint8Array | undefined; set(part: number, table: Uint8Array): void };

/** Entries of the record table: `table` holds a shard's entries from entry `first` on. */
export type TableEntries = { table: Uint8Array; first: number };

/**
 * The record table of a snapshot: for each record, its K number's digits, where its line is in its shard, and the
 * sha256 of its bytes, in parts of `RECORD_TABLE.shardsPerPart` shards, each part a file the manifest lists. Parts
 * are read and checked whole, and kept while `capacityBytes` allows.
 */
export class RecordTable {
  /** Records before each record shard, so shard i's entries in the record table start at recordsBefore[i]. */
  private readonly recordsBefore: Uint32Array;
  /** Parts read and checked, least recently used first. */
  private readonly parts: LruCache<number, Uint8Array>;
  /** Parts being read now, so that concurrent requests for one part read it once. */
  private readonly loads = new Map<number, Promise<Uint8Array>>();

  constructor(
    recordIndex: ShardIndex,
    private readonly reads: CheckedReads,
    capacityBytes: number,
  ) {
    this.recordsBefore = new Uint32Array(recordIndex.shards.length + 1);
    recordIndex.shards.forEach((s, i) => {
      this.recordsBefore[i + 1] = (this.recordsBefore[i] as number) + s.count;
    });
    this.parts = new LruCache(Math.max(1, Math.floor(Math.min(capacityBytes, Number.MAX_SAFE_INTEGER))), (part) => part.byteLength);
  }

  /** The part that holds record shard `position`'s entries, and the first of them within the part. */
  private spot(position: number): { part: number; first: number } {
    const part = Math.floor(position / RECORD_TABLE.shardsPerPart);
    return { part, first: (this.recordsBefore[position] as number) - (this.recordsBefore[part * RECORD_TABLE.shardsPerPart] as number) };
  }

  /**
   * The entries of record shard `position`. From the part when it is kept; else, when the part's file is provably
   * the one that matched once (its identity, as for shards), just the shard's entries read now; else the part read
   * whole and checked.
   */
  async entries(position: number): Promise<TableEntries> {
    const { part, first } = this.spot(position);
    const kept = this.parts.get(part);
    if (kept) return { table: kept, first };
    const path = recordTablePartPath(part);
    const known = this.reads.identities.get(path);
    const storage = this.reads.storage;
    if (known !== undefined && storage.readIdentified) {
      const length = (this.recordsBefore[position + 1] as number) - (this.recordsBefore[position] as number);
      const read = await storage.readIdentified(path, first * RECORD_TABLE.entryBytes, length * RECORD_TABLE.entryBytes, undefined, known).catch(() => null);
      if (read && read.identity === known && read.bytes.length === length * RECORD_TABLE.entryBytes) return { table: read.bytes, first: 0 };
    }
    return { table: await this.part(part), first };
  }

  /** As `entries`, from the parts `held` for one reader, where a part read for it is kept. */
  async heldEntries(position: number, held: HeldTable): Promise<TableEntries> {
    const { part, first } = this.spot(position);
    const kept = held.get(part);
    if (kept) return { table: kept, first };
    const table = this.parts.get(part) ?? (await this.part(part));
    held.set(part, table);
    return { table, first };
  }

  /**
   * The part that covers shard positions [part * shardsPerPart, …), read and checked, and kept while the capacity
   * allows. Checked with the storage's asynchronous hash where it has one (Web Crypto in a Worker: a part is
   * megabytes, and the read is awaited anyway).
   */
  private part(part: number): Promise<Uint8Array> {
    const loading = this.loads.get(part);
    if (loading) return loading;
    const path = recordTablePartPath(part);
    // Where the storage tells identities, as a shard: not hashed again while the file is the one that matched.
    const read = this.reads.storage.readIdentified ? this.reads.whole(path) : this.reads.file(path, true);
    const load = read.then((bytes) => {
      this.parts.set(part, bytes);
      return bytes;
    });
    this.loads.set(part, load);
    const done = () => this.loads.delete(part);
    load.then(done, done);
    return load;
  }

  /** Bytes of the table held now (for measurements and tests). */
  get bytes(): number {
    return this.parts.weight;
  }
}

/** Position of the table entry for the K number digits `digits` among `count` entries from `first`, or -1. */
export function findEntry(table: Uint8Array, first: number, count: number, digits: number): number {
  const view = new DataView(table.buffer, table.byteOffset, table.byteLength);
  const lo = partitionPoint(first, first + count, (i) => view.getUint32(i * RECORD_TABLE.entryBytes, true) < digits);
  return lo < first + count && view.getUint32(lo * RECORD_TABLE.entryBytes, true) === digits ? lo : -1;
}
