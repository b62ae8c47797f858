import { beforeAll, describe, expect, it } from 'vitest';
import { recordTablePartPath } from '../../src/contract/index.ts';
import { openSnapshotDirectory, type Snapshot, type SnapshotOptions } from '../../src/snapshot/index.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';

/**
 * The record table (each record's place in its shard and its digest) is kept in parts under `tableCacheBytes`: all
 * of it by default, as a server does; a Worker bounds it, and a part let go is read and checked again when needed.
 */
let fixture: string;

beforeAll(async () => {
  fixture = await buildFixtureSnapshot();
});

/** The fixture snapshot, keeping no records (every read goes to the table), counting reads of the table's first part. */
async function open(options: SnapshotOptions): Promise<{ snapshot: Snapshot; tableReads: () => number }> {
  const snapshot = await openSnapshotDirectory(fixture, { cacheBytes: 1, ...options });
  let reads = 0;
  const real = snapshot.storage.read.bind(snapshot.storage);
  snapshot.storage.read = (path: string) => {
    if (path === recordTablePartPath(0)) reads++;
    return real(path);
  };
  return { snapshot, tableReads: () => reads };
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

describe('the record table in memory', () => {
  it('is read once and kept whole by default', async () => {
    const { snapshot, tableReads } = await open({});
    const ks = (await firstShardKNumbers(snapshot)).slice(0, 5);
    for (const k of ks) expect(await snapshot.recordJson(k)).not.toBeNull();
    expect(tableReads()).toBe(1);
    expect(snapshot.tableBytes).toBeGreaterThan(0);
  });

  it('is read again for each lookup when its bound holds no part, and gives the same records', async () => {
    const whole = await open({});
    const bounded = await open({ tableCacheBytes: 1 });
    const ks = (await firstShardKNumbers(bounded.snapshot)).slice(0, 5);
    for (const k of ks) {
      const expected = Buffer.from((await whole.snapshot.recordJson(k))!);
      expect(Buffer.from((await bounded.snapshot.recordJson(k))!).equals(expected)).toBe(true);
    }
    expect(bounded.tableReads()).toBe(ks.length);
    expect(bounded.snapshot.tableBytes).toBe(0);
    // Exports read through the table as well.
    const seen: string[] = [];
    await bounded.snapshot.eachRecordUncached(ks, (_, bytes) => seen.push(Buffer.from(bytes).toString('utf8')));
    expect(seen.map((s) => (JSON.parse(s) as { kNumber: string }).kNumber)).toEqual(ks);
    expect(bounded.tableReads()).toBe(ks.length + 1);
  });
});
