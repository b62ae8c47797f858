import { readFile, cp, open as openFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAYOUT, recordTablePartPath } from '../../src/contract/index.ts';
import { NodeStorage } from '../../src/node/files.ts';
import { openSnapshotDirectory } from '../../src/node/index.ts';
import { CorruptFile, Snapshot, type SnapshotOptions, type SnapshotStorage } from '../../src/snapshot/index.ts';
import { writeUntilChangeTimeMoves } from '../helpers/damage.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/**
 * The record table (each record's place in its shard and its digest). On a storage that cannot tell a file's identity
 * (a Worker's), it is kept in parts under `tableCacheBytes`, all of it by default, and a part let go is read and
 * checked again when needed. On a local disk, no part is kept by default: a part is read whole and checked once, and
 * after that a lookup reads only its shard's entries, while the part's file is provably the one that matched.
 */
let fixture: string;
let dir: string;

beforeAll(async () => {
  fixture = await buildFixtureSnapshot();
  dir = await testTempDir('record-table-');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const TABLE = recordTablePartPath(0);

/** A local-disk storage without `readIdentified`, as a storage that cannot tell identities is. */
function withoutIdentity(storage: NodeStorage): SnapshotStorage {
  return {
    location: storage.location,
    read: (path) => storage.read(path),
    readRange: (path, offset, length) => storage.readRange(path, offset, length),
    readInto: (path, offset, into) => storage.readInto(path, offset, into),
    sha256: (bytes) => storage.sha256(bytes),
  };
}

type Opened = { snapshot: Snapshot; wholeReads: () => number; entryReads: () => number };

/**
 * The fixture snapshot (or a copy at `at`), keeping no records (every read goes to the table), counting whole reads of
 * the table's first part and reads of a shard's entries in it.
 */
async function open(options: SnapshotOptions, identity: boolean, at = fixture): Promise<Opened> {
  const node = new NodeStorage(at);
  const storage = identity ? node : withoutIdentity(node);
  let whole = 0;
  let entries = 0;
  const read = storage.read.bind(storage);
  storage.read = (path: string) => {
    if (path === TABLE) whole++;
    return read(path);
  };
  if (storage.readIdentified) {
    const readIdentified = storage.readIdentified.bind(storage);
    storage.readIdentified = (path, offset, length, into) => {
      if (path === TABLE) {
        if (offset === 0 && length === 0) throw new Error('unexpected empty read');
        // The part's whole length only for the whole read; a shard's entries are at most 100 of 28 bytes.
        if (length > 100 * 28) whole++;
        else entries++;
      }
      return readIdentified(path, offset, length, into);
    };
  }
  const snapshot = await Snapshot.fromStorage(storage, await readFile(join(at, LAYOUT.manifest)), { cacheBytes: 1, ...options });
  return { snapshot, wholeReads: () => whole, entryReads: () => entries };
}

/** K numbers of the first shard, which every read after the first finds through the record table. */
async function firstShardKNumbers(snapshot: Snapshot): Promise<string[]> {
  const lines = await snapshot.shardLines('clearance', 0);
  const out: string[] = [];
  for (let i = 0; i < lines.starts.length; i++) {
    const line = new TextDecoder().decode(lines.bytes.subarray(lines.starts[i], lines.ends[i]));
    out.push((JSON.parse(line) as { kNumber: string }).kNumber);
  }
  return out;
}

describe('the record table where identities cannot be told', () => {
  it('is read once and kept whole by default', async () => {
    const { snapshot, wholeReads } = await open({}, false);
    const ks = (await firstShardKNumbers(snapshot)).slice(0, 5);
    for (const k of ks) expect(await snapshot.recordJson(k)).not.toBeNull();
    expect(wholeReads()).toBe(1);
    expect(snapshot.tableBytes).toBeGreaterThan(0);
  });

  it('is read again for each lookup when its bound holds no part, and gives the same records', async () => {
    const whole = await open({}, false);
    const bounded = await open({ tableCacheBytes: 1 }, false);
    const ks = (await firstShardKNumbers(bounded.snapshot)).slice(0, 5);
    for (const k of ks) {
      const expected = Buffer.from((await whole.snapshot.recordJson(k))!);
      expect(Buffer.from((await bounded.snapshot.recordJson(k))!).equals(expected)).toBe(true);
    }
    expect(bounded.wholeReads()).toBe(ks.length);
    expect(bounded.snapshot.tableBytes).toBe(0);
    // Exports read through the table as well.
    const seen: string[] = [];
    await bounded.snapshot.eachRecordUncached(ks, (_, bytes) => seen.push(Buffer.from(bytes).toString('utf8')));
    expect(seen.map((s) => (JSON.parse(s) as { kNumber: string }).kNumber)).toEqual(ks);
    expect(bounded.wholeReads()).toBe(ks.length + 1);
  });
});

describe('the record table on a local disk', () => {
  it('is read whole once and not kept; lookups then read their shard\'s entries and give the same records', async () => {
    const kept = await open({}, false);
    const local = await open({}, true);
    const ks = (await firstShardKNumbers(local.snapshot)).slice(0, 5);
    for (const k of ks) {
      const expected = Buffer.from((await kept.snapshot.recordJson(k))!);
      expect(Buffer.from((await local.snapshot.recordJson(k))!).equals(expected)).toBe(true);
    }
    expect(local.wholeReads()).toBe(1);
    expect(local.entryReads()).toBe(ks.length - 1);
    expect(local.snapshot.tableBytes).toBe(0);
    expect(await local.snapshot.recordJson('K999999')).toBeNull();
    const seen: string[] = [];
    await local.snapshot.eachRecordUncached(ks, (_, bytes) => seen.push(Buffer.from(bytes).toString('utf8')));
    expect(seen.map((s) => (JSON.parse(s) as { kNumber: string }).kNumber)).toEqual(ks);
    expect(local.wholeReads()).toBe(1);
  });

  it('is read whole and checked again once its file changed, and a changed part is refused', async () => {
    const copy = join(dir, 'changed');
    await cp(fixture, copy, { recursive: true, dereference: true });
    const local = await open({}, true, copy);
    const [k] = await firstShardKNumbers(local.snapshot);
    expect(await local.snapshot.recordJson(k!)).not.toBeNull();
    expect(await local.snapshot.recordJson(k!)).not.toBeNull();
    expect(local.wholeReads()).toBe(1);
    expect(local.entryReads()).toBe(1);
    // One byte of the first entry's digest changed in place: the same length, and a change time of its own.
    const path = join(copy, TABLE);
    const byte = (await readFile(path))[20]!;
    await writeUntilChangeTimeMoves(path, async () => {
      const handle = await openFile(path, 'r+');
      try {
        await handle.write(Buffer.from([byte ^ 0xff]), 0, 1, 20);
      } finally {
        await handle.close();
      }
    });
    const refused = await local.snapshot.recordJson(k!).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(CorruptFile);
    expect((refused as CorruptFile).report.path).toBe(TABLE);
    expect(local.wholeReads()).toBe(2);
  });

  it('is read whole once for a reader that holds its parts (an export\'s batches), then not read again', async () => {
    const local = await open({}, true);
    const ks = (await firstShardKNumbers(local.snapshot)).slice(0, 5);
    const held = new Map<number, Uint8Array>();
    const seen: string[] = [];
    for (let batch = 0; batch < 3; batch++) {
      await local.snapshot.eachRecordUncached(ks, (_, bytes) => seen.push(Buffer.from(bytes).toString('utf8')), undefined, held);
    }
    expect(seen.map((s) => (JSON.parse(s) as { kNumber: string }).kNumber)).toEqual([...ks, ...ks, ...ks]);
    expect(local.wholeReads()).toBe(1);
    expect(local.entryReads()).toBe(0);
    expect(held.size).toBe(1);
    // Once checked, a part is read whole for the next reader without being hashed again, and still not kept.
    await local.snapshot.eachRecordUncached(ks, () => {}, undefined, new Map());
    expect(local.wholeReads()).toBe(2);
    expect(local.snapshot.tableBytes).toBe(0);
  });

  it('is what a snapshot opened from a folder does', async () => {
    const snapshot = await openSnapshotDirectory(fixture, { cacheBytes: 1 });
    const ks = (await firstShardKNumbers(snapshot)).slice(0, 3);
    for (const k of ks) expect(await snapshot.recordJson(k)).not.toBeNull();
    expect(snapshot.tableBytes).toBe(0);
  });
});
