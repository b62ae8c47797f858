import { connect, type Socket } from 'node:net';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAYOUT, RECORD_TABLE, ResponseSchemas, ShardIndex, recordTablePartPath, type OperationName } from '../../src/contract/index.ts';
import { JsonBytes, type Operation } from '../../src/operations/index.ts';
import { openSnapshotDirectory } from '../../src/node/index.ts';
import { flipByte, snapshotCopy } from '../helpers/damage.ts';
import { loopTurns, until } from '../helpers/until.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { allProductCodes, allRecords, ask, expectError, startServer, type Answer, type Running } from './helpers.ts';

/**
 * Answers are spliced from the snapshot's bytes instead of built from parsed values. These tests hold the bytes to
 * what the contract's schemas say: re-serializing the schema-parsed answer must give the very same text (no extra
 * space, members in the schema's order), and its data must equal what the build wrote.
 */
let snapshotPath: string;
let server: Running;

beforeAll(async () => {
  snapshotPath = await buildFixtureSnapshot();
  server = await startServer({ snapshotPath });
});
afterAll(async () => {
  await server?.close();
});

function expectExactly<N extends OperationName>(answer: Answer, operation: N) {
  expect(answer.status).toBe(200);
  const parsed = ResponseSchemas[operation].parse(answer.json);
  expect(answer.text).toBe(JSON.stringify(parsed));
  return parsed as ReturnType<(typeof ResponseSchemas)[N]['parse']>;
}

describe('answers cut from bytes are the schema-parsed answers, byte for byte', () => {
  it('detail, for every record of the fixture snapshot', async () => {
    const records = await allRecords(snapshotPath);
    expect(records.length).toBeGreaterThan(200);
    for (const record of records) {
      const answer = expectExactly(await ask(server.url, 'device-510k.detail', { id: record.kNumber }), 'device-510k.detail');
      expect(answer.data.record).toStrictEqual(record);
    }
  });

  it('classification, for every product code', async () => {
    const entries = await allProductCodes(snapshotPath);
    expect(entries.length).toBeGreaterThan(100);
    for (const entry of entries) {
      const answer = expectExactly(await ask(server.url, 'device-510k.classification', { productCode: entry.productCode }), 'device-510k.classification');
      const { clearanceCount: _count, ...classification } = entry;
      expect(answer.data).toStrictEqual(classification);
    }
  });

  it('catalog walks of both kinds, at several page sizes, give every entry once', async () => {
    const expected = { clearance: await allRecords(snapshotPath), 'product-code': await allProductCodes(snapshotPath) };
    for (const kind of ['clearance', 'product-code'] as const) {
      for (const limit of [1, 7, 100, 500]) {
        const seen: unknown[] = [];
        let cursor: string | null = null;
        do {
          const answer: { data: { items: unknown[] }; page: { nextCursor: string | null } } = expectExactly(
            await ask(server.url, 'device-510k.catalog', { kind, limit, cursor }),
            'device-510k.catalog',
          );
          seen.push(...answer.data.items);
          cursor = answer.page.nextCursor;
        } while (cursor !== null && seen.length <= expected[kind].length);
        expect(seen).toStrictEqual(expected[kind]);
      }
    }
  });

  it('search, meta and top product codes', async () => {
    const records = new Map((await allRecords(snapshotPath)).map((r) => [r.kNumber, r]));
    for (const query of ['', 'catheter', 'pacemaker lead', 'K80']) {
      for (const page of [1, 2]) {
        const answer = expectExactly(
          await ask(server.url, 'device-510k.search', { query, applicant: null, productCode: null, yearFrom: null, yearTo: null, page, pageSize: 50 }),
          'device-510k.search',
        );
        for (const item of answer.data.items) expect(item).toStrictEqual(records.get(item.kNumber));
      }
    }
    const meta = expectExactly(await ask(server.url, 'device-510k.meta', {}), 'device-510k.meta');
    expect(meta.data).toStrictEqual(JSON.parse(await readFile(join(snapshotPath, LAYOUT.meta), 'utf8')));
    expectExactly(await ask(server.url, 'device-510k.top-product-codes', { limit: 100 }), 'device-510k.top-product-codes');
  });
});

/** A copy of the fixture snapshot in which `damage` may change files. */
async function damagedCopy(damage: (dir: string) => Promise<void>): Promise<string> {
  const dir = await snapshotCopy(snapshotPath, 'device-510k-bytes-');
  await damage(dir);
  return dir;
}

