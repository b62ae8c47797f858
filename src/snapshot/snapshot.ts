import type { z } from 'zod';
import {
  LAYOUT,
  Manifest,
  MetaFile,
  RECORD_TABLE,
  SNAPSHOT_SCHEMA_VERSION,
  ShardIndex,
  TopProductCodesFile,
  recordTablePartPath,
  snapshotIdOf,
  type ClearanceRecord,
  type FileEntry,
  type ProductCodeEntry,
} from '../contract/index.ts';
import { shardPositionHolding } from './keys.ts';
import { indexLines, lineKey, type ShardLines } from './lines.ts';
import { LruCache } from '../utils/lru.ts';
import { safeRelPath } from './paths.ts';
import { bytesEqual, toHex, type SnapshotStorage } from './storage.ts';
import { partitionPoint } from '../utils/bisect.ts';
import { BufferPool } from '../utils/buffer-pool.ts';

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

/** `actual` is the sha256 of what was read, or `unreadable` when the file could not be read at all. */
export type CorruptFileReport = { snapshotId: string; dir: string; path: string; expected: string; actual: string };

/** What `CorruptFileReport.actual` says when a listed file could not be read (gone, a link, a directory). */
export const UNREADABLE = 'unreadable';

/** 48 MiB: at 1,000,000 records it holds about 35,000 records or 650 whole shards, and keeps the server small. */
export const DEFAULT_CACHE_BYTES = 48 * 1024 * 1024;

/** Thrown when a directory is not a complete, valid snapshot; the message lists why. */
export class InvalidSnapshot extends Error {
  override readonly name = 'InvalidSnapshot';
  readonly dir: string;
  constructor(dir: string, reason: string) {
    super(`${dir} is not a valid snapshot: ${reason}`);
    this.dir = dir;
  }
}

/**
 * Thrown when a file's bytes do not match the sha256 the manifest lists for it (or a record's bytes the digest the
 * record table lists): the file was damaged after the build, and what it holds is not served. Not remembered, so a
 * file repaired in place is served again.
 */
export class CorruptFile extends Error {
  override readonly name = 'CorruptFile';
  readonly report: CorruptFileReport;
  constructor(report: CorruptFileReport) {
    super(
      report.actual === UNREADABLE
        ? `${report.path} of snapshot ${report.snapshotId} cannot be read`
        : `${report.path} of snapshot ${report.snapshotId} does not match its sha256 in the manifest`,
    );
    this.report = report;
  }
}

type Cached = ShardLines | Uint8Array;
/** A buffer lent to a run of reads (an export's), reused from one read to the next. */
type Scratch = { bytes: Uint8Array; entries?: Uint32Array; offsets?: Uint32Array; lengths?: Uint32Array };
/** Read buffers (lent or an export's scratch): at least this large. */
const LEND_MIN_BYTES = 64 * 1024;
/** Lent buffers kept between requests, by size class up to 1 MiB: eight of the smallest, 1 MiB of each larger class. */
const lendPool = (): BufferPool => new BufferPool(LEND_MIN_BYTES, 1024 * 1024, 8, 1024 * 1024);

/** Grows a scratch buffer (to twice its size at least) when it is shorter than `length`. */
function ensureRoom(scratch: Scratch, length: number): void {
  if (scratch.bytes.length < length) scratch.bytes = new Uint8Array(Math.max(length, 2 * scratch.bytes.length, LEND_MIN_BYTES));
}
const weightOf = (value: Cached): number => ('bytes' in value ? value.bytes.length + value.starts.length * 8 : value.length) + 64;

const utf8 = new TextDecoder();

