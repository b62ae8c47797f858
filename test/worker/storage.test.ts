import { readFile, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LAYOUT, Manifest, ShardIndex } from '../../src/contract/index.ts';
import { FIXTURE_SOURCES, buildFixture, buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { ask, expectError, expectOk } from '../server/helpers.ts';
import { startWorker, type WorkerTarget } from '../../build/worker/local.ts';

/**
 * The Worker's snapshot in R2: what is published and when it is seen, and what a missing or damaged object does
 * (503 source_unavailable for the answers that need it, never a wrong answer).
 */
// Each test publishes the fixture (a few hundred files) into a local bucket once or twice.
vi.setConfig({ testTimeout: 120_000 });

let first: string;
let second: string;
let firstId: string;
let secondId: string;
const running: WorkerTarget[] = [];

beforeAll(async () => {
  first = await realpath(await buildFixtureSnapshot());
  // Fewer sources: another set of records, so another snapshot id.
  second = await realpath((await buildFixture({ sources: FIXTURE_SOURCES.slice(1) })).out);
  const idOf = async (dir: string) => Manifest.parse(JSON.parse(await readFile(join(dir, LAYOUT.manifest), 'utf8'))).snapshotId;
  [firstId, secondId] = await Promise.all([idOf(first), idOf(second)]);
  expect(firstId).not.toBe(secondId);
});
afterAll(async () => {
  await Promise.all(running.map((w) => w.close()));
});

async function worker(vars: Record<string, string> = {}): Promise<WorkerTarget> {
  const w = await startWorker({ storage: 'r2', vars });
  running.push(w);
  return w;
}

async function tokenOf(url: string): Promise<string | null> {
  const body = expectOk(await ask(url, 'device-510k.catalog', { kind: 'clearance', limit: 1, cursor: null }), 'device-510k.catalog');
  return body.page.snapshotToken;
}

async function firstRecordShard(dir: string) {
  const index = ShardIndex.parse(JSON.parse(await readFile(join(dir, LAYOUT.recordIndex), 'utf8')));
  const shard = index.shards[0];
  if (!shard) throw new Error('no record shard');
  return shard;
}

describe('publishing to R2', () => {
  it('answers 503 until a manifest is published, then serves the snapshot it names', async () => {
    const w = await worker({ MANIFEST_CHECK_SECONDS: '0' });
    expectError(await ask(w.url, 'device-510k.meta', {}), 503, 'source_unavailable', 'device-510k.meta');
    const health = await fetch(`${w.url}/healthz`);
    expect(health.status).toBe(503);
    await w.publish(first, { manifest: false });
    // Every file is there but the manifest: nothing is served yet.
    expectError(await ask(w.url, 'device-510k.meta', {}), 503, 'source_unavailable', 'device-510k.meta');
    await w.publish(first);
    expect(await tokenOf(w.url)).toBe(firstId);
  });

  it('picks up a newly published manifest once its check time has passed, not before', async () => {
    const quick = await worker({ MANIFEST_CHECK_SECONDS: '0' });
    const slow = await worker({ MANIFEST_CHECK_SECONDS: '3600' });
    for (const w of [quick, slow]) {
      await w.publish(first);
      expect(await tokenOf(w.url)).toBe(firstId);
      await w.publish(second);
    }
    expect(await tokenOf(quick.url)).toBe(secondId);
    expect(await tokenOf(slow.url)).toBe(firstId);
  });

  it('serves the snapshot files from R2, checked against the manifest', async () => {
    const w = await worker();
    await w.publish(first);
    const res = await fetch(`${w.url}/snapshot/${LAYOUT.meta}`);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer())).toEqual(await readFile(join(first, LAYOUT.meta)));
    const missing = await fetch(`${w.url}/snapshot/records/nothing.jsonl`);
    expect(missing.status).toBe(404);
    // The bulk downloads are in the bucket, but the Worker does not read them whole into its memory to send them.
    expect(await (await w.bucket()).head(`snapshot/${LAYOUT.downloadsSqlite}`)).not.toBeNull();
    const download = await fetch(`${w.url}/snapshot/${LAYOUT.downloadsSqlite}`);
    expect(download.status).toBe(404);
    expect(((await download.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });
});

describe('missing and damaged objects', () => {
  it('a record shard changed in the bucket answers 503 for its records, and the others are served', async () => {
    const w = await worker();
    await w.publish(first);
    const shard = await firstRecordShard(first);
    const bytes = Buffer.from(await readFile(join(first, shard.path)));
    // One letter changed inside a record: the same size, another sha256.
    const at = bytes.indexOf('"deviceName":"') + '"deviceName":"'.length;
    bytes[at] = bytes[at] === 0x41 ? 0x42 : 0x41;
    const bucket = await w.bucket();
    await bucket.put(`snapshot/${shard.path}`, bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    expectError(await ask(w.url, 'device-510k.detail', { id: shard.first }), 503, 'source_unavailable', 'device-510k.detail');
    const other = await firstRecordShard(first).then(async () => {
      const index = ShardIndex.parse(JSON.parse(await readFile(join(first, LAYOUT.recordIndex), 'utf8')));
      return index.shards[index.shards.length - 1];
    });
    expectOk(await ask(w.url, 'device-510k.detail', { id: other?.first }), 'device-510k.detail');
  });

  it('a record shard missing from the bucket answers 503, and comes back once it is there again', async () => {
    const w = await worker();
    await w.publish(first);
    const shard = await firstRecordShard(first);
    const bucket = await w.bucket();
    await bucket.delete(`snapshot/${shard.path}`);
    const body = expectError(await ask(w.url, 'device-510k.detail', { id: shard.first }), 503, 'source_unavailable', 'device-510k.detail');
    expect(body.error.message).not.toMatch(/r2:|snapshot\//);
    await w.publish(first);
    const again = expectOk(await ask(w.url, 'device-510k.detail', { id: shard.first }), 'device-510k.detail');
    expect(again.data.record.kNumber).toBe(shard.first);
  });

  it('a damaged manifest is refused and the snapshot before it keeps serving', async () => {
    const w = await worker({ MANIFEST_CHECK_SECONDS: '0' });
    await w.publish(first);
    expect(await tokenOf(w.url)).toBe(firstId);
    const bucket = await w.bucket();
    await bucket.put('snapshot/manifest.json', '{"schemaVersion":2,');
    expect(await tokenOf(w.url)).toBe(firstId);
  });
});
