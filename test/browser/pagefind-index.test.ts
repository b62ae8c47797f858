import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, test } from 'vitest';
import { browseOrder, kNumberYear, newestBuckets, pagefindBuckets, pagefindRecordOf, PagefindIndexes, writePagefindIndex } from '../../build/index/pagefind.ts';
import { SnapshotWriter } from '../../build/write/writer.ts';
import { toClearanceRecord, type ClearanceFields, type ClearanceRecord } from '../../src/contract/index.ts';
import { fieldsOf } from '../helpers/records.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { readTruth, type Truth } from './fixture-truth.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/** A cleared balloon catheter, every field filled; a test overrides what it is about. */
const CATHETER: Partial<ClearanceFields> = {
  deviceName: 'Balloon catheter',
  applicant: 'Acme Medical, Inc.',
  productCode: 'DQY',
  decisionDate: '1990-02-03',
  decisionDescription: 'Substantially Equivalent',
  receivedDate: '1989-12-01',
  advisoryCommittee: 'Cardiovascular',
  classificationCommittee: 'Cardiovascular',
  statementOrSummary: null,
  submissionType: 'Traditional',
  thirdParty: false,
  expeditedReview: null,
  countryCode: 'US',
};
const fields = (over: Partial<ClearanceFields>): ClearanceFields => fieldsOf({ ...CATHETER, ...over });

describe('pagefindRecordOf', () => {
  test('puts the searchable text in meta and content, the facets in filters, and no date words anywhere', () => {
    const r = pagefindRecordOf(toClearanceRecord('K900123', fields({})), 'Catheter, Percutaneous');
    expect(r).toEqual({
      url: '#record=K900123',
      content: 'K900123 Catheter, Percutaneous',
      language: 'en',
      meta: { title: 'Balloon catheter', applicant: 'Acme Medical, Inc.', productCode: 'DQY' },
      filters: { applicant: ['Acme Medical, Inc.'], productCode: ['DQY'], decisionYear: ['1990'] },
    });
    expect(JSON.stringify(r)).not.toContain('1990-02-03');
  });

  test('leaves out what a record does not have, and titles a nameless device by its K number', () => {
    const r = pagefindRecordOf(toClearanceRecord('K000001', fields({ deviceName: '', applicant: null, productCode: null, decisionDate: null })), null);
    expect(r.meta).toEqual({ title: 'K000001' });
    expect(r.filters).toEqual({});
    expect(r.content).toBe('K000001');
  });
});

describe('browseOrder', () => {
  test('is the API order without query words: newest decision first, no date last, then K number descending', () => {
    const rec = (k: string, decisionDate: string | null) => toClearanceRecord(k, fields({ decisionDate }));
    const input = [rec('K100001', '2001-05-05'), rec('K100002', null), rec('K100003', '2001-05-05'), rec('K100004', '2020-01-01'), rec('K100000', null)];
    expect(browseOrder(input).map((r) => r.kNumber)).toEqual(['K100004', 'K100003', 'K100001', 'K100002', 'K100000']);
    expect(input.map((r) => r.kNumber)[0]).toBe('K100001');
  });
});

async function writeInto(records: readonly ClearanceRecord[], truth: Truth, options: Parameters<typeof writePagefindIndex>[3]) {
  const writer = new SnapshotWriter(await testTempDir('device-510k-pagefind-'));
  await writePagefindIndex(records, truth.deviceTypes, writer, options);
  await writer.flush();
  return writer;
}

/** The K numbers in the Pagefind fragment files of one index (gzip of "pagefind_dcd" + JSON). */
async function kNumbersIn(indexDir: string): Promise<string[]> {
  const found: string[] = [];
  for (const name of await readdir(join(indexDir, 'fragment'))) {
    const text = gunzipSync(await readFile(join(indexDir, 'fragment', name))).toString('utf8');
    expect(text.startsWith('pagefind_dcd')).toBe(true);
    for (const m of text.matchAll(/"url":"#record=(K\d{6})"/g)) found.push(m[1]!);
  }
  return found.sort();
}

