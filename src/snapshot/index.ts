// The portable snapshot: what every host (the Node server, the Worker) and the build read a snapshot with. A host's
// own storage and the way it follows publications live in its adapter (src/node, src/worker).
export { findSorted, firstShardAfter, lowerBound, shardHolding, shardPositionHolding } from './keys.ts';
export { lineKey, type ShardLines } from './lines.ts';
export { safeRelPath } from './paths.ts';
export { bytesEqual, toHex, UnavailableFile, type SnapshotStorage } from './storage.ts';
export { CorruptFile, DEFAULT_CACHE_BYTES, InvalidSnapshot, Snapshot, UNREADABLE, type CorruptFileReport, type HeldTable, type ReadCounts, type ReadSlices, type SnapshotOptions } from './snapshot.ts';
