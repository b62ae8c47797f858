import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAYOUT, Manifest, MetaFile, type ClearanceRecord } from '../../src/contract/index.ts';
import { FIXTURE_EPOCH, buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { allProductCodes, allRecords, ask, expectError, expectOk, startServer } from '../server/helpers.ts';
import { TARGETS, hostFor } from './targets.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/**
 * The happy path of every operation but search, checked against the fixture's real rows and the built files, on
 * each host of the API (the Node server and the Worker under workerd). Freshness from a sync state file is the
 * Node server's only: a Worker has none and takes freshness from the manifest, as a mirror does.
 */
let snapshotPath: string;
let records: ClearanceRecord[];
let manifest: Manifest;

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/fda/${name}`, import.meta.url));

/** Rows of a pipe-delimited FDA file as objects keyed by its header (Windows-1252 read as Latin-1: ASCII rows only are used). */
async function pipeRows(name: string): Promise<Record<string, string>[]> {
  const lines = (await readFile(fixture(name), 'latin1')).replace(/\0/g, '').split(/\r?\n/).filter((l) => l.length > 0);
  const header = (lines.shift() ?? '').split('|');
  return lines.map((line) => Object.fromEntries(line.split('|').map((v, i) => [header[i] ?? `col${i}`, v])));
}

const collapse = (s: string) => s.trim().replace(/\s+/g, ' ');
const isoOf = (mdy: string) => {
  const m = /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(mdy);
  return m ? `${m[3]}-${m[1]}-${m[2]}` : null;
};

beforeAll(async () => {
  snapshotPath = await buildFixtureSnapshot();
  records = await allRecords(snapshotPath);
  manifest = Manifest.parse(JSON.parse(await readFile(join(snapshotPath, LAYOUT.manifest), 'utf8')));
});
for (const target of TARGETS) {
  describe(`on ${target}`, () => {
    const server = hostFor(target, () => snapshotPath);

    describe('detail', () => {
      it('answers every record of the snapshot exactly as the build wrote it', async () => {
        expect(records.length).toBeGreaterThan(100);
        for (const record of records) {
          const body = expectOk(await ask(server.url, 'device-510k.detail', { id: record.kNumber }), 'device-510k.detail');
          expect(body.data.record).toEqual(record);
          expect(Object.keys(body.data.record)).toEqual(Object.keys(record));
        }
      });

      it('matches the FDA pipe rows it came from', async () => {
        const openFda = JSON.parse(await readFile(fixture('openfda-510k-sample.json'), 'utf8')) as { results: { k_number: string }[] };
        const inJson = new Set(openFda.results.map((r) => r.k_number));
        const rows = (await pipeRows('pmn-1976-1990-sample.txt')).filter(
          (r) => /^K\d{6}$/.test(r.KNUMBER ?? '') && !inJson.has(r.KNUMBER ?? '') && /^[\x20-\x7e|]*$/.test(Object.values(r).join('|')),
        );
        expect(rows.length).toBeGreaterThan(50);
        for (const row of rows.slice(0, 60)) {
          const body = expectOk(await ask(server.url, 'device-510k.detail', { id: ` ${row.KNUMBER?.toLowerCase()} ` }), 'device-510k.detail');
          const r = body.data.record;
          expect(r.kNumber).toBe(row.KNUMBER);
          expect(r.id).toBe(row.KNUMBER);
          expect(r.deviceName).toBe(collapse(row.DEVICENAME ?? ''));
          expect(r.title).toBe(r.deviceName);
          expect(r.applicant).toBe(collapse(row.APPLICANT ?? '') || null);
          expect(r.productCode).toBe((row.PRODUCTCODE ?? '').trim().toUpperCase() || null);
          expect(r.receivedDate).toBe(isoOf(row.DATERECEIVED ?? ''));
          expect(r.source.sourceUrl).toBe(`https://www.accessdata.fda.gov/scripts/cdrh/cfdocs/cfpmn/pmn.cfm?ID=${row.KNUMBER}`);
        }
      });

      it('the glitch row K261609 keeps its record with a null decision date', async () => {
        const body = expectOk(await ask(server.url, 'device-510k.detail', { id: 'K261609' }), 'device-510k.detail');
        expect(body.data.record).toMatchObject({ kNumber: 'K261609', deviceName: 'Freedom Partial Knee System', applicant: 'Maxx Orthopedics, Inc.', productCode: 'HSX', decisionDate: null, receivedDate: '2026-05-14' });
      });
    });

    describe('classification', () => {
      it('answers the classification file row for a classified code, in any case', async () => {
        const rows = await pipeRows('foiclass-sample.txt');
        const dxy = rows.find((r) => r.PRODUCTCODE === 'DXY');
        expect(dxy).toBeDefined();
        const body = expectOk(await ask(server.url, 'device-510k.classification', { productCode: 'dXy' }), 'device-510k.classification');
        expect(body.data).toMatchObject({
          productCode: 'DXY',
          deviceType: dxy?.DEVICENAME,
          deviceClass: dxy?.DEVICECLASS,
          regulationNumber: dxy?.REGULATIONNUMBER,
          medicalSpecialty: 'Cardiovascular',
          reviewPanel: 'Cardiovascular',
        });
      });

      it('answers every code of the snapshot, with the classification members only', async () => {
        const entries = await allProductCodes(snapshotPath);
        for (const entry of entries) {
          const body = expectOk(await ask(server.url, 'device-510k.classification', { productCode: entry.productCode }), 'device-510k.classification');
          const { clearanceCount: _c, ...classification } = entry;
          expect(body.data).toEqual(classification);
        }
      });

      it('a code seen only on clearances answers 200 with null members', async () => {
        const classified = new Set((await pipeRows('foiclass-sample.txt')).map((r) => r.PRODUCTCODE));
        const onlyOnClearances = [...new Set(records.map((r) => r.productCode).filter((c): c is string => c !== null))].filter((c) => !classified.has(c));
        expect(onlyOnClearances).toContain('BSP');
        const body = expectOk(await ask(server.url, 'device-510k.classification', { productCode: 'BSP' }), 'device-510k.classification');
        expect(body.data).toEqual({
          productCode: 'BSP', deviceType: null, deviceClass: null, regulationNumber: null, medicalSpecialty: null, reviewPanel: null, definition: null,
          submissionType: null, unclassifiedReason: null, gmpExempt: null, thirdPartyEligible: null, thirdPartyReviewCode: null, implant: null,
          lifeSustaining: null, summaryMalfunctionReporting: null, physicalState: null, technicalMethod: null, targetArea: null,
        });
      });
    });

    describe('top-product-codes', () => {
      it.each([1, 3, 10, 100])('limit %i: the most frequent codes, count descending then code ascending', async (limit) => {
        const counts = new Map<string, number>();
        for (const r of records) if (r.productCode) counts.set(r.productCode, (counts.get(r.productCode) ?? 0) + 1);
        const expected = [...counts]
          .map(([code, count]) => ({ code, count }))
          .sort((a, b) => b.count - a.count || (a.code < b.code ? -1 : 1))
          .slice(0, limit);
        const body = expectOk(await ask(server.url, 'device-510k.top-product-codes', { limit }), 'device-510k.top-product-codes');
        expect(body.data.codes).toEqual(expected);
      });
    });

    describe('meta', () => {
      it('describes the snapshot', async () => {
        const body = expectOk(await ask(server.url, 'device-510k.meta', {}), 'device-510k.meta');
        const file = MetaFile.parse(JSON.parse(await readFile(join(snapshotPath, LAYOUT.meta), 'utf8')));
        expect(body.data).toEqual(file);
        expect(body.data).toMatchObject({
          title: 'FDA 510(k) Premarket Notifications',
          totalRecords: records.length,
          supportedFilters: ['query', 'applicant', 'productCode', 'yearFrom', 'yearTo'],
          // The contract's two sorts first, then the ones the sort input adds.
          supportedSorts: ['relevance', 'decisionDate:desc', 'decisionDate:asc', 'receivedDate:desc', 'reviewDays:desc', 'kNumber:asc'],
        });
        expect(body.data.qualifiers.map((q) => q.name)).toEqual(expect.arrayContaining(['applicant:', 'code:', 'class:', 'decided:', 'reviewdays:']));
        expect(body.data.facetFields).toEqual(expect.arrayContaining(['productCode', 'applicant', 'decisionYear', 'deviceClass']));
        expect(body.data.sourceNotes.length).toBeGreaterThan(0);
      });
    });

    describe('search', () => {
      it('answers a real result or 503 source_unavailable, never a fake one', async () => {
        const res = await ask(server.url, 'device-510k.search', { query: 'pacemaker', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 5 });
        if (res.status === 503) expectError(res, 503, 'source_unavailable', 'device-510k.search');
        else expectOk(res, 'device-510k.search');
      });
    });

    describe('sourceState', () => {
      it('names the snapshot and says what freshness rests on', async () => {
        const before = Date.now();
        const body = expectOk(await ask(server.url, 'device-510k.meta', {}), 'device-510k.meta');
        const state = body.sourceState;
        expect(state).toMatchObject({
          mode: 'corpus',
          availability: 'available',
          freshness: 'unknown',
          sourceRevision: manifest.sourceRevision,
          snapshotGeneratedAt: new Date(FIXTURE_EPOCH * 1000).toISOString(),
          lastSuccessfulSyncAt: null,
          warnings: [],
        });
        expect(state.freshnessEvidence).toContain('no sync recorded');
        expect(state.freshnessEvidence).toContain(`newest decision ${manifest.decisionDateMax}`);
        expect(state.servedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
        expect(Date.parse(state.servedAt)).toBeGreaterThanOrEqual(before - 5);
        expect(Date.parse(state.servedAt)).toBeLessThanOrEqual(Date.now() + 5);
      });

      describe.skipIf(target !== 'node')('with a sync state file', () => {
        const hoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000).toISOString();
        const withState = async (state: unknown, options: { freshnessMaxAgeHours?: number } = {}) => {
          const file = join(await testTempDir('device-510k-sync-'), 'state.json');
          await writeFile(file, JSON.stringify(state));
          const s = await startServer({ snapshotPath, syncStatePath: file, ...options });
          try {
            return expectOk(await ask(s.url, 'device-510k.meta', {}), 'device-510k.meta').sourceState;
          } finally {
            await s.close();
          }
        };

        it('current within the maximum age', async () => {
          const at = hoursAgo(2);
          const state = await withState({ lastAttemptAt: at, lastSuccessfulSyncAt: at, lastFailure: null, files: {} });
          expect(state).toMatchObject({ freshness: 'current', lastSuccessfulSyncAt: at, warnings: [] });
          expect(state.freshnessEvidence).toContain(at);
        });

        it('stale past the maximum age, with a warning', async () => {
          const at = hoursAgo(49);
          const state = await withState({ lastAttemptAt: at, lastSuccessfulSyncAt: at, lastFailure: null });
          expect(state).toMatchObject({ freshness: 'stale', lastSuccessfulSyncAt: at });
          expect(state.warnings).toHaveLength(1);
          expect(state.warnings[0]).toContain(at);
        });

        it('the maximum age is configurable', async () => {
          const at = hoursAgo(2);
          expect((await withState({ lastAttemptAt: at, lastSuccessfulSyncAt: at, lastFailure: null }, { freshnessMaxAgeHours: 1 })).freshness).toBe('stale');
          expect((await withState({ lastAttemptAt: at, lastSuccessfulSyncAt: at, lastFailure: null }, { freshnessMaxAgeHours: 3 })).freshness).toBe('current');
        });

        it('a failed last attempt adds a warning naming its time, its reason and the snapshot served', async () => {
          const ok = hoursAgo(30);
          const failedAt = hoursAgo(1);
          const state = await withState({ lastAttemptAt: failedAt, lastSuccessfulSyncAt: ok, lastFailure: { at: failedAt, reason: 'HTTP 500 from the origin' } });
          expect(state.freshness).toBe('current');
          expect(state.warnings).toEqual([
            `The last sync, at ${failedAt}, failed: HTTP 500 from the origin. Serving the snapshot built at ${new Date(FIXTURE_EPOCH * 1000).toISOString()}.`,
          ]);
        });

        it('a failure followed by a success is no longer reported', async () => {
          const state = await withState({ lastAttemptAt: hoursAgo(1), lastSuccessfulSyncAt: hoursAgo(1), lastFailure: { at: hoursAgo(5), reason: 'timeout' } });
          expect(state.warnings).toEqual([]);
        });
      });
    });
  });
}
