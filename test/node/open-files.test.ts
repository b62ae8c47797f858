import { cp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeStorage } from '../../src/node/files.ts';
import { openSnapshotDirectory } from '../../src/node/index.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { writeUntilChangeTimeMoves } from '../helpers/damage.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/**
 * NodeStorage with descriptors kept open between reads (src/node/files.ts, a server's OPEN_FILES): the bytes are
 * those on disk now, a file removed or replaced is seen at once, no more than the bound stay open, and `close()` lets
 * go of them all while reads go on working. Descriptors are counted in /proc/self/fd (Linux, as the server runs).
 */
let dir: string;

const openNow = async () => (await readdir('/proc/self/fd')).length;

beforeAll(async () => {
  dir = await testTempDir('open-files-');
  for (let i = 0; i < 5; i++) await writeFile(join(dir, `f${i}.txt`), `file ${i}\n`);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const text = (bytes: Uint8Array) => Buffer.from(bytes).toString();

describe('descriptors kept open between reads', () => {
  it('keeps at most the bound open, the most recently used, and closes them all on close()', async () => {
    const before = await openNow();
    const storage = new NodeStorage(dir, { openFiles: 3 });
    for (let i = 0; i < 5; i++) expect(text(await storage.read(`f${i}.txt`))).toBe(`file ${i}\n`);
    expect((await openNow()) - before).toBe(3);
    // Read again: the same descriptors serve, none more are opened.
    for (let i = 2; i < 5; i++) expect(text(await storage.readRange(`f${i}.txt`, 5, 1))).toBe(String(i));
    expect((await openNow()) - before).toBe(3);
    storage.close();
    expect(await openNow()).toBe(before);
    // Reads after close() open and close their file each time.
    expect(text(await storage.read('f0.txt'))).toBe('file 0\n');
    expect(await openNow()).toBe(before);
  });

  it('keeps none without a bound', async () => {
    const before = await openNow();
    const storage = new NodeStorage(dir);
    for (let i = 0; i < 5; i++) await storage.read(`f${i}.txt`);
    expect(await openNow()).toBe(before);
  });

  it('reads a file replaced on disk anew, and refuses one removed, though its descriptor was kept', async () => {
    const storage = new NodeStorage(dir, { openFiles: 8 });
    await writeFile(join(dir, 'swap.txt'), 'old bytes\n');
    expect(text(await storage.read('swap.txt'))).toBe('old bytes\n');
    await writeFile(join(dir, 'swap.new'), 'new bytes\n');
    await rename(join(dir, 'swap.new'), join(dir, 'swap.txt'));
    expect(text(await storage.read('swap.txt'))).toBe('new bytes\n');
    expect(text((await storage.readIdentified('swap.txt', 0, 3)).bytes)).toBe('new');
    await rm(join(dir, 'swap.txt'));
    await expect(storage.read('swap.txt')).rejects.toThrow(/ENOENT/);
    await expect(storage.readRange('swap.txt', 0, 3)).rejects.toThrow(/ENOENT/);
    storage.close();
  });

  it('given the identity a file had, answers with it while the file is unchanged, and with none once it changed', async () => {
    const storage = new NodeStorage(dir, { openFiles: 8 });
    const path = join(dir, 'known.txt');
    await writeFile(path, 'first\n');
    const first = await storage.readIdentified('known.txt', 0, 6);
    expect(first.identity).not.toBeNull();
    // Unchanged: the kept descriptor's one look after the read vouches for the bytes.
    const again = await storage.readIdentified('known.txt', 0, 6, undefined, first.identity!);
    expect({ text: text(again.bytes), identity: again.identity }).toEqual({ text: 'first\n', identity: first.identity });
    // Changed in place, same length: the bytes now on disk, with an identity of their own.
    await writeUntilChangeTimeMoves(path, () => writeFile(path, 'other\n'));
    const changed = await storage.readIdentified('known.txt', 0, 6, undefined, first.identity!);
    expect(text(changed.bytes)).toBe('other\n');
    expect(changed.identity).not.toBe(first.identity);
    // Replaced by a new file: opened anew by its path.
    await writeFile(join(dir, 'known.new'), 'third\n');
    await rename(join(dir, 'known.new'), path);
    const replaced = await storage.readIdentified('known.txt', 0, 6, undefined, changed.identity!);
    expect(text(replaced.bytes)).toBe('third\n');
    expect(replaced.identity).not.toBe(changed.identity);
    storage.close();
  });

  it('a snapshot no longer served lets go of its descriptors', async () => {
    const fixture = await buildFixtureSnapshot();
    const copy = join(dir, 'snapshot');
    await cp(fixture, copy, { recursive: true, dereference: true });
    const before = await openNow();
    const snapshot = await openSnapshotDirectory(copy, { cacheBytes: 1, openFiles: 64 });
    for (let i = 0; i < Math.min(4, snapshot.recordIndex.shards.length); i++) await snapshot.shardLines('clearance', i);
    expect(await openNow()).toBeGreaterThan(before);
    snapshot.close();
    expect(await openNow()).toBe(before);
    expect((await snapshot.shardLines('clearance', 0)).starts.length).toBe(snapshot.recordIndex.shards[0]!.count);
  });
});
