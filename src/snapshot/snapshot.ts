import { LAYOUT, type ClearanceRecord, type FileEntry, type Manifest, type MetaFile, type ProductCodeEntry, type ShardIndex, type TopProductCodesFile } from '../contract/index.ts';
import { LruCache } from '../utils/lru.ts';
import { CheckedReads } from './checked-reads.ts';
import type { CorruptFileReport } from './errors.ts';
import { shardPositionHolding } from './keys.ts';
import { findLine, type ShardLines } from './lines.ts';
import { openSnapshotFiles, type OpenedSnapshot } from './open.ts';
import { safeRelPath } from './paths.ts';
import { RecordTable, type HeldTable } from './record-table.ts';
import { RecordReads, type ReadCounts, type ReadSlices } from './records.ts';
import { ShardReads, type Cached, type ShardKind } from './shard-reads.ts';
import type { SnapshotStorage } from './storage.ts';

export { CorruptFile, InvalidSnapshot, UNREADABLE, type CorruptFileReport } from './errors.ts';
export type { HeldTable } from './record-table.ts';
export type { ReadCounts, ReadSlices } from './records.ts';

export type SnapshotOptions = {
  /**
   * Bytes of verified shard and record bytes kept in memory (whole product-code shards, single records for detail
   * and search; record shards are read for a request and not kept); the least recently used go first.
   */
  cacheBytes?: number;
  /**
   * Bytes of the record table kept in memory, in whole parts (a part covers 1,024 shards: about 2.7 MB at 1,000,000
   * records, 28 bytes a record); the least recently used go first and are read and checked again when needed.
   * By default, on a storage that tells a file's identity (a local disk), none: each part is read whole and checked
   * once, and after that a record's lookup reads just its shard's entries (at most 100 of 28 bytes) while the part's
   * identity is the one that matched, as for shards (28 MB less at 1,000,000 records). Elsewhere unbounded by
   * default; a Worker, with 128 MB an isolate, bounds it.
   */
  tableCacheBytes?: number;
  /**
   * A read of records past the cache (an export's) that takes longer than this waited on the disk, where one from
   * memory takes microseconds; an export whose reads wait so has the storage prefetch the shards it reads next.
   * 0.1 ms by default.
   */
  slowReadMs?: number;
  /** Told once per file and snapshot when a file's bytes do not match the manifest's sha256. */
  onCorrupt?: (report: CorruptFileReport) => void;
  /**
   * A snapshot folder on the local disk (openSnapshotDirectory): descriptors of its files kept open between reads, the
   * most recently used (0, the default, keeps none). Let go of by `close()`.
   */
  openFiles?: number;
};

/** 48 MiB: at 1,000,000 records it holds about 35,000 records or 650 whole shards, and keeps the server small. */
export const DEFAULT_CACHE_BYTES = 48 * 1024 * 1024;

const weightOf = (value: Cached): number => ('bytes' in value ? value.bytes.length + value.starts.length * 8 : value.length) + 64;

const utf8 = new TextDecoder();

/**
 * One published snapshot, read-only, over a storage (a local folder on Node). `fromStorage` parses the manifest once
 * with the contract's schema and the small files every request needs (meta, top codes, the two shard indexes).
 *
 * A thin facade over the units that do the work: opening and validation (open.ts), reads checked against the
 * manifest (checked-reads.ts), whole shards kept or lent (shard-reads.ts), single records (records.ts) and the
 * record table (record-table.ts). Answers are cut from verified bytes, never parsed on the request path: a record is read from the byte range the
 * record table gives and checked against the table's digest of it (the table itself against the manifest); a whole
 * shard (for catalog pages and product codes) against the manifest's sha256. What passed is kept in a cache bounded
 * by bytes. A damaged file or record throws CorruptFile rather than being served. A request keeps the Snapshot it
 * started on, so a switch never changes data under it.
 */
export class Snapshot {
  readonly storage: SnapshotStorage;
  readonly manifest: Manifest;
  /** sha256 of manifest.json's bytes (the manifest cannot list itself). */
  readonly manifestSha256: string;
  /** manifest.json as it was read and checked when the snapshot was opened: what GET /snapshot/manifest.json sends. */
  readonly manifestBytes: Uint8Array;
  readonly meta: MetaFile;
  /** meta.json's bytes without its final newline: the meta answer's data as it is. */
  readonly metaJson: Uint8Array;
  readonly topProductCodes: TopProductCodesFile;
  readonly recordIndex: ShardIndex;
  readonly productCodeIndex: ShardIndex;
  /** Verified shard, record and file bytes, least recently used first. */
  private readonly cache: LruCache<string, Cached>;
  private readonly reads: CheckedReads;
  private readonly table: RecordTable;
  private readonly shards: ShardReads;
  private readonly records: RecordReads;

