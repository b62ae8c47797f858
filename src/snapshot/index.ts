export { LruCache } from './lru.ts';
export { findSorted, firstShardAfter, lowerBound, shardHolding } from './keys.ts';
export { CorruptFile, DEFAULT_SHARD_CACHE_SIZE, InvalidSnapshot, Snapshot, type CorruptFileReport, type SnapshotOptions } from './snapshot.ts';
export { SnapshotSource, type CheckResult, type SnapshotSourceOptions } from './source.ts';
export { SyncStateReader, parseSyncState, type SyncStatus, type SyncStateReaderOptions } from './sync-state.ts';
