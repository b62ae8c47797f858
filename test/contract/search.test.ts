import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ErrorBody,
  ResponseSchemas,
  type ClearanceRecord,
} from '../../src/contract/index.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { allProductCodes, allRecords, ask } from '../server/helpers.ts';
import { TARGETS, hostFor } from './targets.ts';
import { naiveSearch, type NaiveRequest } from '../search/naive.ts';

/**
 * Every search rule of docs/contract.md section 6, against the real server over the fixture snapshot. Expected answers are
 * computed here by a plain scan of the fixture's records (test/search/naive.ts), never written down by hand. On each host
 * of the API: the Node server and the Worker under workerd (test/contract/targets.ts).
 */
let snapshotPath: string;
/** The host the running describe block asks: each target's block sets it in its beforeAll. */
let url: string;
let records: ClearanceRecord[];
let deviceTypes: Map<string, string | null>;

const SearchResponse = ResponseSchemas['device-510k.search'];
const NONE: NaiveRequest = { query: '', applicant: null, productCode: null, yearFrom: null, yearTo: null };

type SearchInputJson = NaiveRequest & { page: number; pageSize: number };

const post = (input: unknown) => ask(url, 'device-510k.search', input);

async function search(input: SearchInputJson) {
  const { status, json } = await post(input);
  expect(status, JSON.stringify(json)).toBe(200);
  return SearchResponse.parse(json);
}


beforeAll(async () => {
  snapshotPath = await buildFixtureSnapshot();
  records = await allRecords(snapshotPath);
  deviceTypes = new Map((await allProductCodes(snapshotPath)).map((e) => [e.productCode, e.deviceType]));
});

/** Questions whose words and filters come from the fixture's own records. */
function questions(): [string, NaiveRequest][] {
  const withDate = records.filter((r) => r.decisionDate !== null);
  const applicantCounts = new Map<string, number>();
  for (const r of records) if (r.applicant) applicantCounts.set(r.applicant, (applicantCounts.get(r.applicant) ?? 0) + 1);
  const topApplicant = [...applicantCounts].sort((a, b) => b[1] - a[1])[0]![0];
  const someCode = records.find((r) => r.productCode === 'DTB')?.productCode ?? records.find((r) => r.productCode)!.productCode!;
  const aRecord = withDate[Math.floor(withDate.length / 2)]!;
  const nameWord = aRecord.deviceName.split(/\s+/).find((w) => /^[A-Za-z]{5,}$/.test(w))!;
  return [
    ['no query: every clearance', NONE],
    ['blank query: every clearance', { ...NONE, query: '   ' }],
    ['one word', { ...NONE, query: 'pacemaker' }],
    ['upper case', { ...NONE, query: 'PACEMAKER' }],
    ['a prefix', { ...NONE, query: 'pace' }],
    ['accents ignored', { ...NONE, query: 'PÂCËMÅKER' }],
    ['punctuation splits words', { ...NONE, query: 'x-ray' }],
    ['two words, both must match', { ...NONE, query: 'catheter intravascular' }],
    ['a word from a record', { ...NONE, query: nameWord.toLowerCase() }],
    ['a word that matches nothing', { ...NONE, query: 'qqqzzz' }],
    ['a whole K number', { ...NONE, query: aRecord.kNumber }],
    ['a K number in lower case', { ...NONE, query: aRecord.kNumber.toLowerCase() }],
    ['a K number prefix', { ...NONE, query: aRecord.kNumber.slice(0, 3) }],
    ['a product code as text', { ...NONE, query: someCode.toLowerCase() }],
    ['an applicant word', { ...NONE, query: topApplicant.split(/\s+/)[0]! }],
    ['applicant filter, other case and spacing', { ...NONE, applicant: `  ${topApplicant.toUpperCase().replace(/ /g, '   ')} ` }],
    ['applicant filter that names nobody', { ...NONE, applicant: 'No Such Company, Inc.' }],
    ['product code filter', { ...NONE, productCode: someCode }],
    ['year range', { ...NONE, yearFrom: 1980, yearTo: 1985 }],
    ['yearFrom only', { ...NONE, yearFrom: 2015 }],
    ['yearTo only', { ...NONE, yearTo: 1979 }],
    ['a year range that includes every date', { ...NONE, yearFrom: 1900, yearTo: 9999 }],
    ['query and filters together', { ...NONE, query: 'a', productCode: someCode, yearFrom: 1976, yearTo: 2026 }],
    ['a query word and an applicant', { ...NONE, query: 'system', applicant: topApplicant }],
  ];
}