  private constructor(storage: SnapshotStorage, opened: OpenedSnapshot, options: SnapshotOptions) {
    this.storage = storage;
    this.manifest = opened.manifest;
    this.manifestSha256 = opened.manifestSha256;
    this.manifestBytes = opened.manifestBytes;
    this.meta = opened.meta;
    this.metaJson = opened.metaJson;
    this.topProductCodes = opened.topProductCodes;
    this.recordIndex = opened.recordIndex;
    this.productCodeIndex = opened.productCodeIndex;
    const id = opened.manifest.snapshotId;
    this.cache = new LruCache(Math.max(1, Math.floor(options.cacheBytes ?? DEFAULT_CACHE_BYTES)), weightOf);
    this.reads = new CheckedReads(storage, opened.files, id, options.onCorrupt);
    // A capacity of 1 byte keeps no part (an entry heavier than the capacity is not kept).
    this.table = new RecordTable(opened.recordIndex, this.reads, options.tableCacheBytes ?? (storage.readIdentified ? 1 : Number.MAX_SAFE_INTEGER));
    this.shards = new ShardReads({ clearance: opened.recordIndex, 'product-code': opened.productCodeIndex }, this.reads, this.cache, id);
    this.records = new RecordReads(opened.recordIndex, this.reads, this.table, this.shards, this.cache, id, options.slowReadMs ?? 0.1);
  }

/**
   * Opens the snapshot whose manifest is `manifestBytes`, reading the rest from `storage`. `checkFiles`, when given,
   * runs once the manifest is known and before anything else is read, and returns problems that refuse the snapshot.
   */
  static async fromStorage(
    storage: SnapshotStorage,
    manifestBytes: Uint8Array,
    options: SnapshotOptions = {},
    checkFiles?: (files: readonly FileEntry[]) => Promise<string[]>,
  ): Promise<Snapshot> {
    return new Snapshot(storage, await openSnapshotFiles(storage, manifestBytes, checkFiles), options);
  }

  /** The snapshot's content id (16 hex digits). */
  get id(): string {
    return this.manifest.snapshotId;
  }

/**
   * Lets go of what the storage holds open, for a snapshot no longer served (switched from, dropped, or the server
   * stopping). Requests still running on it go on reading, each read opening its file.
   */
  close(): void {
    this.storage.close?.();
  }

  /** Where the snapshot is (its folder on Node), for logs and for serving its files. */
  get dir(): string {
    return this.storage.location;
  }

  /** The manifest's entry for a file, or undefined when the snapshot has no such file. */
  fileEntry(rel: string): FileEntry | undefined {
    return this.reads.files.get(rel);
  }

/**
   * The bytes of one of the snapshot's files (a path the manifest lists, or the manifest itself), read now and
   * checked against the manifest's sha256; throws CorruptFile when they do not match or cannot be read. `large`:
   * megabytes, checked with the storage's asynchronous hash where it has one.
   */
  async readFile(rel: string, large = false): Promise<Uint8Array> {
    if (safeRelPath(rel) === LAYOUT.manifest) return this.manifestBytes;
    return this.reads.file(rel, large);
  }

/**
   * A file's verified bytes for sending whole: from the byte cache when they are there (a record shard a catalog
   * page or a lookup already checked counts), else read and checked now, and kept. Bytes in the cache were checked
   * when they were read, and are never read again from disk while cached, so a later change on disk cannot reach
   * a client through them.
   */
  async fileBytes(rel: string): Promise<Uint8Array> {
    if (rel === LAYOUT.manifest) return this.manifestBytes;
    const cached = this.cache.get(`f${rel}`) ?? this.cache.get(`s${rel}`);
    if (cached) return 'bytes' in cached ? cached.bytes : cached;
    const bytes = await this.readFile(rel);
    this.cache.set(`f${rel}`, bytes);
    return bytes;
  }

  /** Reports a file that failed a check made outside this class (a file streamed from disk): throws CorruptFile. */
  reportCorrupt(rel: string, actual: string): never {
    const entry = this.reads.files.get(rel);
    if (!entry) throw new Error(`${rel} is not a file of snapshot ${this.id}`);
    return this.reads.corrupt(rel, entry.sha256, actual);
  }

