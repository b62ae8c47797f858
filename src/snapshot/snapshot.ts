import { realpath } from 'node:fs/promises';
import type { z } from 'zod';
import {
  LAYOUT,
  Manifest,
  MetaFile,
  ProductCodeShard,
  RecordShard,
  ShardIndex,
  TopProductCodesFile,
  snapshotIdOf,
  type ClearanceRecord,
  type FileEntry,
  type ProductCodeEntry,
} from '../contract/index.ts';
import { checkListedFiles, readSnapshotFile, safeRelPath, sha256Hex } from './files.ts';
import { findSorted, shardHolding } from './keys.ts';
import { LruCache } from './lru.ts';

export type SnapshotOptions = {
  /** Parsed shards kept in memory (record and product-code shards together). */
  shardCacheSize?: number;
  /** Told once per file and snapshot when a file's bytes do not match the manifest's sha256. */
  onCorrupt?: (report: CorruptFileReport) => void;
};

export type CorruptFileReport = { snapshotId: string; dir: string; path: string; expected: string; actual: string };

export const DEFAULT_SHARD_CACHE_SIZE = 1024;

/** Thrown by `Snapshot.open` when a directory is not a complete, valid snapshot; the message lists why. */
export class InvalidSnapshot extends Error {
  override readonly name = 'InvalidSnapshot';
  readonly dir: string;
  constructor(dir: string, reason: string) {
    super(`${dir} is not a valid snapshot: ${reason}`);
    this.dir = dir;
  }
}

/**
 * Thrown when a file's bytes do not match the sha256 the manifest lists for it: the file was damaged after the build
 * (a flipped bit, a copy that kept the size), and what it holds is not served. Not remembered, so a file repaired in
 * place is served again.
 */
export class CorruptFile extends Error {
  override readonly name = 'CorruptFile';
  readonly report: CorruptFileReport;
  constructor(report: CorruptFileReport) {
    super(`${report.path} of snapshot ${report.snapshotId} does not match its sha256 in the manifest`);
    this.report = report;
  }
}

/** The problem with a file's bytes against its manifest entry, or null when they match. */
function mismatch(entry: FileEntry, bytes: Uint8Array): { actual: string } | null {
  const actual = sha256Hex(bytes);
  return bytes.length === entry.bytes && actual === entry.sha256 ? null : { actual };
}

/**
 * One published snapshot, opened read-only. `open` parses the manifest once with the contract's schema, checks that
 * every file it lists is there with its size, and parses the small files every request needs (meta, top codes, the
 * two shard indexes). Shards are read on demand and kept in an LRU cache of parsed values, so memory stays bounded
 * whatever the snapshot's size. A request keeps the Snapshot it started on, so a switch never changes data under it.
 * Every file read is checked against the manifest's sha256 before it is used: opening checks sizes only (hashing a
 * whole snapshot on every switch would read it all), so a damaged file is caught when it is first read, and
 * refused (CorruptFile) rather than served.
 */
export class Snapshot {
  readonly dir: string;
  readonly manifest: Manifest;
  /** sha256 of manifest.json's bytes (the manifest cannot list itself). */
  readonly manifestSha256: string;
  readonly meta: MetaFile;
  readonly topProductCodes: TopProductCodesFile;
  readonly recordIndex: ShardIndex;
  readonly productCodeIndex: ShardIndex;
  private readonly files: ReadonlyMap<string, FileEntry>;
  private readonly shards: LruCache<string, Promise<unknown>>;
  private readonly memos = new Map<string, unknown>();
  /** Files whose bytes have matched their sha256 once (for static serving, which reads them again itself). */
  private readonly verified = new Set<string>();
  /** Files already reported as damaged, so the log says it once per file and snapshot. */
  private readonly reported = new Set<string>();
  private readonly onCorrupt: ((report: CorruptFileReport) => void) | undefined;

