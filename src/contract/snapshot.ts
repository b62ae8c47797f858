import { z } from 'zod';
import { ClearanceRecord } from './record.ts';
import { ProductCodeCount, ProductCodeEntry } from './classification.ts';
import { MetaData } from './envelope.ts';

/**
 * The snapshot on disk (docs/contract.md section 8). Every path here is relative to the snapshot's root, and the same
 * layout is what a CDN or a mirror hosts, so a static client can find any answer without asking a server.
 */
/**
 * 2: record and product-code shards hold one entry per line, and `records/table/` locates and digests every record,
 * so a server answers from byte ranges without parsing a shard. A server refuses a snapshot of another version.
 */
/**
 * 3: records gain the applicant's contact and address, the decision code and reviewDays; classifications gain
 * foiclass.txt's flags; the search index (version 3) gains a column per filterable and sortable field.
 */
export const SNAPSHOT_SCHEMA_VERSION = 3;

export const LAYOUT = {
  manifest: 'manifest.json',
  meta: 'meta.json',
  report: 'report.json',
  changes: 'changes.json',
  topProductCodes: 'top-product-codes.json',
  recordIndex: 'records/index.json',
  productCodeIndex: 'product-codes/index.json',
  searchDir: 'search',
  pagefindDir: 'pagefind',
  recordTableDir: 'records/table',
  /** The whole table of clearances for data tools: one Parquet file and one SQLite database (docs/data.md). */
  downloadsParquet: 'downloads/clearances.parquet',
  downloadsSqlite: 'downloads/clearances.sqlite',
} as const;

/** The folder of the bulk downloads: files too large for some hosts' per-file limits (the Worker's assets leave it out). */
export const DOWNLOADS_DIR = 'downloads';
/** The media types of the bulk downloads, as IANA registers them. */
export const DOWNLOAD_MEDIA_TYPES = { parquet: 'application/vnd.apache.parquet', sqlite: 'application/vnd.sqlite3' } as const;

/** Records are sharded by the first five characters of the K number ("K1234"): at most 100 records a shard. */
export function recordShardId(kNumber: string): string {
  return kNumber.slice(0, 5);
}
export function recordShardPath(shardId: string): string {
  return `records/${shardId}.json`;
}

/**
 * The record table: for every record, in the order of `records/index.json`'s shards and kNumber ascending within
 * each, one fixed-size entry: the K number's six digits (u32), the byte offset and length of the record's line in
 * its shard (u32 each, little-endian), and the first 16 bytes of the sha256 of that line. A part covers
 * `shardsPerPart` consecutive shards, so a reader loads only the parts it needs and checks each against the manifest.
 */
export const RECORD_TABLE = { entryBytes: 28, digestBytes: 16, shardsPerPart: 1024 } as const;
export function recordTablePartPath(part: number): string {
  return `${LAYOUT.recordTableDir}/${String(part).padStart(4, '0')}.bin`;
}

/** Product codes are sharded by their first letter: at most 676 codes a shard, 26 shards. */
export function productCodeShardId(code: string): string {
  return code.slice(0, 1);
}
export function productCodeShardPath(shardId: string): string {
  return `product-codes/${shardId}.json`;
}

export const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);

export const FileEntry = z.strictObject({
  path: z.string(),
  bytes: z.int().min(0),
  sha256: Sha256Hex,
});
export type FileEntry = z.infer<typeof FileEntry>;

export const SourceSummary = z.strictObject({
  /** The name the build was given (a path relative to where it ran, or inside a zip as `a.zip!b.txt`). */
  name: z.string(),
  kind: z.enum(['pmn', 'openfda-json', 'foiclass']),
  bytes: z.int().min(0),
  sha256: Sha256Hex,
  rows: z.int().min(0),
  records: z.int().min(0),
  merged: z.int().min(0),
  skipped: z.int().min(0),
  decisionDateMin: z.string().nullable(),
  decisionDateMax: z.string().nullable(),
});
export type SourceSummary = z.infer<typeof SourceSummary>;