/** K numbers in the order they were received: by year ("K99…" before "K00…"), then by number. */
const receiptOrder = (a: string, b: string) => kNumberYear(a) - kNumberYear(b) || (a < b ? -1 : a > b ? 1 : 0);

async function indexesOf(writer: SnapshotWriter): Promise<PagefindIndexes> {
  return PagefindIndexes.parse(JSON.parse(await readFile(join(writer.root, 'pagefind', 'indexes.json'), 'utf8')));
}

describe('pagefindBuckets', () => {
  const rec = (k: string) => toClearanceRecord(k, fields({}));
  const ks = (buckets: ClearanceRecord[][]) => buckets.map((b) => b.map((r) => r.kNumber));

  test('reads the receipt year from the K number, 1976 to 2075', () => {
    expect([kNumberYear('K760001'), kNumberYear('K991234'), kNumberYear('K000001'), kNumberYear('K261234')]).toEqual([1976, 1999, 2000, 2026]);
  });

  test('keeps whole years together, oldest first, each bucket in K-number order', () => {
    const input = ['K250002', 'K000001', 'K990001', 'K250001', 'K760002', 'K760001', 'K990002'].map(rec);
    expect(ks(pagefindBuckets(input, 4))).toEqual([['K760001', 'K760002', 'K990001', 'K990002'], ['K000001', 'K250001', 'K250002']]);
    expect(ks(pagefindBuckets(input, 3))).toEqual([['K760001', 'K760002'], ['K990001', 'K990002', 'K000001'], ['K250001', 'K250002']]);
  });

  test('cuts a year larger than a bucket in K-number order, its rest sharing a bucket with the next year', () => {
    const input = ['K100001', 'K100002', 'K100003', 'K100004', 'K100005', 'K110001'].map(rec);
    expect(ks(pagefindBuckets(input, 2))).toEqual([['K100001', 'K100002'], ['K100003', 'K100004'], ['K100005', 'K110001']]);
    expect(pagefindBuckets([], 2)).toEqual([]);
  });

  test('newestBuckets keeps the newest whole buckets that fit, newest first', () => {
    const b = (k: string, n: number) => Array.from({ length: n }, (_, i) => rec(`${k}${String(i).padStart(4, '0')}`));
    const buckets = [b('K76', 3), b('K80', 2), b('K90', 4)];
    const firsts = (kept: ClearanceRecord[][]) => kept.map((x) => [x[0]!.kNumber, x.length]);
    expect(firsts(newestBuckets(buckets, 9))).toEqual([['K900000', 4], ['K800000', 2], ['K760000', 3]]);
    expect(firsts(newestBuckets(buckets, 8))).toEqual([['K900000', 4], ['K800000', 2]]);
    expect(firsts(newestBuckets(buckets, 4))).toEqual([['K900000', 4]]);
    expect(newestBuckets(buckets, 3)).toEqual([]);
  });

  test('puts every record in exactly one bucket of at most the size asked for', () => {
    const input = Array.from({ length: 500 }, (_, i) => rec(`K${String((i * 7919) % 100).padStart(2, '0')}${String(i).padStart(4, '0')}`));
    for (const size of [1, 7, 50, 499, 1000]) {
      const buckets = pagefindBuckets(input, size);
      expect(buckets.every((b) => b.length >= 1 && b.length <= size)).toBe(true);
      expect(buckets.flat().map((r) => r.kNumber).sort()).toEqual(input.map((r) => r.kNumber).sort());
    }
  });
});

