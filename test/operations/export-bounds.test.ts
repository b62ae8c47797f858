import { parseSearchQuery } from '../../src/operations/search-query.ts';
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { answerExport, exportInputOf } from '../../src/api/export-answer.ts';
import { ExportInput, recordTablePartPath } from '../../src/contract/index.ts';
import { CursorCodec } from '../../src/operations/cursor.ts';
import { ApiError } from '../../src/operations/errors.ts';
import { prepareExport } from '../../src/operations/export.ts';
import { ExportTables } from '../../src/operations/export-tables.ts';
import { openSnapshotDirectory } from '../../src/node/index.ts';
import type { Snapshot } from '../../src/snapshot/index.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { allRecords } from '../server/helpers.ts';

const input = (query: string) => {
  const checked = ExportInput.parse(exportInputOf(`/v1/export?${query}`));
  return { ...checked, parsed: parseSearchQuery(checked.query, 'query') };
};

/** The ApiError `work` throws (a test fails when it throws nothing or something else). */
async function refusal(work: () => Promise<unknown>): Promise<ApiError> {
  const err = await work().then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

async function text(chunks: AsyncIterable<Uint8Array>): Promise<string> {
  const parts: Buffer[] = [];
  for await (const c of chunks) parts.push(Buffer.from(c));
  return Buffer.concat(parts).toString('utf8');
}

describe('export cursors', () => {
  const codec = new CursorCodec('a secret of this test', (key, message) => createHmac('sha256', key).update(message).digest());

  it('resume where the part before ended, and any altered, unsigned, foreign or catalog cursor is refused as invalid_cursor', async () => {
    const snapshot = await openSnapshotDirectory(await buildFixtureSnapshot());
    const all = (await text((await prepareExport(input('format=ndjson&sort=kNumber:asc'), snapshot)).chunks)).split('\n').filter(Boolean);
    expect(all.length).toBeGreaterThan(10);
    const first = await prepareExport(input('format=ndjson&sort=kNumber:asc&limit=5'), snapshot, { cursors: codec });
    const cursor = first.nextCursor!;
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    const rest = await prepareExport(input(`format=ndjson&sort=kNumber:asc&cursor=${cursor}`), snapshot, { cursors: codec });
    expect((await text(rest.chunks)).split('\n').filter(Boolean)).toEqual(all.slice(5));

    // The payload the cursor carries, readable by anyone, changed to start elsewhere and sent back.
    const bytes = Buffer.from(cursor, 'base64url');
    const payload = JSON.parse(bytes.subarray(12).toString('utf8')) as { k: number[] };
    const moved = Buffer.from(JSON.stringify({ ...payload, k: [payload.k[0]! - 1] }));
    const edited = Buffer.concat([bytes.subarray(0, 12), moved]).toString('base64url');
    // Every single-character change, at a few places.
    const flipped = [0, 5, 20, cursor.length - 2].map((i) => cursor.slice(0, i) + (cursor[i] === 'A' ? 'B' : 'A') + cursor.slice(i + 1));
    const unsigned = Buffer.from(JSON.stringify(payload)).toString('base64url');
    const foreign = await prepareExport(input('format=ndjson&sort=kNumber:asc&limit=5'), snapshot, { cursors: new CursorCodec('another key') });
    const catalog = codec.encode({ v: 1, k: 'clearance', a: 'K000001', s: snapshot.id });
    for (const bad of [edited, unsigned, foreign.nextCursor!, catalog, ...flipped]) {
      const err = await refusal(() => prepareExport(input(`format=ndjson&sort=kNumber:asc&cursor=${bad}`), snapshot, { cursors: codec }));
      expect(err.code, bad).toBe('invalid_cursor');
      expect(err.status).toBe(400);
      expect(err.message).toMatch(/not issued by this service or was altered/);
    }
  });
});

describe('export parameters', () => {
  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])('refuses a parameter named %s as invalid_input naming it', async (name) => {
    const snapshot = await openSnapshotDirectory(await buildFixtureSnapshot());
    const err = await refusal(() => answerExport(`/v1/export?format=csv&${name}=x`, snapshot));
    expect(err.code).toBe('invalid_input');
    expect(err.details).toEqual([{ path: name, message: 'is not a field of GET /v1/export' }]);
  });
});