  private constructor(init: {
    dir: string;
    manifest: Manifest;
    manifestSha256: string;
    meta: MetaFile;
    topProductCodes: TopProductCodesFile;
    recordIndex: ShardIndex;
    productCodeIndex: ShardIndex;
    files: ReadonlyMap<string, FileEntry>;
    shardCacheSize: number;
    onCorrupt?: (report: CorruptFileReport) => void;
  }) {
    this.dir = init.dir;
    this.manifest = init.manifest;
    this.manifestSha256 = init.manifestSha256;
    this.meta = init.meta;
    this.topProductCodes = init.topProductCodes;
    this.recordIndex = init.recordIndex;
    this.productCodeIndex = init.productCodeIndex;
    this.files = init.files;
    this.shards = new LruCache(init.shardCacheSize);
    this.onCorrupt = init.onCorrupt;
  }

  static async open(path: string, options: SnapshotOptions = {}): Promise<Snapshot> {
    const dir = await realpath(path).catch(() => {
      throw new InvalidSnapshot(path, 'the directory does not exist');
    });
    const manifestBytes = await readSnapshotFile(dir, LAYOUT.manifest).catch(() => {
      throw new InvalidSnapshot(dir, `${LAYOUT.manifest} is missing`);
    });
    const manifest = parseJson(dir, LAYOUT.manifest, manifestBytes, Manifest);
    // The id is a digest of the file list: an edited list (a path or digest changed by hand) is refused here.
    if (snapshotIdOf(manifest.files) !== manifest.snapshotId) {
      throw new InvalidSnapshot(dir, `${LAYOUT.manifest}'s snapshotId does not match its file list`);
    }
    const files = new Map(manifest.files.map((f) => [f.path, f]));
    for (const required of [LAYOUT.meta, LAYOUT.topProductCodes, LAYOUT.recordIndex, LAYOUT.productCodeIndex]) {
      if (!files.has(required)) throw new InvalidSnapshot(dir, `the manifest does not list ${required}`);
    }
    const problems = await checkListedFiles(dir, manifest.files);
    if (problems.length > 0) {
      const more = problems.length > 3 ? ` (and ${problems.length - 3} more)` : '';
      throw new InvalidSnapshot(dir, `${problems.slice(0, 3).join('; ')}${more}`);
    }
    const read = async <S extends z.ZodType>(rel: string, schema: S): Promise<z.output<S>> => {
      const bytes = await readSnapshotFile(dir, rel);
      // Every answer needs these four: a damaged one makes the whole snapshot unusable, so it is refused here.
      if (mismatch(files.get(rel) as FileEntry, bytes)) throw new InvalidSnapshot(dir, `${rel} does not match its sha256 in the manifest`);
      return parseJson(dir, rel, bytes, schema);
    };
    const [meta, topProductCodes, recordIndex, productCodeIndex] = await Promise.all([
      read(LAYOUT.meta, MetaFile),
      read(LAYOUT.topProductCodes, TopProductCodesFile),
      read(LAYOUT.recordIndex, ShardIndex),
      read(LAYOUT.productCodeIndex, ShardIndex),
    ]);
    for (const index of [recordIndex, productCodeIndex]) {
      const unlisted = index.shards.find((s) => !files.has(s.path));
      if (unlisted) throw new InvalidSnapshot(dir, `shard ${unlisted.path} is not in the manifest`);
    }
    return new Snapshot({
      dir,
      manifest,
      manifestSha256: sha256Hex(manifestBytes),
      meta,
      topProductCodes,
      recordIndex,
      productCodeIndex,
      files,
      shardCacheSize: options.shardCacheSize ?? DEFAULT_SHARD_CACHE_SIZE,
      onCorrupt: options.onCorrupt,
    });
  }

  /** The snapshot's content id (16 hex digits). */
  get id(): string {
    return this.manifest.snapshotId;
  }

  /** The manifest's entry for a file, or undefined when the snapshot has no such file. */
  fileEntry(rel: string): FileEntry | undefined {
    return this.files.get(rel);
  }

