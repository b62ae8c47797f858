import { cp, mkdtemp, open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A copy of a snapshot (links followed) in a fresh temporary folder, for tests that damage its files. */
export async function snapshotCopy(source: string, prefix: string): Promise<string> {
  const dir = join(await mkdtemp(join(tmpdir(), prefix)), 'snap');
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
