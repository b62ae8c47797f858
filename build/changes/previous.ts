import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ChangeLog, CHANGES_PATH } from '../../src/contract/changes.ts';
import { LAYOUT, Manifest, RecordShard, type ClearanceRecord } from '../../src/contract/index.ts';
import { activeSnapshotDir } from '../publish/publish.ts';

/** The snapshot published at `out` before this build: what the change log compares with. */
export type PreviousSnapshot = {
  dir: string;
  manifest: Manifest;
  /** Its own change log, when it has a readable one. */
  changes: ChangeLog | null;
  readShard(path: string): Promise<ClearanceRecord[]>;
};

/**
 * Opens the published snapshot, or returns null when there is none or it cannot be read as one (an older layout,
 * a damaged manifest): then the new snapshot is compared with nothing, which is safe, never wrong.
 */
export async function openPreviousSnapshot(out: string): Promise<PreviousSnapshot | null> {
  const dir = await activeSnapshotDir(out);
  if (dir === null) return null;
  const manifest = Manifest.safeParse(await readJson(join(dir, LAYOUT.manifest)));
  if (!manifest.success) return null;
  const changes = ChangeLog.safeParse(await readJson(join(dir, CHANGES_PATH)));
  return {
    dir,
    manifest: manifest.data,
    changes: changes.success ? changes.data : null,
    async readShard(path) {
      return RecordShard.parse(JSON.parse(await readFile(join(dir, path), 'utf8')));
    },
  };
}

async function readJson(path: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(path, 'utf8'));
  } catch {
    return undefined;
  }
}
