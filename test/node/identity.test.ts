import { cp, open, rm, stat, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSnapshotDirectory } from '../../src/node/index.ts';
import { CorruptFile, type Snapshot } from '../../src/snapshot/index.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/**
 * A shard read again after it left the byte cache is not hashed again while the storage says it is the same file
 * (src/node/files.ts `readIdentified`): the same device, inode, size and times as when it last matched. Any
 * change in place, even one that keeps the length and puts the modification time back, is hashed and refused. The
 * same with descriptors kept open between reads (a server's `openFiles`).
 */
let dir: string;
let fixture: string;

beforeAll(async () => {
  fixture = await buildFixtureSnapshot();
  dir = await testTempDir('identity-');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A copy of the fixture snapshot, opened with a cache too small to keep any shard, counting its sha256 calls. */
async function openCopy(name: string, openFiles: number): Promise<{ snapshot: Snapshot; path: string; hashes: () => number }> {
  const path = join(dir, `${name}-${openFiles}`);
  await cp(fixture, path, { recursive: true, dereference: true });
  const snapshot = await openSnapshotDirectory(path, { cacheBytes: 1, openFiles });
  let hashes = 0;
  const real = snapshot.storage.sha256.bind(snapshot.storage);
  snapshot.storage.sha256 = (bytes: Uint8Array) => {
    hashes++;
    return real(bytes);
  };
  return { snapshot, path, hashes: () => hashes };
}

describe.each([0, 64])('shards read again are hashed again only when their file changed (%i descriptors kept)', (openFiles) => {
  it('an unchanged shard is hashed once, however often it is read', async () => {
    const { snapshot, hashes } = await openCopy('unchanged', openFiles);
    const first = await snapshot.shardLines('clearance', 0);
    const bytes = Buffer.from(first.bytes);
    expect(hashes()).toBe(1);
    for (let i = 0; i < 5; i++) expect(Buffer.from((await snapshot.shardLines('clearance', 0)).bytes).equals(bytes)).toBe(true);
    expect(hashes()).toBe(1);
  });

  it('a same-length change in place, with the modification time put back, is hashed and refused', async () => {
    const { snapshot, path, hashes } = await openCopy('edited', openFiles);
    const shardPath = snapshot.recordIndex.shards[0]!.path;
    await snapshot.shardLines('clearance', 0);
    expect(hashes()).toBe(1);
    const file = join(path, shardPath);
    const before = await stat(file);
    // Change one letter inside a value: the same length, still JSON.
    const handle = await open(file, 'r+');
    try {
      const { bytes } = await snapshot.shardLines('clearance', 0);
      const at = Buffer.from(bytes).indexOf('"title":"') + 9;
      const old = bytes[at]!;
      await handle.write(Buffer.from([old === 0x41 ? 0x42 : 0x41]), 0, 1, at);
    } finally {
      await handle.close();
    }
    await utimes(file, before.atime, before.mtime);
    await expect(snapshot.shardLines('clearance', 0)).rejects.toBeInstanceOf(CorruptFile);
    expect(hashes()).toBeGreaterThan(1);
  });

  it('a shard replaced by another file of the same bytes is hashed again (a new inode), and served', async () => {
    const { snapshot, path, hashes } = await openCopy('replaced', openFiles);
    const shardPath = snapshot.recordIndex.shards[0]!.path;
    await snapshot.shardLines('clearance', 0);
    const file = join(path, shardPath);
    await cp(file, `${file}.new`);
    await rm(file);
    await cp(`${file}.new`, file);
    await rm(`${file}.new`);
    await snapshot.shardLines('clearance', 0);
    expect(hashes()).toBe(2);
  });
});
