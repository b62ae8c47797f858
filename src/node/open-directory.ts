import { realpath } from 'node:fs/promises';
import { LAYOUT } from '../contract/index.ts';
import { checkListedFiles, NodeStorage } from './files.ts';
import { InvalidSnapshot, Snapshot, type SnapshotOptions } from '../snapshot/snapshot.ts';

/**
 * Opens a snapshot folder on the local disk: follows the link to the real folder (so a later switch of the link
 * cannot change what this Snapshot reads), checks that every listed file is there with its listed size, then opens
 * it over a NodeStorage.
 */
export async function openSnapshotDirectory(path: string, options: SnapshotOptions = {}): Promise<Snapshot> {
  const dir = await realpath(path).catch(() => {
    throw new InvalidSnapshot(path, 'the directory does not exist');
  });
  const storage = new NodeStorage(dir, { openFiles: options.openFiles ?? 0 });
  const manifestBytes = await storage.read(LAYOUT.manifest).catch(() => {
    throw new InvalidSnapshot(dir, `${LAYOUT.manifest} is missing`);
  });
  return Snapshot.fromStorage(storage, manifestBytes, options, (files) => checkListedFiles(dir, files));
}
