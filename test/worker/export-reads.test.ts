import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { LAYOUT, ShardIndex } from '../../src/contract/index.ts';
import { NodeStorage } from '../../src/node/files.ts';
import { CorruptFile, Snapshot, type SnapshotStorage } from '../../src/snapshot/index.ts';
import { AssetsStorage, type AssetsBinding } from '../../src/worker/storage.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';

/**
 * What an export's record reads cost a Worker, counted: its storages read a batch's records of one shard in one request
 * (a request costs the isolate more than a shard's bytes, and static assets send the whole file whatever the Range), and
 * check the records with the host's native hash (Web Crypto, asynchronous) rather than the script's.
 */
let path: string;
let shard: { path: string; kNumbers: string[] };

beforeAll(async () => {
  path = await buildFixtureSnapshot();
  const index = ShardIndex.parse(JSON.parse(await readFile(join(path, LAYOUT.recordIndex), 'utf8')));
  // The shard with the most records, each given by its K number, read from the shard's own lines.
  const most = [...index.shards].sort((a, b) => b.count - a.count)[0]!;
  const records = JSON.parse(await readFile(join(path, most.path), 'utf8')) as { kNumber: string }[];
  shard = { path: most.path, kNumbers: records.map((r) => r.kNumber) };
  expect(shard.kNumbers.length).toBeGreaterThanOrEqual(3);
});

/**
 * Static assets over the fixture folder as Miniflare serves them: every GET answered 200 with the whole file. With
 * `damaged` set, the record shard's bytes come back with one byte of its second record changed (the same length).
 */
function assetsOverFolder(): { storage: AssetsStorage; fetched: string[]; damage: () => void } {
  const fetched: string[] = [];
  let damaged = false;
  const binding: AssetsBinding = {
    fetch: async (request) => {
      const rel = new URL(request.url).pathname.replace(/^\/snapshot\//, '');
      fetched.push(rel);
      const bytes = await readFile(join(path, rel));
      if (damaged && rel === shard.path) {
        const at = bytes.indexOf(`"${shard.kNumbers[1]}"`) + 2;
        bytes[at] = bytes[at] === 0x4b ? 0x4c : 0x4b;
      }
      return new Response(bytes);
    },
  };
  return { storage: new AssetsStorage(binding, 'snapshot/'), fetched, damage: () => (damaged = true) };
}

/** The storage with its script hash counted: the calls that hashed one record each. */
function countingSyncHash<S extends SnapshotStorage>(storage: S): { storage: S; syncHashes: () => number } {
  let calls = 0;
  const own = storage.sha256.bind(storage);
  storage.sha256 = (bytes) => {
    calls++;
    return own(bytes);
  };
  return { storage, syncHashes: () => calls };
}

async function exportRead(snapshot: Snapshot, kNumbers: readonly string[]): Promise<string[]> {
  const seen: string[] = [];
  await snapshot.eachRecordUncached(kNumbers, (_, bytes) => seen.push((JSON.parse(new TextDecoder().decode(bytes)) as { kNumber: string }).kNumber), undefined, new Map());
  return seen;
}

describe("an export's record reads on a Worker's storage", () => {
  it('reads a shard’s records in one request and checks each with the asynchronous hash, not the script’s', async () => {
    const { storage, fetched } = assetsOverFolder();
    const counted = countingSyncHash(storage);
    const snapshot = await Snapshot.fromStorage(counted.storage, await readFile(join(path, LAYOUT.manifest)));
    // The first, the middle and the last record of the shard: apart, as a batch in date order takes them.
    const ks = [shard.kNumbers[0]!, shard.kNumbers[Math.floor(shard.kNumbers.length / 2)]!, shard.kNumbers.at(-1)!];
    await exportRead(snapshot, ks);
    fetched.length = 0;
    const before = counted.syncHashes();
    expect(await exportRead(snapshot, ks)).toEqual(ks);
    expect(fetched).toEqual([shard.path]);
    expect(counted.syncHashes() - before).toBe(0);
  });

  it('still refuses a record whose bytes no longer match its digest, naming its shard', async () => {
    const { storage, damage } = assetsOverFolder();
    const snapshot = await Snapshot.fromStorage(storage, await readFile(join(path, LAYOUT.manifest)));
    const ks = shard.kNumbers.slice(0, 2);
    expect(await exportRead(snapshot, ks)).toEqual(ks);
    damage();
    const refused = await exportRead(snapshot, ks).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(CorruptFile);
    expect((refused as CorruptFile).report.path).toBe(shard.path);
  });
});

describe("the storage's gap between ranges", () => {
  it('decides which records of a shard are read together: with none, each on its own; on a local disk, the shard in one read', async () => {
    const counts: number[] = [];
    for (const rangeGapBytes of [0, undefined]) {
      let reads = 0;
      const node = new NodeStorage(path);
      const storage: SnapshotStorage = {
        location: node.location,
        ...(rangeGapBytes === undefined ? {} : { rangeGapBytes }),
        read: (p) => node.read(p),
        readRange: (p, offset, length) => {
          if (p === shard.path) reads++;
          return node.readRange(p, offset, length);
        },
        sha256: (bytes) => node.sha256(bytes),
      };
      const snapshot = await Snapshot.fromStorage(storage, await readFile(join(path, LAYOUT.manifest)));
      expect(await exportRead(snapshot, shard.kNumbers)).toEqual(shard.kNumbers);
      counts.push(reads);
    }
    expect(counts).toEqual([shard.kNumbers.length, 1]);
  });
});