/**
 * One published snapshot, read-only, over a storage (a local folder on Node). `fromStorage` parses the manifest once
 * with the contract's schema and the small files every request needs (meta, top codes, the two shard indexes).
 *
 * Answers are cut from verified bytes, never parsed on the request path: a record is read from the byte range the
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
  private readonly files: ReadonlyMap<string, FileEntry>;
  /** Records before each record shard, so shard i's entries in the record table start at recordsBefore[i]. */
  private readonly recordsBefore: Uint32Array;
  /** Parts of the record table read and checked, least recently used first. */
  private readonly tableParts: LruCache<number, Uint8Array>;
  /** Parts being read now, so that concurrent requests for one part read it once. */
  private readonly tableLoads = new Map<number, Promise<Uint8Array>>();
  private readonly cache: LruCache<string, Cached>;
  /** Record shards whose bytes have matched their sha256 once, so that single records may be read from them. */
  private readonly verified = new Set<string>();
  /** Each shard's identity on disk when its bytes last matched the manifest (storages that can tell one). */
  private readonly identities = new Map<string, string>();
  /** Files already reported as damaged, so the log says it once per file and snapshot. */
  private readonly reported = new Set<string>();
  private readonly onCorrupt: ((report: CorruptFileReport) => void) | undefined;
  private readonly slowReadMs: number;
  /** Buffers record shards are read into for one request and given back after (see `lendShardLines`). */
  private readonly lendable = lendPool();

  private constructor(init: {
    storage: SnapshotStorage;
    manifest: Manifest;
    manifestSha256: string;
    manifestBytes: Uint8Array;
    meta: MetaFile;
    metaJson: Uint8Array;
    topProductCodes: TopProductCodesFile;
    recordIndex: ShardIndex;
    productCodeIndex: ShardIndex;
    files: ReadonlyMap<string, FileEntry>;
    options: SnapshotOptions;
  }) {
    this.storage = init.storage;
    this.manifest = init.manifest;
    this.manifestSha256 = init.manifestSha256;
    this.manifestBytes = init.manifestBytes;
    this.meta = init.meta;
    this.metaJson = init.metaJson;
    this.topProductCodes = init.topProductCodes;
    this.recordIndex = init.recordIndex;
    this.productCodeIndex = init.productCodeIndex;
    this.files = init.files;
    this.recordsBefore = new Uint32Array(init.recordIndex.shards.length + 1);
    init.recordIndex.shards.forEach((s, i) => {
      this.recordsBefore[i + 1] = (this.recordsBefore[i] as number) + s.count;
    });
    this.cache = new LruCache(Math.max(1, Math.floor(init.options.cacheBytes ?? DEFAULT_CACHE_BYTES)), weightOf);
    // A capacity of 1 byte keeps no part (an entry heavier than the capacity is not kept).
    const tableBytes = init.options.tableCacheBytes ?? (init.storage.readIdentified ? 1 : Number.MAX_SAFE_INTEGER);
    this.tableParts = new LruCache(Math.max(1, Math.floor(Math.min(tableBytes, Number.MAX_SAFE_INTEGER))), (part) => part.byteLength);
    this.onCorrupt = init.options.onCorrupt;
    this.slowReadMs = init.options.slowReadMs ?? 0.1;
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
    const dir = storage.location;
    const hex = (bytes: Uint8Array) => toHex(storage.sha256(bytes));
    const manifest = parseJson(dir, LAYOUT.manifest, manifestBytes, Manifest);
    // The id is a digest of the file list: an edited list (a path or digest changed by hand) is refused here.
    if (snapshotIdOf(manifest.files, hex) !== manifest.snapshotId) {
      throw new InvalidSnapshot(dir, `${LAYOUT.manifest}'s snapshotId does not match its file list`);
    }
    const files = new Map(manifest.files.map((f) => [f.path, f]));
    const problems = checkFiles ? await checkFiles(manifest.files) : [];
    if (problems.length > 0) {
      const more = problems.length > 3 ? ` (and ${problems.length - 3} more)` : '';
      throw new InvalidSnapshot(dir, `${problems.slice(0, 3).join('; ')}${more}`);
    }
    for (const required of [LAYOUT.meta, LAYOUT.topProductCodes, LAYOUT.recordIndex, LAYOUT.productCodeIndex]) {
      if (!files.has(required)) throw new InvalidSnapshot(dir, `the manifest does not list ${required}`);
    }
    const readChecked = async (rel: string): Promise<Uint8Array> => {
      const bytes = await storage.read(rel).catch(() => {
        throw new InvalidSnapshot(dir, `${rel} cannot be read`);
      });
      // Every answer needs these four: a damaged one makes the whole snapshot unusable, so it is refused here.
      const entry = files.get(rel) as FileEntry;
      if (bytes.length !== entry.bytes || hex(bytes) !== entry.sha256) throw new InvalidSnapshot(dir, `${rel} does not match its sha256 in the manifest`);
      return bytes;
    };
    const [metaBytes, topBytes, recordIndexBytes, codeIndexBytes] = await Promise.all(
      [LAYOUT.meta, LAYOUT.topProductCodes, LAYOUT.recordIndex, LAYOUT.productCodeIndex].map(readChecked),
    ) as [Uint8Array, Uint8Array, Uint8Array, Uint8Array];
    const recordIndex = parseJson(dir, LAYOUT.recordIndex, recordIndexBytes, ShardIndex);
    const productCodeIndex = parseJson(dir, LAYOUT.productCodeIndex, codeIndexBytes, ShardIndex);
    for (const index of [recordIndex, productCodeIndex]) {
      const unlisted = index.shards.find((s) => !files.has(s.path));
      if (unlisted) throw new InvalidSnapshot(dir, `shard ${unlisted.path} is not in the manifest`);
    }
    const parts = Math.ceil(recordIndex.shards.length / RECORD_TABLE.shardsPerPart);
    for (let part = 0; part < parts; part++) {
      if (!files.has(recordTablePartPath(part))) throw new InvalidSnapshot(dir, `the manifest does not list ${recordTablePartPath(part)}`);
    }
    return new Snapshot({
      storage,
      manifest,
      manifestSha256: hex(manifestBytes),
      manifestBytes,
      meta: parseJson(dir, LAYOUT.meta, metaBytes, MetaFile),
      metaJson: withoutFinalNewline(metaBytes),
      topProductCodes: parseJson(dir, LAYOUT.topProductCodes, topBytes, TopProductCodesFile),
      recordIndex,
      productCodeIndex,
      files,
      options,
    });
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
    return this.files.get(rel);
  }

  /**
   * The bytes of one of the snapshot's files (a path the manifest lists, or the manifest itself), read now and
   * checked against the manifest's sha256; throws CorruptFile when they do not match or cannot be read. `large`:
   * megabytes, checked with the storage's asynchronous hash where it has one.
   */
  async readFile(rel: string, large = false): Promise<Uint8Array> {
    const safe = safeRelPath(rel);
    if (safe === LAYOUT.manifest) return this.manifestBytes;
    const entry = safe === null ? undefined : this.files.get(safe);
    if (safe === null || !entry) throw new Error(`${rel} is not a file of snapshot ${this.id}`);
    const bytes = await this.storage.read(safe).catch(() => this.corrupt(safe, entry.sha256, UNREADABLE));
    const digest = large && this.storage.sha256Async ? await this.storage.sha256Async(bytes) : this.storage.sha256(bytes);
    const actual = toHex(digest);
    if (actual !== entry.sha256 || bytes.length !== entry.bytes) return this.corrupt(safe, entry.sha256, actual);
    return bytes;
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
    const entry = this.files.get(rel);
    if (!entry) throw new Error(`${rel} is not a file of snapshot ${this.id}`);
    return this.corrupt(rel, entry.sha256, actual);
  }

  private corrupt(path: string, expected: string, actual: string): never {
    const report: CorruptFileReport = { snapshotId: this.id, dir: this.dir, path, expected, actual };
    if (!this.reported.has(path)) {
      this.reported.add(path);
      this.onCorrupt?.(report);
    }
    throw new CorruptFile(report);
  }

  /** One record's JSON, exactly as the build wrote it, or null when the snapshot has no such K number. */
  recordJson(kNumber: string): Promise<Uint8Array | null> {
    return this.readRecord(kNumber, true);
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
   * batch (at 1,000,000 records a batch of 2,048 records meets some 1,850 shards).
   */
  async eachRecordUncached(
    kNumbers: readonly string[],
    take: (i: number, bytes: Uint8Array) => void,
    reads?: ReadCounts,
    tables?: HeldTable,
  ): Promise<void> {
    const scratch: Scratch = { bytes: new Uint8Array(0) };
    for (let i = 0; i < kNumbers.length; ) {
      const position = shardPositionHolding(this.recordIndex, kNumbers[i] as string);
      const shard = this.recordIndex.shards[position];
      if (!shard) throw new Error(`snapshot ${this.id} has no record ${kNumbers[i]}`);
      let end = i + 1;
      while (end < kNumbers.length && (kNumbers[end] as string) <= shard.last) end++;
      const cached = this.cache.get(`s${shard.path}`) as ShardLines | undefined;
      if (!cached) {
        const { table, first } = tables ? await this.heldTableEntries(position, tables) : await this.tableEntries(position);
        await this.eachCheckedRecord(shard.path, table, first, shard.count, kNumbers, i, end, take, scratch, reads);
        i = end;
        continue;
      }
      for (; i < end; i++) {
        const k = kNumbers[i] as string;
        const at = findLine(cached, k);
        if (at < 0) throw new Error(`snapshot ${this.id} has no record ${k}`);
        take(i, cached.bytes.subarray(cached.starts[at], cached.ends[at]));
      }
    }
  }

  /**
   * Tells the storage, when it takes such hints, that the records of these K numbers (ascending) will be read soon,
   * so that it fetches their shards in the background. `seen` holds the shards already hinted for the same reader
   * (an export hints each shard once, though it reads from it in many batches); shards the cache holds are skipped.
   */
  prefetchRecords(kNumbers: readonly string[], seen: Set<string>): void {
    if (!this.storage.prefetch) return;
    const paths: string[] = [];
    for (let i = 0; i < kNumbers.length; ) {
      const shard = this.recordIndex.shards[shardPositionHolding(this.recordIndex, kNumbers[i] as string)];
      // A K number no shard holds is for the read to refuse.
      if (!shard) {
        i++;
        continue;
      }
      while (i < kNumbers.length && (kNumbers[i] as string) <= shard.last) i++;
      if (seen.has(shard.path) || this.cache.get(`s${shard.path}`) !== undefined) continue;
      seen.add(shard.path);
      paths.push(shard.path);
    }
    if (paths.length > 0) this.storage.prefetch(paths);
  }

  /**
   * The records kNumbers[from..to) of one shard, ascending, handed to `take`: records less than
   * `RECORD_GAP` bytes apart are read together (one open and read of the file for most of an export's records of a
   * shard, rather than one per record), and each is checked against its digest in the record table.
   */
  private async eachCheckedRecord(
    path: string,
    table: Uint8Array,
    first: number,
    count: number,
    kNumbers: readonly string[],
    from: number,
    to: number,
    take: (i: number, bytes: Uint8Array) => void,
    scratch: Scratch,
    reads?: ReadCounts,
  ): Promise<void> {
    const view = new DataView(table.buffer, table.byteOffset, table.byteLength);
    // Each record's table entry, then its offset and length in the shard (entries ascend by K number, offsets too).
    const n = to - from;
    // Kept in the scratch from shard to shard: an export reads a few records of each of thousands of shards.
    if (!scratch.entries || scratch.entries.length < n) {
      const size = Math.max(n, 2 * (scratch.entries?.length ?? 0), 64);
      scratch.entries = new Uint32Array(size);
      scratch.offsets = new Uint32Array(size);
      scratch.lengths = new Uint32Array(size);
    }
    const { entries, offsets, lengths } = scratch as Required<Scratch>;
    for (let j = 0; j < n; j++) {
      const entry = findEntry(table, first, count, Number((kNumbers[from + j] as string).slice(1)));
      if (entry < 0) throw new Error(`snapshot ${this.id} has no record ${kNumbers[from + j]}`);
      entries[j] = entry;
      offsets[j] = view.getUint32(entry * RECORD_TABLE.entryBytes + 4, true);
      lengths[j] = view.getUint32(entry * RECORD_TABLE.entryBytes + 8, true);
    }
    for (let j = 0; j < n; ) {
      const start = offsets[j] as number;
      let stop = start + (lengths[j] as number);
      let last = j + 1;
      while (last < n && (offsets[last] as number) - stop < RECORD_GAP) {
        stop = (offsets[last] as number) + (lengths[last] as number);
        last++;
      }
      const began = reads ? performance.now() : 0;
      const bytes = await this.readBytes(path, start, stop - start, scratch).catch(() =>
        this.corrupt(path, (this.files.get(path) as FileEntry).sha256, UNREADABLE),
      );
      if (reads) {
        reads.reads++;
        if (performance.now() - began > this.slowReadMs) reads.slow++;
      }
      for (; j < last; j++) {
        const at = (offsets[j] as number) - start;
        const record = bytes.subarray(at, at + (lengths[j] as number));
        const digestAt = (entries[j] as number) * RECORD_TABLE.entryBytes + 12;
        if (record.length !== lengths[j] || !bytesEqual(this.storage.sha256(record), 0, table, digestAt, RECORD_TABLE.digestBytes)) {
          await this.changedSince(path);
        }
        take(from + j, record);
      }
    }
  }

  /** A checked file whose bytes no longer match: reported as the file it is now against the manifest. */
  private async changedSince(path: string): Promise<never> {
    this.verified.delete(path);
    this.identities.delete(path);
    const now = await this.storage.read(path).then((b) => toHex(this.storage.sha256(b)), () => UNREADABLE);
    return this.corrupt(path, (this.files.get(path) as FileEntry).sha256, now);
  }

  /** A record, through the cache when `keep` (what it reads is kept), or past it, into `scratch` when given. */
  private async readRecord(kNumber: string, keep: boolean, scratch?: Scratch): Promise<Uint8Array | null> {
    const cached = this.cache.get(`r${kNumber}`);
    if (cached) return cached as Uint8Array;
    const position = shardPositionHolding(this.recordIndex, kNumber);
    if (position < 0) return null;
    const shard = this.recordIndex.shards[position] as ShardIndex['shards'][number];
    // A shard is checked whole against the manifest the first time it is used in this snapshot, so that a file
    // that does not match is never used at all; after that, each record read is checked against its own digest.
    const cachedShard = this.cache.get(`s${shard.path}`) as ShardLines | undefined;
    if (cachedShard) {
      const at = findLine(cachedShard, kNumber);
      return at < 0 ? null : cachedShard.bytes.subarray(cachedShard.starts[at], cachedShard.ends[at]);
    }
    if (!this.verified.has(shard.path)) {
      // Read whole into a lent buffer and checked; only the record is kept (a copy), not the other entries.
      const lent = keep ? this.lendShardLines('clearance', position) : this.readShardLines('clearance', position, scratch).then((lines) => ({ lines, release: () => {} }));
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
    const { table, first } = await this.tableEntries(position);
    const entry = findEntry(table, first, shard.count, Number(kNumber.slice(1)));
    if (entry < 0) return null;
    const at = entry * RECORD_TABLE.entryBytes;
    const view = new DataView(table.buffer, table.byteOffset, table.byteLength);
    const bytes = await this.readBytes(shard.path, view.getUint32(at + 4, true), view.getUint32(at + 8, true), scratch).catch(() =>
      this.corrupt(shard.path, (this.files.get(shard.path) as FileEntry).sha256, UNREADABLE),
    );
    if (!bytesEqual(this.storage.sha256(bytes), 0, table, at + 12, RECORD_TABLE.digestBytes)) {
      // The file changed since it was checked whole.
      await this.changedSince(shard.path);
    }
    if (keep) this.cache.set(`r${kNumber}`, bytes);
    return bytes;
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

  private shardAt(kind: 'clearance' | 'product-code', position: number): ShardIndex['shards'][number] {
    const shard = (kind === 'clearance' ? this.recordIndex : this.productCodeIndex).shards[position];
    if (!shard) throw new Error(`snapshot ${this.id} has no ${kind} shard ${position}`);
    return shard;
  }

  /** The i-th shard of a kind, checked whole against the manifest, with where each entry's line is. */
  async shardLines(kind: 'clearance' | 'product-code', position: number): Promise<ShardLines> {
    const shard = this.shardAt(kind, position);
    const key = `s${shard.path}`;
    const cached = this.cache.get(key);
    if (cached) return cached as ShardLines;
    const lines = await this.readShardLines(kind, position);
    this.cache.set(key, lines);
    return lines;
  }

  /**
   * The i-th shard of a kind for one request: from the cache when it is there, else read into a buffer lent from a
   * small pool and checked as `shardLines` checks, without being kept. Its bytes are valid until `release()`, which
   * gives the buffer back. Record shards go this way: a catalog page or a record's first read uses a shard once, and
   * a new buffer for each read (36-92 KB) was most of what the garbage collector and the allocator had to do.
   */
  async lendShardLines(kind: 'clearance' | 'product-code', position: number): Promise<{ lines: ShardLines; release: () => void }> {
    const shard = this.shardAt(kind, position);
    const cached = this.cache.get(`s${shard.path}`) as ShardLines | undefined;
    if (cached) return { lines: cached, release: () => {} };
    const size = (this.files.get(shard.path) as FileEntry).bytes;
    const scratch: Scratch = { bytes: new Uint8Array(this.lendable.take(size)) };
    let lent = true;
    const release = () => {
      if (!lent) return;
      lent = false;
      this.lendable.give(scratch.bytes.buffer);
    };
    try {
      return { lines: await this.readShardLines(kind, position, scratch), release };
    } catch (err) {
      release();
      throw err;
    }
  }

  /**
   * The i-th record shard's entries as one JSON array, `[e1,e2,…]`, read straight into `room(size)` (a buffer of at
   * least the file's `size` the caller gives) and checked as `lendShardLines` checks them: the file's bytes against the
   * manifest (hashed unless the file is provably the one that matched), and one line per entry. Then the newlines
   * are taken out in place: a shard is `[`, its entries each followed by `,` but the last, and `]`, a line each, and
   * JSON text has no raw newline inside a string. Returns the array's length in bytes, or null, with
   * `room` not called, when the byte cache holds the shard (the caller cuts its page from there). A catalog page that is one whole shard is then made with no
   * buffer lent and no copy of the page between the read and the answer.
   */
  async recordShardArrayInto(position: number, room: (size: number) => Uint8Array): Promise<number | null> {
    const shard = this.shardAt('clearance', position);
    if (this.cache.get(`s${shard.path}`)) return null;
    const into = room((this.files.get(shard.path) as FileEntry).bytes);
    const read = await this.readWholeChecked(shard.path, { bytes: into });
    this.verified.add(shard.path);
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

  /** A shard must hold one line per entry its index counts: a build that wrote otherwise is refused, not served. */
  private checkLineCount(shard: ShardIndex['shards'][number], lines: number): void {
    if (lines !== shard.count) throw new Error(`${shard.path} of snapshot ${this.id} holds ${lines} lines for ${shard.count} entries`);
  }

  /** The i-th shard of a kind, read now (into `scratch` when given) and checked whole against the manifest, not kept in the cache. */
  private async readShardLines(kind: 'clearance' | 'product-code', position: number, scratch?: Scratch): Promise<ShardLines> {
    const shard = this.shardAt(kind, position);
    const bytes = await this.readWholeChecked(shard.path, scratch);
    const lines = indexLines(bytes, shard.count);
    this.checkLineCount(shard, lines.starts.length);
    this.verified.add(shard.path);
    return lines;
  }

  /**
   * A listed file read whole (into `scratch`, grown when short, when given) and checked against the manifest. A file
   * read again is hashed again unless the storage can tell it is the very file whose bytes matched before; the
   * identity of one that matched is remembered.
   */
  private async readWholeChecked(path: string, scratch?: Scratch): Promise<Uint8Array> {
    const entry = this.files.get(path) as FileEntry;
    const { bytes, identity } = await this.readWhole(path, entry, scratch);
    if (identity === null || this.identities.get(path) !== identity) {
      const actual = toHex(this.storage.sha256(bytes));
      if (bytes.length !== entry.bytes || actual !== entry.sha256) {
        this.identities.delete(path);
        this.corrupt(path, entry.sha256, actual);
      }
      if (identity !== null) this.identities.set(path, identity);
    }
    return bytes;
  }

  /** A whole file (into `scratch`, grown when short, when given) and its identity when the storage can tell one. */
  private async readWhole(path: string, entry: FileEntry, scratch?: Scratch): Promise<{ bytes: Uint8Array; identity: string | null }> {
    try {
      if (scratch) ensureRoom(scratch, entry.bytes);
      if (this.storage.readIdentified) return await this.storage.readIdentified(path, 0, entry.bytes, scratch?.bytes, this.identities.get(path));
      return { bytes: await this.readBytes(path, 0, entry.bytes, scratch), identity: null };
    } catch {
      this.identities.delete(path);
      return this.corrupt(path, entry.sha256, UNREADABLE);
    }
  }

  /** `length` bytes of a file from `offset`: into `scratch` (grown when short) when the storage can, else a new buffer. */
  private async readBytes(path: string, offset: number, length: number, scratch?: Scratch): Promise<Uint8Array> {
    if (!scratch || !this.storage.readInto) return this.storage.readRange(path, offset, length);
    ensureRoom(scratch, length);
    const got = await this.storage.readInto(path, offset, scratch.bytes.subarray(0, length));
    return scratch.bytes.subarray(0, got);
  }

  /** The record table's part that holds record shard `position`'s entries, and the first of them within the part. */
  private tableSpot(position: number): { part: number; first: number } {
    const part = Math.floor(position / RECORD_TABLE.shardsPerPart);
    return { part, first: (this.recordsBefore[position] as number) - (this.recordsBefore[part * RECORD_TABLE.shardsPerPart] as number) };
  }

  /**
   * The record table's entries of record shard `position`: `table` holds them from entry `first` on. From the part
   * when it is kept; else, when the part's file is provably the one that matched once (its identity, as for shards),
   * just the shard's entries read now; else the part read whole and checked.
   */
  private async tableEntries(position: number): Promise<{ table: Uint8Array; first: number }> {
    const { part, first } = this.tableSpot(position);
    const kept = this.tableParts.get(part);
    if (kept) return { table: kept, first };
    const path = recordTablePartPath(part);
    const known = this.identities.get(path);
    if (known !== undefined && this.storage.readIdentified) {
      const length = (this.recordsBefore[position + 1] as number) - (this.recordsBefore[position] as number);
      const read = await this.storage.readIdentified(path, first * RECORD_TABLE.entryBytes, length * RECORD_TABLE.entryBytes, undefined, known).catch(() => null);
      if (read && read.identity === known && read.bytes.length === length * RECORD_TABLE.entryBytes) return { table: read.bytes, first: 0 };
    }
    return { table: await this.tablePart(part), first };
  }

  /** As `tableEntries`, from the parts `held` for one reader, where a part read for it is kept. */
  private async heldTableEntries(position: number, held: HeldTable): Promise<{ table: Uint8Array; first: number }> {
    const { part, first } = this.tableSpot(position);
    const kept = held.get(part);
    if (kept) return { table: kept, first };
    const table = this.tableParts.get(part) ?? (await this.tablePart(part));
    held.set(part, table);
    return { table, first };
  }

  /**
   * The part of the record table that covers shard positions [part * shardsPerPart, …), read and checked, and kept
   * while `tableCacheBytes` allows. Checked with the storage's asynchronous hash where it has one (Web Crypto in a
   * Worker: a part is megabytes, and the read is awaited anyway).
   */
  private tablePart(part: number): Promise<Uint8Array> {
    const loading = this.tableLoads.get(part);
    if (loading) return loading;
    const path = recordTablePartPath(part);
    // Where the storage tells identities, as a shard: not hashed again while the file is the one that matched.
    const read = this.storage.readIdentified ? this.readWholeChecked(path) : this.readFile(path, true);
    const load = read.then((bytes) => {
      this.tableParts.set(part, bytes);
      return bytes;
    });
    this.tableLoads.set(part, load);
    const done = () => this.tableLoads.delete(part);
    load.then(done, done);
    return load;
  }

  /** Bytes of the record table held now (for measurements and tests). */
  get tableBytes(): number {
    return this.tableParts.weight;
  }

  /** Bytes the cache holds now (for measurements and tests). */
  get cachedBytes(): number {
    return this.cache.weight;
  }
}

/**
 * Records of one shard fewer bytes apart than this are read together for an export: reading the gap costs less than
 * another open and read of the file (a record is a kilobyte or so, a shard a hundred kilobytes or so).
 */
const RECORD_GAP = 16 * 1024;

/**
 * The record table's parts kept for readers of many records (exports), by part: see `eachRecordUncached`. A Map keeps
 * them for one reader; a bounded cache shared by readers (src/operations/export-tables.ts) may drop one at any time.
 */
export type HeldTable = { get(part: number): Uint8Array | undefined; set(part: number, table: Uint8Array): void };

/** Reads of records made past the cache, and how many of them were slow (SnapshotOptions.slowReadMs): a caller's counters. */
export type ReadCounts = { reads: number; slow: number };

/** Position of the table entry for the K number digits `digits` among `count` entries from `first`, or -1. */
function findEntry(table: Uint8Array, first: number, count: number, digits: number): number {
  const view = new DataView(table.buffer, table.byteOffset, table.byteLength);
  const lo = partitionPoint(first, first + count, (i) => view.getUint32(i * RECORD_TABLE.entryBytes, true) < digits);
  return lo < first + count && view.getUint32(lo * RECORD_TABLE.entryBytes, true) === digits ? lo : -1;
}

/** The line of a sorted shard whose key is `key`, or -1. */
function findLine(lines: ShardLines, key: string): number {
  const lo = partitionPoint(0, lines.starts.length, (i) => lineKey(lines, i) < key);
  return lo < lines.starts.length && lineKey(lines, lo) === key ? lo : -1;
}

function withoutFinalNewline(bytes: Uint8Array): Uint8Array {
  return bytes[bytes.length - 1] === 0x0a ? bytes.subarray(0, bytes.length - 1) : bytes;
}

function parseJson<S extends z.ZodType>(dir: string, rel: string, bytes: Uint8Array, schema: S): z.output<S> {
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(bytes));
  } catch {
    throw new InvalidSnapshot(dir, `${rel} is not valid JSON`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    if (rel === LAYOUT.manifest && issue?.path.join('.') === 'schemaVersion') {
      throw new InvalidSnapshot(dir, `${rel}'s schemaVersion is ${JSON.stringify((value as { schemaVersion?: unknown }).schemaVersion)} and this server reads schemaVersion ${SNAPSHOT_SCHEMA_VERSION}; build the snapshot again with npm run build`);
    }
    throw new InvalidSnapshot(dir, `${rel} does not match its schema at ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}