export const Counts = z.strictObject({
  records: z.int().min(0),
  productCodes: z.int().min(0),
  classifiedProductCodes: z.int().min(0),
  sourceRows: z.int().min(0),
  mergedRows: z.int().min(0),
  skippedRows: z.int().min(0),
  fieldIssues: z.int().min(0),
  files: z.int().min(0),
  bytes: z.int().min(0),
});
export type Counts = z.infer<typeof Counts>;

/**
 * The content id of a snapshot: sha256 over every listed file's path and digest, in the manifest's order; 16 hex.
 * The hash is the caller's (node:crypto on Node, the platform's elsewhere), so the contract needs no runtime module.
 */
export function snapshotIdOf(files: readonly FileEntry[], sha256Hex: (bytes: Uint8Array) => string): string {
  return sha256Hex(snapshotIdInput(files)).slice(0, 16);
}

/** The bytes whose sha256 (its first 16 hex digits) is the snapshot id: each file's path and digest, a line each. */
export function snapshotIdInput(files: readonly FileEntry[]): Uint8Array {
  return new TextEncoder().encode(files.map((f) => `${f.path}\t${f.sha256}\n`).join(''));
}

export const Manifest = z.strictObject({
  schemaVersion: z.literal(SNAPSHOT_SCHEMA_VERSION),
  /** Content id of the snapshot: sha256 over every listed file's path and digest. Same inputs, same id. */
  snapshotId: z.string().regex(/^[0-9a-f]{16}$/),
  sourceRevision: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  generatedAt: z.iso.datetime(),
  lastSuccessfulSyncAt: z.iso.datetime().nullable(),
  decisionDateMin: z.string().nullable(),
  decisionDateMax: z.string().nullable(),
  counts: Counts,
  sources: z.array(SourceSummary),
  files: z.array(FileEntry),
});
export type Manifest = z.infer<typeof Manifest>;

export const RecordShard = z.array(ClearanceRecord);
export type RecordShard = z.infer<typeof RecordShard>;

export const ShardIndex = z.strictObject({
  total: z.int().min(0),
  shards: z.array(z.strictObject({ id: z.string(), path: z.string(), count: z.int().min(1), first: z.string(), last: z.string() })),
});
export type ShardIndex = z.infer<typeof ShardIndex>;

export const ProductCodeShard = z.array(ProductCodeEntry);
export type ProductCodeShard = z.infer<typeof ProductCodeShard>;

/** Every product code with at least one clearance, count descending then code ascending (top-product-codes' answer for limit 100 and below). */
export const TopProductCodesFile = z.strictObject({ codes: z.array(ProductCodeCount) });
export type TopProductCodesFile = z.infer<typeof TopProductCodesFile>;

/**
 * A snapshot built before the bulk downloads has no `downloads` member: it is still served as it is (its meta answer
 * lists none), so that upgrading the server never refuses the snapshot it was serving.
 */
export const MetaFile = MetaData.extend({ downloads: MetaData.shape.downloads.optional() });
export type MetaFile = z.infer<typeof MetaFile>;

export const ReportRow = z.strictObject({
  file: z.string(),
  /** 1-based physical line for the pipe files; null for JSON, where `entry` names the element of `results`. */
  line: z.int().min(1).nullable(),
  entry: z.int().min(1).nullable(),
  kNumber: z.string().nullable(),
  reason: z.string(),
});
export type ReportRow = z.infer<typeof ReportRow>;

export const BuildReport = z.strictObject({
  sourceRevision: z.string(),
  sources: z.array(SourceSummary),
  /** Rows that did not become a record and were not merged into one. */
  skipped: z.array(ReportRow),
  skippedByReason: z.record(z.string(), z.int()),
  /** Rows merged into a record that an earlier row had started. */
  merged: z.array(ReportRow),
  /** Values that could not be kept as given (impossible dates, dates before 1900); the row still became a record. */
  fieldIssues: z.array(ReportRow),
  fieldIssuesByReason: z.record(z.string(), z.int()),
});
export type BuildReport = z.infer<typeof BuildReport>;