for (const target of TARGETS) {
  describe(`on ${target}`, () => {
    const host = hostFor(target, () => snapshotPath);
    beforeAll(() => {
      url = host.url;
    });

    describe('device-510k.search against the running server', () => {
      it('answers every question with the plain scan\'s items, order, total and facets', async () => {
        for (const [what, q] of questions()) {
          const expected = naiveSearch(records, deviceTypes, q);
          const body = await search({ ...q, page: 1, pageSize: 50 });
          const label = `${what}: ${JSON.stringify(q)}`;
          expect(body.page.total, label).toBe(expected.kNumbers.length);
          expect(body.data.items.map((r) => r.kNumber), label).toEqual(expected.kNumbers.slice(0, 50));
          expect(body.facets, label).toEqual(expected.facets);
        }
      });

      it('finds "pacemaker" in records whose names never say it, through the product code\'s device type', async () => {
        const body = await search({ ...NONE, query: 'pacemaker', page: 1, pageSize: 50 });
        const all = naiveSearch(records, deviceTypes, { ...NONE, query: 'pacemaker' }).kNumbers;
        const byType = records.filter(
          (r) => !/pacemaker/i.test(r.deviceName) && r.productCode && /pacemaker/i.test(deviceTypes.get(r.productCode) ?? ''),
        );
        expect(byType.length).toBeGreaterThan(0);
        for (const r of byType) expect(all).toContain(r.kNumber);
        expect(body.page.total).toBe(all.length);
        // Those come after every record that names a pacemaker.
        const named = body.data.items.filter((r) => /pacemaker/i.test(r.deviceName)).length;
        expect(body.data.items.slice(0, named).every((r) => /pacemaker/i.test(r.deviceName))).toBe(true);
      });

      it('returns whole records, equal to what detail returns', async () => {
        const body = await search({ ...NONE, query: 'pacemaker', page: 1, pageSize: 5 });
        expect(body.data.items.length).toBeGreaterThan(0);
        const byK = new Map(records.map((r) => [r.kNumber, r]));
        for (const item of body.data.items) expect(item).toEqual(byK.get(item.kNumber));
      });

      it('fills the page object as the contract says', async () => {
        const total = records.length;
        const body = await search({ ...NONE, page: 2, pageSize: 7 });
        expect(body.page).toEqual({
          itemsReturned: 7,
          total,
          totalRelation: 'exact',
          hasNextPage: 14 < total,
          nextCursor: null,
          snapshotToken: expect.stringMatching(/^[0-9a-f]{16}$/),
          consistency: 'live-offset',
        });
        const manifest = await fetch(`${url}/snapshot/manifest.json`).then((r) => r.json() as Promise<{ snapshotId: string }>);
        expect(body.page.snapshotToken).toBe(manifest.snapshotId);
      });

      it('cuts the order into pages that add up to the whole, and a page past the end is empty with the total', async () => {
        const q: NaiveRequest = { ...NONE, query: 'pace' };
        const expected = naiveSearch(records, deviceTypes, q).kNumbers;
        expect(expected.length).toBeGreaterThan(7);
        const seen: string[] = [];
        for (let page = 1; ; page++) {
          const body = await search({ ...q, page, pageSize: 7 });
          expect(body.page.total).toBe(expected.length);
          expect(body.page.itemsReturned).toBe(body.data.items.length);
          seen.push(...body.data.items.map((r) => r.kNumber));
          expect(body.page.hasNextPage).toBe(seen.length < expected.length);
          if (!body.page.hasNextPage) break;
        }
        expect(seen).toEqual(expected);
        const past = await search({ ...q, page: 1000, pageSize: 50 });
        expect(past.data.items).toEqual([]);
        expect(past.page).toMatchObject({ itemsReturned: 0, total: expected.length, hasNextPage: false });
      });

      it('keeps records without a decision date out of every year filter, and in without one', async () => {
        const undated = records.filter((r) => r.decisionDate === null);
        expect(undated.length).toBeGreaterThan(0);
        const all = await search({ ...NONE, page: 1, pageSize: 50, query: undated[0]!.kNumber });
        expect(all.data.items.map((r) => r.kNumber)).toEqual([undated[0]!.kNumber]);
        const filtered = await search({ ...NONE, page: 1, pageSize: 50, query: undated[0]!.kNumber, yearFrom: 1900 });
        expect(filtered.page.total).toBe(0);
        // And the no-query order puts them last.
        const last = await search({ ...NONE, page: Math.ceil(records.length / 50), pageSize: 50 });
        expect(last.data.items.at(-1)!.decisionDate).toBeNull();
      });

      it('gives the same answer to the same request', async () => {
        const input = { ...NONE, query: 'system', page: 1, pageSize: 20 };
        const a = await search(input);
        const b = await search(input);
        expect({ ...b, sourceState: null }).toEqual({ ...a, sourceState: null });
      });

      it('normalizes a lower-case product code filter', async () => {
        const code = records.find((r) => r.productCode)!.productCode!;
        const upper = await search({ ...NONE, productCode: code, page: 1, pageSize: 50 });
        const lower = await search({ ...NONE, productCode: code.toLowerCase(), page: 1, pageSize: 50 });
        expect(lower.page.total).toBe(upper.page.total);
        expect(lower.data.items).toEqual(upper.data.items);
      });

      it.each<[string, Record<string, unknown>]>([
        ['pageSize over 50', { pageSize: 51 }],
        ['pageSize 0', { pageSize: 0 }],
        ['page 0', { page: 0 }],
        ['yearTo before yearFrom', { yearFrom: 1990, yearTo: 1980 }],
        ['yearFrom before 1900', { yearFrom: 1899 }],
        ['a product code that is not three letters', { productCode: 'DT1' }],
        ['a blank applicant', { applicant: '   ' }],
        ['a query over 2,048 characters', { query: 'a'.repeat(2049) }],
        ['a string page', { page: '1' }],
        ['a field the operation does not list', { orderBy: 'relevance' }],
      ])('refuses %s with 400 invalid_input', async (_what, change) => {
        const { status, json } = await post({ ...NONE, page: 1, pageSize: 10, ...change });
        expect(status).toBe(400);
        expect(ErrorBody.parse(json).error.code).toBe('invalid_input');
      });

      it('refuses an input that lacks a field', async () => {
        const { query: _q, ...rest } = { ...NONE, page: 1, pageSize: 10 };
        const { status, json } = await post(rest);
        expect(status).toBe(400);
        expect(ErrorBody.parse(json).error.code).toBe('invalid_input');
      });

      it('accepts a query of exactly 2,048 characters', async () => {
        const body = await search({ ...NONE, query: 'é'.repeat(2048), page: 1, pageSize: 10 });
        expect(body.page.total).toBe(0);
      });
    });

    describe('the spelling extension ("did you mean")', () => {
      const count = (query: string, filters: Partial<NaiveRequest> = {}) => naiveSearch(records, deviceTypes, { ...NONE, ...filters, query }).kNumbers.length;

      it('answers "catheter" for "cathter", each suggestion counted as the plain scan counts it, appended only when asked for', async () => {
        expect(count('cathter')).toBe(0);
        expect(count('catheter')).toBeGreaterThan(0);
        const input = { ...NONE, query: 'cathter', page: 1, pageSize: 5 };
        const without = await post(input);
        const asked = await post({ ...input, spelling: true });
        expect([without.status, asked.status]).toEqual([200, 200]);
        // Without the input the answer has no such member; with it, the same answer with data.spelling appended.
        expect(Object.keys((without.json as { data: object }).data)).toEqual(['items']);
        const body = SearchResponse.parse(asked.json);
        const { spelling, ...data } = body.data;
        const plain = SearchResponse.parse(without.json);
        expect([data, body.page, body.facets]).toEqual([plain.data, plain.page, plain.facets]);
        expect(spelling?.[0]).toEqual({ query: 'catheter', total: count('catheter'), corrections: [{ word: 'cathter', correction: 'catheter' }] });
        for (const s of spelling!) expect(s.total, s.query).toBe(count(s.query));
        expect(spelling!.map((s) => s.total)).toEqual([...spelling!.map((s) => s.total)].sort((x, y) => y - x));
        const off = SearchResponse.parse((await post({ ...input, spelling: false })).json);
        expect([off.data, off.page, off.facets]).toEqual([plain.data, plain.page, plain.facets]);
      });

      it('keeps the filters, and answers no suggestion for a query whose words the index knows', async () => {
        const code = records.find((r) => r.deviceName.toLowerCase().includes('catheter') && r.productCode)!.productCode!;
        const body = SearchResponse.parse((await post({ ...NONE, query: 'cathter', productCode: code, page: 1, pageSize: 1, spelling: true })).json);
        expect(body.data.spelling?.[0]).toMatchObject({ query: 'catheter', total: count('catheter', { productCode: code }) });
        const known = SearchResponse.parse((await post({ ...NONE, query: 'catheter', page: 1, pageSize: 1, spelling: true })).json);
        expect(known.data.spelling).toEqual([]);
      });

      it('refuses a spelling that is not true or false', async () => {
        const { status, json } = await post({ ...NONE, query: 'cathter', page: 1, pageSize: 1, spelling: 'yes' });
        expect(status).toBe(400);
        const body = ErrorBody.parse(json);
        expect(body.error.code).toBe('invalid_input');
        expect(JSON.stringify(body.error)).toContain('spelling');
      });
    });
  });
}