/** A shard of at least three records, its second record (the victim), its first, and a byte in the victim's line. */
async function pickVictim() {
  const index = ShardIndex.parse(JSON.parse(await readFile(join(snapshotPath, LAYOUT.recordIndex), 'utf8')));
  const shard = index.shards.find((s) => s.count >= 3);
  if (!shard) throw new Error('the fixture has no shard of three records');
  const lines = (await readFile(join(snapshotPath, shard.path), 'utf8')).split('\n');
  const kOf = (line: string | undefined) => (JSON.parse((line ?? '').replace(/,$/, '')) as { kNumber: string }).kNumber;
  const at = Buffer.byteLength(`${lines[0]}\n${lines[1]}\n`, 'utf8') + Math.floor(Buffer.byteLength(lines[2] as string, 'utf8') / 2);
  return { shard, index, victim: kOf(lines[2]), neighbour: kOf(lines[1]), at };
}

describe('damaged bytes are refused, never sent', () => {
  it('a shard that no longer matches the manifest is not used at all; other shards answer', async () => {
    const { shard, index, victim, neighbour, at } = await pickVictim();
    const dir = await damagedCopy((d) => flipByte(join(d, shard.path), at));
    const damaged = await startServer({ snapshotPath: dir });
    try {
      for (let i = 0; i < 3; i++) expectError(await ask(damaged.url, 'device-510k.detail', { id: victim }), 503, 'source_unavailable', 'device-510k.detail');
      expectError(await ask(damaged.url, 'device-510k.detail', { id: neighbour }), 503, 'source_unavailable', 'device-510k.detail');
      expect(damaged.logger.errors.filter((e) => e.fields?.path === shard.path)).toHaveLength(1);
      const other = index.shards.find((s) => s.path !== shard.path);
      expect((await ask(damaged.url, 'device-510k.detail', { id: other?.first })).status).toBe(200);
      // A catalog page needs the whole shard (500 entries cover the fixture's first shards).
      expectError(await ask(damaged.url, 'device-510k.catalog', { kind: 'clearance', limit: 500, cursor: null }), 503, 'source_unavailable', 'device-510k.catalog');
    } finally {
      await damaged.close();
    }
  });

  it('a record damaged after its shard was checked is caught by its own digest when it is read again', async () => {
    const { shard, victim, neighbour, at } = await pickVictim();
    const dir = await damagedCopy(async () => {});
    // A cache too small to keep a shard: every read after the first goes to the disk and the record table.
    const damaged = await startServer({ snapshotPath: dir, cacheBytes: 1 });
    try {
      expect((await ask(damaged.url, 'device-510k.detail', { id: neighbour })).status).toBe(200);
      await flipByte(join(dir, shard.path), at);
      expectError(await ask(damaged.url, 'device-510k.detail', { id: victim }), 503, 'source_unavailable', 'device-510k.detail');
      const reports = damaged.logger.errors.filter((e) => e.fields?.path === shard.path);
      expect(reports).toHaveLength(1);
      expect(reports[0]?.fields).toMatchObject({ expected: expect.stringMatching(/^[0-9a-f]{64}$/), actual: expect.stringMatching(/^[0-9a-f]{64}$/) });
      // The file is now known not to match: its other records are refused too.
      expectError(await ask(damaged.url, 'device-510k.detail', { id: neighbour }), 503, 'source_unavailable', 'device-510k.detail');
    } finally {
      await damaged.close();
    }
  });

  it('a damaged record table refuses the records it locates', async () => {
    const records = await allRecords(snapshotPath);
    const dir = await damagedCopy((d) => flipByte(join(d, recordTablePartPath(0)), RECORD_TABLE.entryBytes + 13));
    // The table is used once a shard was checked whole and is no longer in the cache (which here keeps nothing).
    const damaged = await startServer({ snapshotPath: dir, cacheBytes: 1 });
    try {
      expect((await ask(damaged.url, 'device-510k.detail', { id: records[0]?.kNumber })).status).toBe(200);
      expectError(await ask(damaged.url, 'device-510k.detail', { id: records[0]?.kNumber }), 503, 'source_unavailable', 'device-510k.detail');
      expect(damaged.logger.errors.some((e) => e.fields?.path === recordTablePartPath(0))).toBe(true);
    } finally {
      await damaged.close();
    }
  });
});