describe('writePagefindIndex', () => {
  let truth: Truth;
  let records: ClearanceRecord[];

  beforeAll(async () => {
    truth = await readTruth(await buildFixtureSnapshot());
    records = [...truth.records.values()].sort((a, b) => (a.kNumber < b.kNumber ? -1 : 1));
  }, 120_000);

  test('gives the same bytes for the same records, however many additions are in flight and services run', async () => {
    const bucketRecords = Math.ceil(records.length / 3);
    const one = await writeInto(records, truth, { inFlight: 1, services: 1, bucketRecords });
    const many = await writeInto(records, truth, { inFlight: 64, services: 2, bucketRecords });
    const files = one.files();
    expect(files.length).toBeGreaterThan(10);
    expect(files.every((f) => f.path.startsWith('pagefind/'))).toBe(true);
    expect(many.files()).toEqual(files);

    const list = await indexesOf(one);
    expect(list.indexes.length).toBeGreaterThanOrEqual(3);
    expect(list.records).toBe(records.length);
    expect(list.indexes.reduce((n, i) => n + i.records, 0)).toBe(records.length);
    const paths = files.map((f) => f.path);
    expect(paths).toContain('pagefind/indexes.json');
    for (const index of list.indexes) {
      expect(paths).toContain(`pagefind/${index.path}pagefind.js`);
      const entry = JSON.parse(await readFile(join(one.root, 'pagefind', index.path, 'pagefind-entry.json'), 'utf8'));
      expect(entry.languages.en.page_count).toBe(index.records);
      const inside = (await kNumbersIn(join(one.root, 'pagefind', index.path))).sort(receiptOrder);
      expect(inside).toHaveLength(index.records);
      expect([inside[0], inside.at(-1)]).toEqual([index.first, index.last]);
    }
    // Newest first: each index's records were received after the next one's.
    for (let i = 1; i < list.indexes.length; i++) expect(receiptOrder(list.indexes[i - 1]!.first, list.indexes[i]!.last)).toBeGreaterThan(0);
  }, 120_000);

  test('new clearances of the newest year change only the newest index', async () => {
    const newestYear = Math.max(...records.map((r) => kNumberYear(r.kNumber)));
    const newest = records.filter((r) => kNumberYear(r.kNumber) === newestYear);
    expect(newest.length).toBeGreaterThan(2);
    const bucketRecords = Math.ceil(records.length / 3);
    const before = await writeInto(records.filter((r) => !newest.slice(-2).includes(r)), truth, { bucketRecords });
    const after = await writeInto(records, truth, { bucketRecords });
    const [b, a] = [await indexesOf(before), await indexesOf(after)];
    expect(a.indexes.slice(1)).toEqual(b.indexes.slice(1));
    expect(a.indexes[0]!.records).toBe(b.indexes[0]!.records + 2);
    const under = (w: SnapshotWriter, dir: string) => w.files().filter((f) => f.path.startsWith(`pagefind/${dir}`));
    for (const index of a.indexes.slice(1)) expect(under(after, index.path)).toEqual(under(before, index.path));
    expect(under(after, a.indexes[0]!.path)).not.toEqual(under(before, a.indexes[0]!.path));
  }, 120_000);

  test('bundles fragments by recordsPerFragment', async () => {
    const writer = await writeInto(records, truth, { recordsPerFragment: 15 });
    const list = await indexesOf(writer);
    expect(list.indexes).toHaveLength(1);
    const dir = `pagefind/${list.indexes[0]!.path}`;
    const paths = writer.files().map((f) => f.path);
    expect(paths.filter((p) => p.startsWith(`${dir}fragment/`))).toHaveLength(Math.ceil(records.length / 15));
  }, 120_000);

  test('keeps the newest whole indexes that fit in maxRecords', async () => {
    const maxRecords = Math.ceil(records.length / 2);
    const writer = await writeInto(records, truth, { maxRecords, bucketRecords: Math.ceil(records.length / 5) });
    const list = await indexesOf(writer);
    expect(list.records).toBeLessThanOrEqual(maxRecords);
    expect(list.records).toBeGreaterThan(0);
    const kept = (await Promise.all(list.indexes.map((i) => kNumbersIn(join(writer.root, 'pagefind', i.path))))).flat().sort(receiptOrder);
    expect(kept).toHaveLength(list.records);
    // The newest received: every record left out was received before every record kept.
    const all = records.map((r) => r.kNumber).sort(receiptOrder);
    expect(kept).toEqual(all.slice(all.length - kept.length));
  }, 120_000);

  test('writes an empty list and no index for no records', async () => {
    const writer = await writeInto([], truth, {});
    expect(await indexesOf(writer)).toEqual({ records: 0, indexes: [] });
    expect(writer.files().map((f) => f.path)).toEqual(['pagefind/indexes.json']);
  }, 120_000);
});
