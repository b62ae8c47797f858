import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { isAlive } from '../publish/publish.ts';

/**
 * One sync (or mirror) at a time per folder: a cron job that overruns must not race the next one. The lock file
 * holds the owner's pid; a lock left by a process that died is taken over. `label` names the job in the error.
 */
export async function acquireLock(path: string, label: string): Promise<() => Promise<void>> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true });
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
        if (isAlive(pid)) throw new Error(`another ${label} (process ${pid}) holds ${path}`);
        await rm(path, { force: true });
      }
    }
  } finally {
    await rm(mine, { force: true });
  }
  throw new Error(`could not take the lock ${path}`);
}
