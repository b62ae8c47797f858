import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { EMPTY_SYNC_STATE, SyncState } from '../../src/contract/sync.ts';

/** The sync's state file: with the lock, the only file of `.sync/` besides the sources themselves. */

export type StateRead = { state: SyncState; problem: string | null };

/** A missing file is a first run; an unreadable one starts over (every file is fetched again) and says why. */
export async function readSyncState(path: string): Promise<StateRead> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { state: structuredClone(EMPTY_SYNC_STATE), problem: null };
    throw err;
  }
  try {
    return { state: SyncState.parse(JSON.parse(text)), problem: null };
  } catch (err) {
    return { state: structuredClone(EMPTY_SYNC_STATE), problem: `${path} could not be read (${(err as Error).message.split('\n')[0]}); starting over` };
  }
}

/** Written aside and renamed over the old file, so the server never reads half of it. */
export async function writeSyncState(path: string, state: SyncState): Promise<void> {
  const valid = SyncState.parse(state);
  await mkdir(dirname(path), { recursive: true });
  const tmp = join(dirname(path), `.state-${process.pid}-${randomBytes(3).toString('hex')}.json`);
  await writeFile(tmp, `${JSON.stringify(valid, null, 2)}\n`);
  await rename(tmp, path);
}
