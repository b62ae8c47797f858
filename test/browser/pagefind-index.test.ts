import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, test } from 'vitest';
import { browseOrder, pagefindRecordOf, writePagefindIndex } from '../../build/index/pagefind.ts';
import { SnapshotWriter } from '../../build/write/writer.ts';
import { toClearanceRecord, type ClearanceFields, type ClearanceRecord } from '../../src/contract/index.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { readTruth, type Truth } from './fixture-truth.ts';

const fields = (over: Partial<ClearanceFields>): ClearanceFields => ({
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
  ...over,
});

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
  const writer = new SnapshotWriter(await mkdtemp(join(tmpdir(), 'device-510k-pagefind-')));
  await writePagefindIndex(records, truth.deviceTypes, writer, options);
  return writer;
}

/** The K numbers in a Pagefind fragment file (gzip of "pagefind_dcd" + JSON). */
async function kNumbersIn(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const name of await readdir(join(dir, 'pagefind', 'fragment'))) {
    const text = gunzipSync(await readFile(join(dir, 'pagefind', 'fragment', name))).toString('utf8');
    expect(text.startsWith('pagefind_dcd')).toBe(true);
    for (const m of text.matchAll(/"url":"#record=(K\d{6})"/g)) found.push(m[1]!);
  }
  return found.sort();
}

describe('writePagefindIndex', () => {
  let truth: Truth;
  let records: ClearanceRecord[];

  beforeAll(async () => {
    truth = await readTruth(await buildFixtureSnapshot());
    records = [...truth.records.values()].sort((a, b) => (a.kNumber < b.kNumber ? -1 : 1));
  }, 120_000);

  test('gives the same bytes for the same records, however many additions are in flight', async () => {
    const one = await writeInto(records, truth, { inFlight: 1 });
    const many = await writeInto(records, truth, { inFlight: 64 });
    const files = one.files();
    expect(files.length).toBeGreaterThan(10);
    expect(files.every((f) => f.path.startsWith('pagefind/'))).toBe(true);
    expect(many.files()).toEqual(files);
    expect(files.map((f) => f.path)).toContain('pagefind/pagefind.js');
    expect(files.map((f) => f.path)).toContain('pagefind/pagefind-entry.json');
  }, 120_000);

  test('bundles fragments into at most maxFragments files and keeps only the newest maxRecords clearances', async () => {
    const maxRecords = 100;
    const writer = await writeInto(records, truth, { maxFragments: 7, maxRecords });
    const paths = writer.files().map((f) => f.path);
    expect(paths.filter((p) => p.startsWith('pagefind/fragment/'))).toHaveLength(7);

    const entry = JSON.parse(await readFile(join(writer.root, 'pagefind', 'pagefind-entry.json'), 'utf8'));
    expect(entry.languages.en.page_count).toBe(maxRecords);
    const newest = browseOrder(records).slice(0, maxRecords).map((r) => r.kNumber).sort();
    expect(await kNumbersIn(writer.root)).toEqual(newest);
  }, 120_000);
});
