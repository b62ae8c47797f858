import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { LAYOUT, Manifest, RecordShard, ShardIndex, type OperationName } from '../../src/contract/index.ts';
import { SEARCH_BLOCKS_PATH, SEARCH_INDEX_PATH } from '../../src/contract/search-index.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { ask, envelope, expectError, expectOk, post, rawRequest, startServer, type Running } from '../server/helpers.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/**
 * A snapshot damaged on disk after it was published (a flipped bit, a bad copy that kept the size) must never be
 * served as data. Sizes are checked when a snapshot is opened; every file's sha256 is checked against the manifest
 * when it is first read. A damaged file answers 503 `source_unavailable` and is reported once in the server's log;
 * the rest of the snapshot goes on serving.
 */
let source: string;
let manifest: Manifest;
let shardPath: string;
let damagedK: string;
let healthyK: string;

beforeAll(async () => {
  source = await buildFixtureSnapshot();
  manifest = Manifest.parse(JSON.parse(await readFile(join(source, LAYOUT.manifest), 'utf8')));
  const index = ShardIndex.parse(JSON.parse(await readFile(join(source, LAYOUT.recordIndex), 'utf8')));
  const big = [...index.shards].sort((a, b) => b.count - a.count);
  shardPath = big[0]?.path as string;
  const records = RecordShard.parse(JSON.parse(await readFile(join(source, shardPath), 'utf8')));
  damagedK = records[0]?.kNumber as string;
  healthyK = RecordShard.parse(JSON.parse(await readFile(join(source, big[1]?.path as string), 'utf8')))[0]?.kNumber as string;
});

/** A private copy of the fixture snapshot (a plain directory), so each case can damage its own. */
async function copyOfSnapshot(): Promise<string> {
  const dir = join(await testTempDir('device-510k-corrupt-'), 'snapshot');
  await cp(source, dir, { recursive: true, dereference: true });
  return dir;
}

/**
 * Changes the first letter or digit after `marker` to the next one (a→b, 7→8): the file keeps its size and stays
 * valid JSON that its schema accepts; only its content now lies.
 */
async function alterAfter(file: string, marker: string): Promise<void> {
  const bytes = await readFile(file);
  const at = bytes.indexOf(marker);
  if (at < 0) throw new Error(`${marker} not in ${file}`);
  let i = at + marker.length;
  while (!/[A-Za-z0-9]/.test(String.fromCharCode(bytes[i] as number))) i++;
  const c = bytes[i] as number;
  const base = c >= 97 ? 97 : c >= 65 ? 65 : 48;
  const span = base === 48 ? 10 : 26;
  bytes[i] = base + ((c - base + 1) % span);
  await writeFile(file, bytes);
}

async function flipByte(file: string, position: (length: number) => number): Promise<void> {
  const bytes = await readFile(file);
  const i = position(bytes.length);
  bytes[i] = (bytes[i] as number) ^ 0xff;
  await writeFile(file, bytes);
}

function expectReported(server: Running, path: string): void {
  // One integrity report per file, however often it is asked for (other lines may mention it too).
  const reports = server.logger.errors.filter((e) => e.fields?.path === path);
  expect(reports.length).toBe(1);
  expect(reports[0]?.message).toMatch(/sha256/);
  expect(reports[0]?.fields).toMatchObject({ path, expected: expect.stringMatching(/^[0-9a-f]{64}$/), actual: expect.stringMatching(/^[0-9a-f]{64}$/) });
}

