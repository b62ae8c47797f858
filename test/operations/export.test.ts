import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exportInputOf } from '../../src/api/export-answer.ts';
import { ExportInput, toClearanceRecord } from '../../src/contract/index.ts';
import { ByteSink, csvRowOf, writeCsvRow } from '../../src/operations/csv.ts';
import { csvCell, prepareExport } from '../../src/operations/export.ts';
import { parseQuery } from '../../src/search/grammar.ts';
import { openSnapshotDirectory } from '../../src/node/index.ts';
import { CorruptFile, type Snapshot } from '../../src/snapshot/index.ts';
import { flipByte, snapshotCopy } from '../helpers/damage.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { allRecords } from '../server/helpers.ts';

describe('CSV cells', () => {
  it.each<[string | number | boolean | null, string]>([
    ['plain', 'plain'],
    [null, ''],
    [-12, '-12'],
    [true, 'true'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['=HYPERLINK("http://x")', `"'=HYPERLINK(""http://x"")"`],
    ['+1 555', "'+1 555"],
    ['-2+3', "'-2+3"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tTAB', "'\tTAB"],
    ['\rCR', `"'\rCR"`],
    ['a=b', 'a=b'],
    ["'ONE TOUCH' LATEX CONDOM", "''ONE TOUCH' LATEX CONDOM"],
    ["'=1", "''=1"],
    ["it's", "it's"],
    ['', ''],
  ])('%j is written %j', (value, cell) => {
    expect(csvCell(value)).toBe(cell);
  });

  it('are undone exactly by the documented rule: one leading apostrophe dropped from a text cell that has one', () => {
    // docs/search.md, "Formulas are not run": unquote (RFC 4180), then drop one leading apostrophe.
    const unquote = (cell: string) => (cell.startsWith('"') ? cell.slice(1, -1).replaceAll('""', '"') : cell);
    const undo = (cell: string) => (cell.startsWith("'") ? cell.slice(1) : cell);
    const start = fc.constantFrom('', "'", "''", '=', '+', '-', '@', '\t', '\r', ' ', 'a');
    fc.assert(
      fc.property(start, fc.string(), (head, rest) => {
        const value = head + rest;
        const cell = unquote(csvCell(value));
        expect(cell).not.toMatch(/^[=+\-@\t\r]/);
        expect(undo(cell)).toBe(value);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('CSV rows written from record bytes', () => {
  const text = fc.oneof(
    fc.constant(null),
    fc.string(),
    fc.constantFrom('=1+1', '+1 555', '-x', '@SUM(A1)', '\tTAB', '\rCR', "'ONE TOUCH' LATEX", "'x, y", 'a,b', 'say "hi"', 'two\nlines', 'Zoë, GmbH', '日本', '\\ back', '\u2028'),
  );
  const arbRecord = fc
    .record({
      deviceName: fc.oneof(fc.string(), fc.constantFrom('=CMD()', 'Stent, coated')),
      applicant: text,
      productCode: fc.constantFrom(null, 'DQY'),
      decisionDate: fc.constantFrom(null, '2024-02-29'),
      receivedDate: fc.constantFrom(null, '2024-01-01', '2024-03-31'),
      decisionCode: text,
      decisionDescription: text,
      advisoryCommittee: text,
      classificationCommittee: text,
      statementOrSummary: text,
      submissionType: text,
      thirdParty: fc.constantFrom(null, true, false),
      expeditedReview: fc.constantFrom(null, true, false),
      countryCode: text,
      state: text,
      contact: text,
      street1: text,
      street2: text,
      city: text,
      zipCode: text,
      postalCode: text,
    })
    .map((f) => toClearanceRecord('K123456', f));

  it('are the rows csvCell gives over the parsed record, for any text', () => {
    fc.assert(
      fc.property(fc.array(arbRecord, { minLength: 1, maxLength: 4 }), (records) => {
        const bytes = records.map((r) => new TextEncoder().encode(JSON.stringify(r)));
        const joined = new Uint8Array(bytes.reduce((n, b) => n + b.length + 1, 0));
        const sink = new ByteSink(8);
        let at = 0;
        for (const b of bytes) {
          joined.set(b, at);
          writeCsvRow(joined, at, at + b.length, sink);
          at += b.length + 1;
        }
        expect(new TextDecoder().decode(sink.take())).toBe(records.map(csvRowOf).join(''));
      }),
      { numRuns: 300 },
    );
  });

  it('parses a record it does not expect (another member order, an array) rather than guess', () => {
    const r = toClearanceRecord('K000001', {
      deviceName: 'Pump', applicant: '=Acme', productCode: null, decisionDate: null, receivedDate: null, decisionCode: null,
      decisionDescription: null, advisoryCommittee: null, classificationCommittee: null, statementOrSummary: null, submissionType: null,
      thirdParty: null, expeditedReview: null, countryCode: null, state: null, contact: null, street1: null, street2: null, city: null,
      zipCode: null, postalCode: null,
    });
    for (const json of [JSON.stringify({ ...r, extra: [1, 2] }), JSON.stringify(Object.fromEntries(Object.entries(r).reverse()))]) {
      const bytes = new TextEncoder().encode(json);
      const sink = new ByteSink(8);
      writeCsvRow(bytes, 0, bytes.length, sink);
      expect(new TextDecoder().decode(sink.take())).toBe(csvRowOf(r));
    }
  });
});

describe('records read for an export', () => {
  it('are the bytes the cached path gives, in the order asked, and leave the cache empty', async () => {
    const dir = await buildFixtureSnapshot();
    const kNumbers = (await allRecords(dir)).map((r) => r.kNumber).sort();
    const exporting = await openSnapshotDirectory(dir);
    const cached = await openSnapshotDirectory(dir);
    const text = (b: Uint8Array) => Buffer.from(b).toString('utf8');
    // Every record, twice (nothing is kept between calls), then a sparse selection (records read apart).
    const uncached = async (ks: string[]) => {
      const got: string[] = [];
      await exporting.eachRecordUncached(ks, (i, bytes) => {
        expect(i).toBe(got.length);
        got.push(text(bytes)); // the bytes are valid only during the call: copied out here
      });
      return got;
    };
    for (const ks of [kNumbers, kNumbers, kNumbers.filter((_, i) => i % 7 === 3)]) {
      expect(await uncached(ks)).toEqual((await cached.recordsJson(ks)).map(text));
      expect(exporting.cachedBytes).toBe(0);
    }
    await expect(uncached([kNumbers[0]!, 'K999999'])).rejects.toThrow(/has no record K999999/);
  });

  it('refuse a shard that does not match its sha256', async () => {
    const dir = await snapshotCopy(await buildFixtureSnapshot(), 'device-510k-export-');
    const snapshot = await openSnapshotDirectory(dir);
    const shard = snapshot.recordIndex.shards[0]!;
    await flipByte(join(dir, shard.path), 40);
    await expect(snapshot.eachRecordUncached([shard.first], () => {})).rejects.toBeInstanceOf(CorruptFile);
  });

  it('refuse a record changed after an export read it', async () => {
    const dir = await snapshotCopy(await buildFixtureSnapshot(), 'device-510k-export-');
    const snapshot = await openSnapshotDirectory(dir);
    const shard = snapshot.recordIndex.shards[0]!;
    // Each read checks the record against its digest, whatever was read before.
    await snapshot.eachRecordUncached([shard.first], () => {});
    await flipByte(join(dir, shard.path), 40);
    await expect(snapshot.eachRecordUncached([shard.first], () => {})).rejects.toBeInstanceOf(CorruptFile);
  });
});

type ShardEntry = Snapshot['recordIndex']['shards'][number];

describe('record shards hinted to the storage', () => {
  /** The storage's hints and reads of record shards, in the order they came. */
  /** Records the storage's hints and reads; each read waits `waitMs` first (a disk), when given. */
  function spy(snapshot: Snapshot, waitMs = 0): string[] {
    const events: string[] = [];
    const storage = snapshot.storage;
    storage.prefetch = (paths) => {
      for (const p of paths) events.push(`hint ${p}`);
    };
    const readInto = storage.readInto!.bind(storage);
    storage.readInto = async (path, offset, into) => {
      events.push(`read ${path}`);
      if (waitMs > 0) await new Promise((r) => setTimeout(r, waitMs));
      return readInto(path, offset, into);
    };
    return events;
  }

  it('hints each shard once for a reader, and none the cache holds or a storage without hints', async () => {
    const dir = await buildFixtureSnapshot();
    const snapshot = await openSnapshotDirectory(dir);
    const events = spy(snapshot);
    const [a, b, c] = snapshot.recordIndex.shards.slice(0, 3) as [ShardEntry, ShardEntry, ShardEntry];
    await snapshot.shardLines('clearance', 2);
    const seen = new Set<string>();
    snapshot.prefetchRecords([a.first, a.last, b.first, c.first], seen);
    snapshot.prefetchRecords([a.first, b.first], seen);
    expect(events).toEqual([`hint ${a.path}`, `hint ${b.path}`]);
    // A K number no shard holds (before the first shard) does not stop the hints after it.
    expect(a.first > 'K000000').toBe(true);
    snapshot.prefetchRecords(['K000000', a.first], new Set());
    expect(events).toEqual([`hint ${a.path}`, `hint ${b.path}`, `hint ${a.path}`]);
    const plain = await openSnapshotDirectory(dir);
    (plain.storage as { prefetch?: unknown }).prefetch = undefined;
    expect(() => plain.prefetchRecords([a.first], new Set())).not.toThrow();
  });

  it('once reads wait on the disk, name every shard an export reads next, once, batches ahead; never while they do not; and change no byte', async () => {
    const dir = await buildFixtureSnapshot();
    for (const format of ['ndjson', 'csv']) {
      const checked = ExportInput.parse(exportInputOf(`/v1/export?format=${format}`));
      const input = { ...checked, parsed: parseQuery(checked.query) };
      const body = async (snapshot: Snapshot, batchSize?: number, lend = false) => {
        const parts: Uint8Array[] = [];
        const buffers = new Set<ArrayBufferLike>();
        for await (const chunk of (await prepareExport(input, snapshot, { batchSize, lend })).chunks) {
          parts.push(chunk.slice());
          buffers.add(chunk.buffer);
        }
        // Lent chunks share a buffer, replaced only when a batch needs more room; fresh ones each have their own.
        if (batchSize !== undefined) {
          expect(parts.length).toBeGreaterThan(8);
          if (lend) expect(buffers.size).toBeLessThanOrEqual(4);
          else expect(buffers.size).toBe(parts.length);
        }
        return Buffer.concat(parts).toString('utf8');
      };
      const plain = await openSnapshotDirectory(dir);
      (plain.storage as { prefetch?: unknown }).prefetch = undefined;
      // Reads never slow: no hint at all.
      const fast = await openSnapshotDirectory(dir, { slowReadMs: Infinity });
      const fastEvents = spy(fast);
      expect(await body(fast, 16)).toBe(await body(plain));
      expect(fastEvents.some((e) => e.startsWith('hint '))).toBe(false);
      expect(fastEvents.length).toBeGreaterThan(16);
      expect(await body(plain, 16, true)).toBe(await body(plain));
      // Reads that wait 5 ms each: the first batch is read unhinted, and shows the wait.
      const slow = await openSnapshotDirectory(dir, { slowReadMs: 1 });
      const events = spy(slow, 5);
      expect(await body(slow, 16)).toBe(await body(plain));
      const hints = events.filter((e) => e.startsWith('hint ')).map((e) => e.slice(5));
      expect(new Set(hints).size).toBe(hints.length);
      const firstHint = events.findIndex((e) => e.startsWith('hint '));
      expect(firstHint).toBeGreaterThan(0);
      // From then on, every shard read for the first time was hinted before.
      const readBefore = new Set(events.slice(0, firstHint).map((e) => e.slice(5)));
      const readAfter = new Set(events.slice(firstHint).filter((e) => e.startsWith('read ')).map((e) => e.slice(5)));
      let firstTimers = 0;
      for (const path of readAfter) {
        if (readBefore.has(path)) continue;
        firstTimers++;
        expect(events.indexOf(`hint ${path}`), path).toBeGreaterThanOrEqual(firstHint);
        expect(events.indexOf(`hint ${path}`)).toBeLessThan(events.indexOf(`read ${path}`));
      }
      expect(firstTimers).toBeGreaterThan(0);
      // The first hints cover several batches, not the next alone: more shards than a batch of 16 records reads.
      const nextRead = events.findIndex((e, i) => i > firstHint && e.startsWith('read '));
      expect(nextRead - firstHint).toBeGreaterThan(16);
    }
  });
});

describe('an export in its host turns', () => {
  it('gives the turn up after its search and after its order, before any batch, and exports the same records', async () => {
    const dir = await buildFixtureSnapshot();
    const snapshot = await openSnapshotDirectory(dir);
    const checked = ExportInput.parse(exportInputOf('/v1/export?format=ndjson&sort=decisionDate:desc'));
    const input = { ...checked, parsed: parseQuery(checked.query) };
    const events: string[] = [];
    const read = async (options: Parameters<typeof prepareExport>[2]) => {
      const prepared = await prepareExport(input, snapshot, options);
      events.push('prepared');
      const parts: string[] = [];
      for await (const chunk of prepared.chunks) parts.push(new TextDecoder().decode(chunk));
      return parts.join('');
    };
    const paused = await read({ pause: async () => void events.push('pause') });
    expect(events.slice(0, 3)).toEqual(['pause', 'pause', 'prepared']);
    expect(paused).toBe(await read({}));
    expect(paused.split('\n').filter(Boolean).length).toBe((await allRecords(dir)).length);
  });
});