describe('the cache is bounded by bytes', () => {
  it('holds at most its budget after every record and shard was read', async () => {
    const budget = 64 * 1024;
    const snapshot = await openSnapshotDirectory(snapshotPath, { cacheBytes: budget });
    const records = await allRecords(snapshotPath);
    let peak = 0;
    for (const r of records) {
      expect(await snapshot.getRecord(r.kNumber)).toStrictEqual(r);
      peak = Math.max(peak, snapshot.cachedBytes);
    }
    for (let i = 0; i < snapshot.recordIndex.shards.length; i++) {
      await snapshot.shardLines('clearance', i);
      peak = Math.max(peak, snapshot.cachedBytes);
    }
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(budget);
  });
});

for (const fastLane of [true, false]) describe(`pipelined requests of a client that does not read (${fastLane ? 'the fast lane' : "Node's HTTP server"})`, () => {
  it('are answered a few at a time, and all of them once the client reads', async () => {
    const big = new JsonBytes(new Uint8Array(Buffer.from(JSON.stringify({ title: 'x'.repeat(2 * 1024 * 1024) }), 'utf8')));
    let started = 0;
    const heavyMeta: Operation = {
      input: (await import('../../src/contract/index.ts')).OPERATIONS['device-510k.meta'],
      handler: async () => {
        started++;
        return { data: big };
      },
    };
    const heavy = await startServer({ snapshotPath, operations: { 'device-510k.meta': heavyMeta }, pipelineDepth: 4, fastLane });
    const { port } = new URL(heavy.url);
    const body = JSON.stringify({ version: 1, operation: 'device-510k.meta', input: {} });
    const one = `POST /v1/query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    // Within the bound: 4 answered at once and 32 waiting.
    const sent = 30;
    // The server's end of the connection: its writes back up once the kernel holds all it takes of the answers.
    let served: Socket | null = null;
    heavy.app.server.on('connection', (s: Socket) => (served ??= s));
    const socket = connect(Number(port), '127.0.0.1');
    try {
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      socket.pause();
      socket.write(one.repeat(sent));
      await until(() => started > 0 && served?.writableNeedDrain, "the server's answers to back up");
      // From here only the bound holds requests back: an unbounded server starts every request it has read within a
      // few turns of the event loop (the requests came in one write), and so fails below.
      await loopTurns(200);
      const whileStalled = started;
      expect(whileStalled).toBeGreaterThan(0);
      expect(whileStalled).toBeLessThan(10);
      // Another client is answered meanwhile.
      const other = await ask(heavy.url, 'device-510k.detail', { id: (await allRecords(snapshotPath))[0]?.kNumber });
      expect(other.status).toBe(200);
      // Once the client reads, every request is answered, in order.
      let received = 0;
      let text = '';
      socket.on('data', (chunk: Buffer) => {
        received += chunk.length;
        text = (text + chunk.toString('latin1')).slice(-64);
      });
      socket.resume();
      const need = sent * big.bytes.length;
      await until(() => received > need, 'every answer to arrive', 20_000);
      expect(started).toBe(sent);
    } finally {
      socket.destroy();
      await heavy.close();
    }
  }, 60_000);

  it('close a connection that has more requests waiting than the bound, before starting them', async () => {
    let started = 0;
    const counted: Operation = {
      input: (await import('../../src/contract/index.ts')).OPERATIONS['device-510k.meta'],
      handler: async () => {
        started++;
        return { data: new JsonBytes(new Uint8Array(Buffer.from(JSON.stringify({ title: 'x'.repeat(2 * 1024 * 1024) }), 'utf8'))) };
      },
    };
    const guarded = await startServer({ snapshotPath, operations: { 'device-510k.meta': counted }, pipelineDepth: 2, pipelineMaxWaiting: 5, fastLane });
    const { port } = new URL(guarded.url);
    const body = JSON.stringify({ version: 1, operation: 'device-510k.meta', input: {} });
    const one = `POST /v1/query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const socket = connect(Number(port), '127.0.0.1');
    let closed = false;
    socket.on('error', () => {});
    socket.on('close', () => (closed = true));
    try {
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      socket.pause();
      socket.write(one.repeat(200));
      await until(() => closed, 'the server to close the connection');
      // Two answered at once, five waiting: the eighth closed the connection, and none of those waiting ran.
      expect(started).toBeLessThanOrEqual(2);
      expect(guarded.logger.infos.filter((m) => m.includes('too many pipelined requests waiting'))).toHaveLength(1);
      const other = await ask(guarded.url, 'device-510k.meta', {});
      expect(other.status).toBe(200);
    } finally {
      socket.destroy();
      await guarded.close();
    }
  }, 30_000);
});
