export { LruCache } from './lru.ts';
export { findSorted, firstShardAfter, lowerBound, shardHolding, shardPositionHolding } from './keys.ts';
export { lineKey, type ShardLines } from './lines.ts';
export { safeRelPath } from './paths.ts';
export { bytesEqual, toHex, UnavailableFile, type SnapshotStorage } from './storage.ts';
export { CorruptFile, DEFAULT_CACHE_BYTES, InvalidSnapshot, Snapshot, UNREADABLE, type CorruptFileReport, type HeldTable, type ReadCounts, type SnapshotOptions } from './snapshot.ts';
export { openSnapshotDirectory } from './node-open.ts';
export { SnapshotSource, type CheckResult, type SnapshotSourceOptions } from './source.ts';
export { SyncStateReader, parseSyncState, type SyncStatus, type SyncStateReaderOptions } from './sync-state.ts';
