// The Node adapter of the snapshot: a snapshot folder on the local disk, the link that names the one being served,
// and the sync's state file beside it.
export { checkListedFiles, NodeStorage } from './files.ts';
export { openSnapshotDirectory } from './open-directory.ts';
export { SnapshotSource, type CheckResult, type SnapshotSourceOptions } from './snapshot-source.ts';
export { SyncStateReader, type SyncStateReaderOptions } from './sync-state.ts';