describe('a damaged shard in the active snapshot', () => {
  it.each([
    ['one letter of a device name changed (still valid JSON)', (f: string) => alterAfter(f, '"deviceName":"')],
    ['one byte turned to garbage in the middle', (f: string) => flipByte(f, (n) => Math.floor(n / 2))],
    ['the last byte flipped', (f: string) => flipByte(f, (n) => n - 1)],
  ])('%s: 503 for what it holds, reported once, the rest served', async (_name, damage) => {
    const dir = await copyOfSnapshot();
    await damage(join(dir, shardPath));
    const server = await startServer({ snapshotPath: dir });
    try {
      expect(server.app.snapshots.current?.id).toBe(manifest.snapshotId);
      for (let i = 0; i < 3; i++) {
        const error = expectError(await ask(server.url, 'device-510k.detail', { id: damagedK }), 503, 'source_unavailable', 'device-510k.detail');
        expect(error.error.message).not.toContain(shardPath);
      }
      // The file is not served as bytes either.
      const file = await rawRequest(server.url, { path: `/snapshot/${shardPath}` });
      expect(file.status).toBe(503);
      expect(JSON.parse(file.body.toString('utf8'))).toMatchObject({ error: { code: 'source_unavailable' } });
      // A catalog page that would include it fails as a whole rather than skip or garble its records.
      expectError(await ask(server.url, 'device-510k.catalog', { kind: 'clearance', limit: 500, cursor: null }), 503, 'source_unavailable', 'device-510k.catalog');
      // Everything else goes on.
      expectOk(await ask(server.url, 'device-510k.detail', { id: healthyK }), 'device-510k.detail');
      expectOk(await ask(server.url, 'device-510k.meta', {}), 'device-510k.meta');
      expect((await rawRequest(server.url, { path: `/snapshot/${LAYOUT.recordIndex}` })).status).toBe(200);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      expectReported(server, shardPath);
    } finally {
      await server.close();
    }
  });

  it('the search index: search answers 503 and is reported; lookups go on', async () => {
    const dir = await copyOfSnapshot();
    const header = JSON.parse(await readFile(join(dir, SEARCH_INDEX_PATH), 'utf8')) as { parts: { path: string }[] };
    const part = header.parts[0]?.path as string;
    await flipByte(join(dir, part), (n) => Math.floor(n / 3));
    const server = await startServer({ snapshotPath: dir });
    try {
      const input = { query: 'pacemaker', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10 };
      expectError(await ask(server.url, 'device-510k.search', input), 503, 'source_unavailable', 'device-510k.search');
      expectOk(await ask(server.url, 'device-510k.detail', { id: damagedK }), 'device-510k.detail');
      expectReported(server, part);
    } finally {
      await server.close();
    }
  });

  it("the search index's block table: search answers 503 each time, reported once; lookups go on", async () => {
    const dir = await copyOfSnapshot();
    await flipByte(join(dir, SEARCH_BLOCKS_PATH), (n) => n - 1);
    const server = await startServer({ snapshotPath: dir });
    try {
      const input = { query: '"heart valve"', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10 };
      expectError(await ask(server.url, 'device-510k.search', input), 503, 'source_unavailable', 'device-510k.search');
      expectError(await ask(server.url, 'device-510k.search', { ...input, query: 'panel:cardio' }), 503, 'source_unavailable', 'device-510k.search');
      expectOk(await ask(server.url, 'device-510k.detail', { id: healthyK }), 'device-510k.detail');
      expectReported(server, SEARCH_BLOCKS_PATH);
    } finally {
      await server.close();
    }
  });

  it('a file damaged while it is served: detected on first read, never cached as data', async () => {
    const dir = await copyOfSnapshot();
    const server = await startServer({ snapshotPath: dir });
    try {
      await alterAfter(join(dir, shardPath), '"applicant":"');
      expectError(await ask(server.url, 'device-510k.detail', { id: damagedK }), 503, 'source_unavailable', 'device-510k.detail');
      // Repaired in place (a mirror re-copies it): served again, since a failed read is not remembered.
      await cp(join(source, shardPath), join(dir, shardPath));
      const ok = expectOk(await ask(server.url, 'device-510k.detail', { id: damagedK }), 'device-510k.detail');
      expect(ok.data.record.kNumber).toBe(damagedK);
      expectReported(server, shardPath);
    } finally {
      await server.close();
    }
  });
});

describe('a damaged file that every answer needs', () => {
  it.each([LAYOUT.meta, LAYOUT.topProductCodes, LAYOUT.recordIndex, LAYOUT.productCodeIndex])(
    '%s: the snapshot is refused at open; a server with nothing else answers 503',
    async (rel) => {
      const dir = await copyOfSnapshot();
      await alterAfter(join(dir, rel), rel === LAYOUT.meta ? '"totalRecords":' : '"count":');
      const server = await startServer({ snapshotPath: dir });
      try {
        expect(server.app.snapshots.current).toBeNull();
        const ops: [OperationName, unknown][] = [
          ['device-510k.meta', {}],
          ['device-510k.top-product-codes', { limit: 5 }],
          ['device-510k.detail', { id: healthyK }],
        ];
        for (const [op, input] of ops) expectError(await post(server.url, envelope(op, input)), 503, 'source_unavailable', op);
        expect((await fetch(`${server.url}/healthz`)).status).toBe(503);
        const refusal = server.logger.errors.find((e) => e.message.includes('refused'));
        expect(String(refusal?.fields?.reason)).toContain(rel);
      } finally {
        await server.close();
      }
    },
  );
});
