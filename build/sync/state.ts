import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { EMPTY_SYNC_STATE, SyncState } from '../../src/contract/sync.ts';

/** The sync's state file and its lock: the only files of `.sync/` besides the sources themselves. */

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

/**
 * One sync at a time per `.sync` folder: a cron job that overruns must not race the next one. A lock left by a
 * process that died is taken over.
 */
export async function acquireLock(dir: string): Promise<() => Promise<void>> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, 'lock');
  // The pid is written to a private file first and linked into place, so the lock never exists empty.
  const mine = join(dir, `.lock-${process.pid}-${randomBytes(3).toString('hex')}`);
  await writeFile(mine, String(process.pid));
  try {
    for (let tries = 0; tries < 3; tries++) {
      try {
        await link(mine, path);
        return () => rm(path, { force: true });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const pid = Number((await readFile(path, 'utf8').catch(() => '')).trim());
        if (isAlive(pid)) throw new Error(`another sync (process ${pid}) holds ${path}`);
        await rm(path, { force: true });
      }
    }
  } finally {
    await rm(mine, { force: true });
  }
  throw new Error(`could not take the lock ${path}`);
}

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
