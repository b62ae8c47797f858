import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileEntry, LAYOUT, Manifest, ShardIndex, snapshotIdOf } from '../../src/contract/index.ts';
import { openSnapshotDirectory } from '../../src/node/index.ts';
import { InvalidSnapshot } from '../../src/snapshot/index.ts';
import { FILE_LIST, SHARD_LIST, type LongList } from '../../src/snapshot/open.ts';
import { sha256Hex } from '../../src/utils/sha256-hex.ts';
import { buildFixture } from '../helpers/fixture-snapshot.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/**
 * Opening a snapshot checks the manifest's files and the shard indexes' shards entry by entry, most of them without
 * the schema (src/snapshot/open.ts, LongList). These check that the shortcut never takes an entry the schema refuses,
 * that it does take the entries a build writes, and that a bad entry is still refused, named by where it is.
 */

/** Entries the schema may refuse: every member missing, of another type, out of range, or one member too many. */
function variants(entry: Record<string, unknown>): unknown[] {
  const out: unknown[] = [null, [], 'x', 1, [entry], { ...entry, extra: 1 }, { ...entry, ['__proto__']: 1 }];
  for (const key of Object.keys(entry)) {
    const { [key]: _, ...without } = entry;
    out.push(without);
    for (const value of [null, undefined, true, '', 'A'.repeat(64), 'g'.repeat(64), 'a'.repeat(63), 'a'.repeat(65), -1, 0, 1.5, 2 ** 53, Number.NaN, [], {}]) {
      out.push({ ...entry, [key]: value });
    }
    // The same member, of the other type it could be confused with.
    out.push({ ...entry, [key]: typeof entry[key] === 'number' ? String(entry[key]) : 7 });
  }
  // As JSON.parse would make them (a `__proto__` member is an own member there).
  out.push(JSON.parse(`{"__proto__":1,${JSON.stringify(entry).slice(1)}`));
  return out;
}

function agreesWithSchema(list: LongList, schema: { safeParse(v: unknown): { success: boolean } }, entries: readonly Record<string, unknown>[]) {
  let taken = 0;
  for (const entry of entries) {
    expect(list.plain(entry), JSON.stringify(entry)).toBe(true);
    expect(schema.safeParse(entry).success).toBe(true);
    for (const variant of variants(entry)) {
      if (!list.plain(variant)) continue;
      taken++;
      // Whatever the shortcut takes, the schema takes too.
      expect(schema.safeParse(variant).success, JSON.stringify(variant)).toBe(true);
    }
  }
  return taken;
}

async function fixtureCopy(): Promise<string> {
  const { dir } = await buildFixture();
  const copy = join(await testTempDir('device-510k-long-lists-'), 'snap');
  await cp(dir, copy, { recursive: true });
  return copy;
}

async function readManifest(dir: string): Promise<Manifest> {
  return Manifest.parse(JSON.parse(await readFile(join(dir, LAYOUT.manifest), 'utf8')));
}

describe("a snapshot's long lists are checked entry by entry", () => {
  it('takes without the schema only entries the schema takes, and every entry a build writes', async () => {
    const { dir } = await buildFixture();
    const manifest = await readManifest(dir);
    const recordIndex = ShardIndex.parse(JSON.parse(await readFile(join(dir, LAYOUT.recordIndex), 'utf8')));
    const codeIndex = ShardIndex.parse(JSON.parse(await readFile(join(dir, LAYOUT.productCodeIndex), 'utf8')));
    expect(manifest.files.length).toBeGreaterThan(10);
    agreesWithSchema(FILE_LIST, FileEntry, manifest.files);
    agreesWithSchema(SHARD_LIST, ShardIndex.shape.shards.element, [...recordIndex.shards, ...codeIndex.shards]);
  });

  it('opens a snapshot to the same manifest and indexes the schema makes of its files', async () => {
    const { dir } = await buildFixture();
    const snapshot = await openSnapshotDirectory(dir);
    expect(snapshot.manifest).toEqual(await readManifest(dir));
    expect(snapshot.recordIndex).toEqual(ShardIndex.parse(JSON.parse(await readFile(join(dir, LAYOUT.recordIndex), 'utf8'))));
    expect(snapshot.productCodeIndex).toEqual(ShardIndex.parse(JSON.parse(await readFile(join(dir, LAYOUT.productCodeIndex), 'utf8'))));
  });

  it("refuses a manifest with a bad file entry, naming the entry's member", async () => {
    const copy = await fixtureCopy();
    const manifest = await readManifest(copy);
    const files = manifest.files.map((f, i) => (i === 3 ? { ...f, sha256: f.sha256.toUpperCase() } : f));
    await writeFile(join(copy, LAYOUT.manifest), `${JSON.stringify({ ...manifest, files })}\n`);
    await expect(openSnapshotDirectory(copy)).rejects.toThrow(InvalidSnapshot);
    await expect(openSnapshotDirectory(copy)).rejects.toThrow(/manifest\.json does not match its schema at files\.3\.sha256/);
  });

  it('refuses a manifest with an entry of one member too many, and one whose file list is not a list', async () => {
    const copy = await fixtureCopy();
    const manifest = await readManifest(copy);
    const files = manifest.files.map((f, i) => (i === 1 ? { ...f, size: 1 } : f));
    await writeFile(join(copy, LAYOUT.manifest), `${JSON.stringify({ ...manifest, files })}\n`);
    await expect(openSnapshotDirectory(copy)).rejects.toThrow(/manifest\.json does not match its schema at files\.1/);
    await writeFile(join(copy, LAYOUT.manifest), `${JSON.stringify({ ...manifest, files: {} })}\n`);
    await expect(openSnapshotDirectory(copy)).rejects.toThrow(/manifest\.json does not match its schema at files:/);
  });

  it('refuses a record index with a bad shard, listed with its right digest, naming the shard', async () => {
    const copy = await fixtureCopy();
    const index = ShardIndex.parse(JSON.parse(await readFile(join(copy, LAYOUT.recordIndex), 'utf8')));
    expect(index.shards.length).toBeGreaterThan(1);
    const bytes = Buffer.from(`${JSON.stringify({ ...index, shards: index.shards.map((s, i) => (i === 1 ? { ...s, count: 0 } : s)) })}\n`);
    await writeFile(join(copy, LAYOUT.recordIndex), bytes);
    const manifest = await readManifest(copy);
    const files = manifest.files.map((f) => (f.path === LAYOUT.recordIndex ? { ...f, bytes: bytes.length, sha256: sha256Hex(bytes) } : f));
    await writeFile(join(copy, LAYOUT.manifest), `${JSON.stringify({ ...manifest, files, snapshotId: snapshotIdOf(files, sha256Hex) })}\n`);
    await expect(openSnapshotDirectory(copy)).rejects.toThrow(/records\/index\.json does not match its schema at shards\.1\.count/);
  });
});
