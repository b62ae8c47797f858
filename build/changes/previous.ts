import { ChangeLog, CHANGES_PATH } from '../../src/contract/changes.ts';
import { LAYOUT, RecordShard, type ClearanceRecord, type Manifest } from '../../src/contract/index.ts';
import { NodeStorage } from '../../src/node/files.ts';
import { Snapshot } from '../../src/snapshot/index.ts';
import { activeSnapshotDir } from '../publish/publish.ts';

/** The snapshot published at `out` before this build: what the change log compares with. */
export type PreviousSnapshot = {
  dir: string;
  manifest: Manifest;
  /** Its own change log, when it has a readable one. */
  changes: ChangeLog | null;
  /** A record shard, checked against its sha256 in the manifest (CorruptFile when it does not match). */
  readShard(path: string): Promise<ClearanceRecord[]>;
  /** Any listed file's bytes, checked against its sha256 (CorruptFile when they do not match or cannot be read). */
  readFile(path: string): Promise<Uint8Array>;
};

const decoder = new TextDecoder();

/**
 * Opens the published snapshot through the server's Snapshot (the manifest parsed and its id checked, each file
 * checked against its sha256 when read), or returns null when there is none or it cannot be
 * opened as one (an older layout, a damaged manifest): then the new snapshot is compared with nothing, which is
 * safe, never wrong.
 */
export async function openPreviousSnapshot(out: string): Promise<PreviousSnapshot | null> {
  const dir = await activeSnapshotDir(out);
  if (dir === null) return null;
  // Not Snapshot.open: it would refuse the whole snapshot over one damaged shard, and the shards this build has
  // not changed are never read. The manifest, its id and the four files every answer needs are checked here, and
  // each shard read is checked against its sha256.
  let snapshot: Snapshot;
  try {
    const storage = new NodeStorage(dir);
    snapshot = await Snapshot.fromStorage(storage, await storage.read(LAYOUT.manifest));
  } catch {
    return null;
  }
  const json = async (path: string): Promise<unknown> => JSON.parse(decoder.decode(await snapshot.readFile(path)));
  const changes = snapshot.fileEntry(CHANGES_PATH) ? ChangeLog.safeParse(await json(CHANGES_PATH).catch(() => undefined)) : null;
  return {
    dir,
    manifest: snapshot.manifest,
    changes: changes?.success ? changes.data : null,
    readShard: async (path) => RecordShard.parse(await json(path)),
    readFile: (path) => snapshot.readFile(path, true),
  };
}