  /** One record's JSON, exactly as the build wrote it, or null when the snapshot has no such K number. */
  recordJson(kNumber: string): Promise<Uint8Array | null> {
    return this.records.read(kNumber, true);
  }

/**
   * Each record of these K numbers, given in ascending order, handed to `take` with its position in `kNumbers`, as
   * JSON; a K number the snapshot lacks is an error. For exports: read past the byte cache (they read many records
   * once, and would push out what other requests keep there), into one buffer reused from read to read, so `bytes`
   * are valid only during the call. Each record is checked against its digest in the record table (the table is
   * checked against the manifest): an export takes a few records of each of thousands of shards, and reading and
   * hashing every one of those shards whole cost more than the export itself. Records of a shard the cache holds are
   * cut from its checked bytes. `tables`, kept by the caller from call to call (an export's batches), holds the record
   * table's parts read for it: each is then read once for the whole export rather than its shards' entries once a
   * batch (at 1,000,000 records a batch of 2,048 records meets some 1,850 shards). `slices` gives the host its turn
   * every so many records (records.ts, `ReadSlices`).
   */
  eachRecordUncached(
    kNumbers: readonly string[],
    take: (i: number, bytes: Uint8Array) => void,
    reads?: ReadCounts,
    tables?: HeldTable,
    slices?: ReadSlices,
  ): Promise<void> {
    return this.records.eachUncached(kNumbers, take, reads, tables, slices);
  }

/**
   * Tells the storage, when it takes such hints, that the records of these K numbers (ascending) will be read soon,
   * so that it fetches their shards in the background. `seen` holds the shards already hinted for the same reader
   * (an export hints each shard once, though it reads from it in many batches); shards the cache holds are skipped.
   */
  prefetchRecords(kNumbers: readonly string[], seen: Set<string>): void {
    this.records.prefetch(kNumbers, seen);
  }

  /** The records of these K numbers, as JSON, in the order asked; a K number the snapshot lacks is an error. */
  async recordsJson(kNumbers: readonly string[]): Promise<Uint8Array[]> {
    const found = await Promise.all(kNumbers.map((k) => this.recordJson(k)));
    const missing = found.findIndex((r) => r === null);
    if (missing >= 0) throw new Error(`snapshot ${this.id} has no record ${kNumbers[missing]}`);
    return found as Uint8Array[];
  }

  /** One record, parsed (for tools and tests; answers are sent as the bytes `recordJson` gives). */
  async getRecord(kNumber: string): Promise<ClearanceRecord | null> {
    const bytes = await this.recordJson(kNumber);
    return bytes === null ? null : (JSON.parse(utf8.decode(bytes)) as ClearanceRecord);
  }

  /** One product code's catalog entry as JSON (the classification plus `clearanceCount`), or null. */
  async productCodeJson(code: string): Promise<Uint8Array | null> {
    const position = shardPositionHolding(this.productCodeIndex, code);
    if (position < 0) return null;
    const lines = await this.shardLines('product-code', position);
    const at = findLine(lines, code);
    return at < 0 ? null : lines.bytes.subarray(lines.starts[at], lines.ends[at]);
  }

  async getProductCode(code: string): Promise<ProductCodeEntry | null> {
    const bytes = await this.productCodeJson(code);
    return bytes === null ? null : (JSON.parse(utf8.decode(bytes)) as ProductCodeEntry);
  }

  /** The i-th shard of a kind, checked whole against the manifest, with where each entry's line is. */
  shardLines(kind: ShardKind, position: number): Promise<ShardLines> {
    return this.shards.lines(kind, position);
  }

  /** The i-th shard of a kind for one request, in a lent buffer valid until `release()` (see ShardReads.lend). */
  lendShardLines(kind: ShardKind, position: number): Promise<{ lines: ShardLines; release: () => void }> {
    return this.shards.lend(kind, position);
  }

  /** The i-th record shard's entries as one JSON array, read into `room(size)` (see ShardReads.recordArrayInto). */
  recordShardArrayInto(position: number, room: (size: number) => Uint8Array): Promise<number | null> {
    return this.shards.recordArrayInto(position, room);
  }

  /** Bytes of the record table held now (for measurements and tests). */
  get tableBytes(): number {
    return this.table.bytes;
  }

  /** Bytes the cache holds now (for measurements and tests). */
  get cachedBytes(): number {
    return this.cache.weight;
  }

  /**
   * Bytes this snapshot keeps from one request to the next: its cache of verified bytes, its record table's parts and
   * the buffers it keeps to read record shards into (a Worker counts them against its isolate's budget).
   */
  get keptBytes(): number {
    return this.cache.weight + this.table.bytes + this.shards.pooledBytes;
  }
}