describe('the record table parts exports share', () => {
  const snapshotOf = (id: string) => ({ id }) as Snapshot;

  it('keep their summed bytes under the bound, dropping the least recently used, and keep nothing heavier than the bound', () => {
    const tables = new ExportTables(10_000);
    const a = tables.of(snapshotOf('a'));
    const b = tables.of(snapshotOf('b'));
    const part = (n: number) => new Uint8Array(n);
    a.set(0, part(3000));
    a.set(1, part(3000));
    b.set(0, part(3000));
    // 3 × (3000 + 64 overhead)
    expect(tables.bytes).toBe(9192);
    expect(tables.size).toBe(3);
    // The same part number of another snapshot is another entry.
    expect(a.get(0)).not.toBe(b.get(0));
    // a/1 is now the least recently used: a 4th part pushes it out, not a/0.
    a.get(0);
    b.set(1, part(3000));
    expect(tables.bytes).toBe(9192);
    expect(a.get(1)).toBeUndefined();
    expect(a.get(0)?.length).toBe(3000);
    // A part heavier than the whole bound is not kept, and evicts nothing.
    b.set(2, part(20_000));
    expect(b.get(2)).toBeUndefined();
    expect(tables.size).toBe(3);
    // Replacing a part counts it once.
    b.set(1, part(100));
    expect(tables.bytes).toBe(2 * 3064 + 164);
    for (let i = 0; i < 50; i++) a.set(100 + i, part(1 + ((i * 997) % 2500)));
    expect(tables.bytes).toBeLessThanOrEqual(tables.capacity);
    expect(() => new ExportTables(0)).toThrow(/exportTableBytes/);
  });

  it('are read once for every export of a snapshot, not once an export, with the same bytes out', async () => {
    const dir = await buildFixtureSnapshot();
    const tables = new ExportTables();
    const snapshot = await openSnapshotDirectory(dir);
    const partReads: string[] = [];
    const storage = snapshot.storage;
    const readIdentified = storage.readIdentified!.bind(storage);
    storage.readIdentified = (path, ...rest) => {
      if (path.startsWith(recordTablePartPath(0).split('/')[0]!)) partReads.push(path);
      return readIdentified(path, ...rest);
    };
    const exported: string[] = [];
    for (let i = 0; i < 3; i++) exported.push(await text((await prepareExport(input('format=ndjson'), snapshot, { tables, batchSize: 16 })).chunks));
    expect(partReads.length).toBeGreaterThan(0);
    expect(new Set(partReads).size).toBe(partReads.length);
    expect(tables.size).toBe(partReads.length);
    expect(exported[1]).toBe(exported[0]);
    expect(exported[2]).toBe(exported[0]);
    const records = await allRecords(dir);
    expect(exported[0]!.split('\n').filter(Boolean).length).toBe(records.length);
  });
});

