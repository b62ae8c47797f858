import { cp, open, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { testTempDir } from './temp-dirs.ts';

/**
 * A copy of a snapshot (links followed) in a fresh temporary folder, for tests that damage its files; removed once
 * the test file is done, as the fixture snapshots are.
 */
export async function snapshotCopy(source: string, prefix: string): Promise<string> {
  const dir = join(await testTempDir(prefix), 'snap');
  await cp(source, dir, { recursive: true, dereference: true });
  return dir;
}

/** Overwrites one byte of a file in place (same size, so only a digest can tell). */
export async function flipByte(path: string, at: number): Promise<void> {
  const file = await open(path, 'r+');
  try {
    const one = Buffer.alloc(1);
    await file.read(one, 0, 1, at);
    one[0] = one[0] === 0x61 ? 0x62 : 0x61;
    await file.write(one, 0, 1, at);
  } finally {
    await file.close();
  }
}

/**
 * Runs `write` (which changes `path` in place, the same way each time) until the file's change time differs from the
 * one it had before: the kernel keeps it in ticks of a few milliseconds, and a reader that tells files apart by it
 * sees no change within one tick. Throws past `deadlineMs`, the bound of a failure, not a wait.
 */
export async function writeUntilChangeTimeMoves(path: string, write: () => Promise<void>, deadlineMs = 10_000): Promise<void> {
  const before = (await stat(path, { bigint: true })).ctimeNs;
  for (const ends = Date.now() + deadlineMs; ; ) {
    await write();
    if ((await stat(path, { bigint: true })).ctimeNs !== before) return;
    if (Date.now() > ends) throw new Error(`${path}: its change time did not move within ${deadlineMs} ms`);
    await new Promise((r) => setTimeout(r, 1));
  }
}