  /**
   * The bytes of one of the snapshot's files (a path the manifest lists, or the manifest itself), checked against
   * the manifest's sha256; throws CorruptFile when they do not match.
   */
  async readFile(rel: string): Promise<Buffer> {
    const safe = safeRelPath(rel);
    const entry = safe === null ? undefined : this.files.get(safe);
    if (safe === null || (safe !== LAYOUT.manifest && !entry)) {
      throw new Error(`${rel} is not a file of snapshot ${this.id}`);
    }
    const bytes = await readSnapshotFile(this.dir, safe);
    // The manifest cannot list itself; it must still be the one this snapshot was opened with.
    const bad = entry ? mismatch(entry, bytes) : sha256Hex(bytes) === this.manifestSha256 ? null : { actual: sha256Hex(bytes) };
    if (bad) return this.corrupt(safe, entry?.sha256 ?? this.manifestSha256, bad.actual);
    this.verified.add(safe);
    return bytes;
  }

  /** Checks a file against its sha256 once per snapshot (later calls cost nothing); throws CorruptFile. */
  async verifyFile(rel: string): Promise<void> {
    if (!this.verified.has(rel)) await this.readFile(rel);
  }

  private corrupt(path: string, expected: string, actual: string): never {
    const report: CorruptFileReport = { snapshotId: this.id, dir: this.dir, path, expected, actual };
    if (!this.reported.has(path)) {
      this.reported.add(path);
      this.onCorrupt?.(report);
    }
    throw new CorruptFile(report);
  }

  /**
   * A per-snapshot cache slot: the factory runs once per key and snapshot, and its value (a promise too) is kept
   * for the snapshot's life. A rejected promise is forgotten, so a failed load is retried by the next request.
   */
  memo<T>(key: string, factory: () => T): T {
    if (this.memos.has(key)) return this.memos.get(key) as T;
    const value = factory();
    this.memos.set(key, value);
    if (value instanceof Promise) {
      value.catch(() => {
        if (this.memos.get(key) === value) this.memos.delete(key);
      });
    }
    return value;
  }

  /** The records of the i-th shard of `records/index.json`, kNumber ascending. */
  recordShard(position: number): Promise<ClearanceRecord[]> {
    const shard = this.recordIndex.shards[position];
    if (!shard) return Promise.resolve([]);
    return this.shard(shard.path, RecordShard);
  }

  /** The entries of the i-th shard of `product-codes/index.json`, code ascending. */
  productCodeShard(position: number): Promise<ProductCodeEntry[]> {
    const shard = this.productCodeIndex.shards[position];
    if (!shard) return Promise.resolve([]);
    return this.shard(shard.path, ProductCodeShard);
  }

  async getRecord(kNumber: string): Promise<ClearanceRecord | null> {
    const shard = shardHolding(this.recordIndex, kNumber);
    if (!shard) return null;
    const records = await this.shard(shard.path, RecordShard);
    return findSorted(records, kNumber, (r) => r.kNumber) ?? null;
  }

  /** The records of these K numbers, in the order asked; K numbers not in the snapshot are left out. */
  async getRecords(kNumbers: readonly string[]): Promise<ClearanceRecord[]> {
    const found = await Promise.all(kNumbers.map((k) => this.getRecord(k)));
    return found.filter((r): r is ClearanceRecord => r !== null);
  }

  async getProductCode(code: string): Promise<ProductCodeEntry | null> {
    const shard = shardHolding(this.productCodeIndex, code);
    if (!shard) return null;
    const entries = await this.shard(shard.path, ProductCodeShard);
    return findSorted(entries, code, (e) => e.productCode) ?? null;
  }

  /** A parsed shard, from the cache or the disk; concurrent requests for the same shard share one read. */
  private shard<S extends z.ZodType>(rel: string, schema: S): Promise<z.output<S>> {
    const cached = this.shards.get(rel);
    if (cached) return cached as Promise<z.output<S>>;
    const loading = this.readFile(rel).then((bytes) => parseJson(this.dir, rel, bytes, schema));
    this.shards.set(rel, loading);
    loading.catch(() => {
      if (this.shards.get(rel) === loading) this.shards.delete(rel);
    });
    return loading;
  }
}

function parseJson<S extends z.ZodType>(dir: string, rel: string, bytes: Buffer, schema: S): z.output<S> {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new InvalidSnapshot(dir, `${rel} is not valid JSON`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InvalidSnapshot(dir, `${rel} does not match its schema at ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}