describe('an export in turns of the event loop', () => {
  it('writes no batch out before its turn comes, and asks for two turns a batch', async () => {
    const snapshot = await openSnapshotDirectory(await buildFixtureSnapshot());
    const whole = await text((await prepareExport(input('format=csv'), snapshot)).chunks);
    const waiting: (() => void)[] = [];
    let asked = 0;
    const turn = () => {
      asked++;
      return new Promise<void>((resolve) => waiting.push(resolve));
    };
    // A clock that stands still: only the counts of records slice the work here.
    const prepared = await prepareExport(input('format=csv'), snapshot, { turn, batchSize: 64, now: () => 0 });
    const iterator = prepared.chunks[Symbol.asyncIterator]();
    const header = await iterator.next();
    const parts = [Buffer.from(header.value as Uint8Array)];
    for (;;) {
      let settled = false;
      const next = iterator.next().then((r) => {
        settled = true;
        return r;
      });
      // Each turn is granted only once the export waits for it; meanwhile no chunk may come out.
      for (let granted = 0; granted < 2 && !settled; granted++) {
        await until(() => waiting.length > 0 || settled);
        if (settled) break;
        expect(settled).toBe(false);
        waiting.shift()!();
      }
      const r = await next;
      if (r.done) break;
      parts.push(Buffer.from(r.value));
    }
    const batches = Math.ceil(prepared.count / 64);
    expect(asked).toBe(2 * batches);
    expect(Buffer.concat(parts).toString('utf8')).toBe(whole);
  });

  it('reads and writes a batch a slice at a time, each slice after a turn of its own, with the same bytes out', async () => {
    const snapshot = await openSnapshotDirectory(await buildFixtureSnapshot());
    const whole = await text((await prepareExport(input('format=csv'), snapshot)).chunks);
    // Every read of the storage, every turn asked, every chunk out, in order.
    const events: ('read' | 'turn' | 'chunk')[] = [];
    const storage = snapshot.storage;
    const readInto = storage.readInto!.bind(storage);
    storage.readInto = (...args) => {
      events.push('read');
      return readInto(...args);
    };
    const readRange = storage.readRange.bind(storage);
    storage.readRange = (...args) => {
      events.push('read');
      return readRange(...args);
    };
    const turn = () => {
      events.push('turn');
      return new Promise<void>((resolve) => setImmediate(resolve));
    };
    const batchSize = 32;
    const slice = 4;
    const prepared = await prepareExport(input('format=csv'), snapshot, { turn, batchSize, sliceRecords: slice, lend: true, now: () => 0 });
    const parts: Buffer[] = [];
    for await (const chunk of prepared.chunks) {
      parts.push(Buffer.from(chunk));
      events.push('chunk');
    }
    expect(Buffer.concat(parts).toString('utf8')).toBe(whole);
    // Each read gives at least one record, so at most `slice` reads come between two turns.
    let readsSinceTurn = 0;
    let mostReads = 0;
    for (const e of events) {
      if (e === 'read') mostReads = Math.max(mostReads, ++readsSinceTurn);
      else readsSinceTurn = 0;
    }
    expect(events.filter((e) => e === 'read').length).toBeGreaterThan(4 * slice);
    expect(mostReads).toBeLessThanOrEqual(slice);
    // Between a batch's last read and its chunk: a turn for each slice of its rows, and nothing else.
    const chunks = events.flatMap((e, i) => (e === 'chunk' ? [i] : [])).slice(1);
    expect(chunks.length).toBe(Math.ceil(prepared.count / batchSize));
    for (const [b, at] of chunks.entries()) {
      const rows = Math.min(batchSize, prepared.count - b * batchSize);
      const lastRead = events.lastIndexOf('read', at);
      expect(events.slice(lastRead + 1, at)).toEqual(Array(Math.ceil(rows / slice)).fill('turn'));
    }
  });
});

describe('an export sliced by its clock', () => {
  it('takes a turn once a slice has run its milliseconds, however few records it read or wrote, with the same bytes out', async () => {
    const snapshot = await openSnapshotDirectory(await buildFixtureSnapshot());
    const whole = await text((await prepareExport(input('format=csv'), snapshot)).chunks);
    // A clock that moves a millisecond each time it is read; the time of the last turn, and the longest stretch of
    // clock between two turns the export ran.
    let clock = 0;
    const now = () => ++clock;
    let turnAt = 0;
    let longest = 0;
    let turns = 0;
    const events: ('read' | 'turn')[] = [];
    const storage = snapshot.storage;
    const readInto = storage.readInto!.bind(storage);
    storage.readInto = (...args) => {
      events.push('read');
      longest = Math.max(longest, clock - turnAt);
      return readInto(...args);
    };
    const turn = () => {
      turns++;
      events.push('turn');
      return new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        turnAt = clock;
      });
    };
    const batchSize = 64;
    // Slices of records far larger than a batch: only the clock can cut a batch's reads or rows.
    const prepared = await prepareExport(input('format=csv'), snapshot, { turn, batchSize, sliceRecords: 10_000, sliceMs: 3, now });
    const parts: Buffer[] = [];
    for await (const chunk of prepared.chunks) parts.push(Buffer.from(chunk));
    expect(Buffer.concat(parts).toString('utf8')).toBe(whole);
    const batches = Math.ceil(prepared.count / batchSize);
    // More than the two turns a batch that records alone would give.
    expect(turns).toBeGreaterThan(2 * batches + batches);
    // The clock is read once per 8 records or rows at most (and once at each turn): a slice ends on the first look
    // past its 3 ms.
    expect(longest).toBeLessThanOrEqual(3 + 2);
    expect(events.filter((e) => e === 'read').length).toBeGreaterThan(0);
  });
});

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 1));
  }
}
