import { Ajv2020 } from 'ajv/dist/2020.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { ErrorBody, ResponseSchemas, type ClearanceRecord } from '../../src/contract/index.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { allProductCodes, allRecords } from '../server/helpers.ts';
import { naiveExtended } from '../search/naive-query.ts';
import { TARGETS, hostFor } from './targets.ts';

/**
 * The day facets (`decisionDate`, `receivedDate`) of search, and the answers of requests that do not use them, on
 * each host of the API. Every expectation is read from the fixture's records directly: a record's date string is
 * its day, counted per day; the matches of a filter are picked by comparing the records' members.
 */
let snapshotPath: string;
let url: string;
let records: ClearanceRecord[];
const deviceTypes = new Map<string, string | null>();
const deviceClasses = new Map<string, string | null>();
const SearchResponse = ResponseSchemas['device-510k.search'];
const NONE = { query: '', applicant: null, productCode: null, yearFrom: null, yearTo: null };

type DayField = 'decisionDate' | 'receivedDate';
type Order = 'count' | 'value';

beforeAll(async () => {
  snapshotPath = await buildFixtureSnapshot();
  records = await allRecords(snapshotPath);
  for (const e of await allProductCodes(snapshotPath)) {
    deviceTypes.set(e.productCode, e.deviceType);
    deviceClasses.set(e.productCode, e.deviceClass);
  }
});

/** The day counts of `matched`, from each record's own date string, ordered and cut as the request says. */
function dayValues(matched: readonly ClearanceRecord[], field: DayField, order: Order, size: number | null): { value: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const r of matched) {
    const day = r[field];
    if (day !== null) counts.set(day, (counts.get(day) ?? 0) + 1);
  }
  const byDay = (a: [string, number], b: [string, number]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
  const entries = [...counts].sort(order === 'value' ? byDay : (a, b) => b[1] - a[1] || byDay(a, b));
  return entries.slice(0, size ?? entries.length).map(([value, count]) => ({ value, count }));
}

async function raw(input: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(`${url}/v1/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ version: 1, operation: 'device-510k.search', input }),
  });
  return { status: res.status, text: await res.text() };
}

const yearOf = (date: string | null) => (date === null ? null : Number(date.slice(0, 4)));

for (const target of TARGETS) {
  describe(`on ${target}`, () => {
    const host = hostFor(target, () => snapshotPath);
    beforeAll(() => {
      url = host.url;
    });

    describe('day facets', () => {
      /** Requests and their matches, each picked from the records without the engine. */
      const cases = (): [string, Record<string, unknown>, ClearanceRecord[]][] => {
        const code = 'DXY';
        return [
          ['every record', { ...NONE }, records],
          ['a product code in 1976..1981', { ...NONE, productCode: code, yearFrom: 1976, yearTo: 1981 }, records.filter((r) => r.productCode === code && yearOf(r.decisionDate) !== null && yearOf(r.decisionDate)! >= 1976 && yearOf(r.decisionDate)! <= 1981)],
          ['a word', { ...NONE, query: 'catheter' }, (() => {
            const ks = new Set(naiveExtended(records, deviceTypes, deviceClasses, { ...NONE, query: 'catheter' }).kNumbers);
            return records.filter((r) => ks.has(r.kNumber));
          })()],
          ['no match', { ...NONE, query: 'qqqzzzxx' }, []],
        ];
      };

      it('counts every day of every match, in both orders, whole and cut', async () => {
        for (const [what, q, matched] of cases()) {
          for (const field of ['decisionDate', 'receivedDate'] as const) {
            for (const order of ['value', 'count'] as const) {
              for (const size of [null, 3]) {
                const { status, text } = await raw({ ...q, page: 1, pageSize: 1, facets: [{ field, size, order }] });
                expect(status, `${what} ${field} ${order} ${size}: ${text.slice(0, 300)}`).toBe(200);
                const body = SearchResponse.parse(JSON.parse(text));
                expect(body.page.total, what).toBe(matched.length);
                expect(body.facets, `${what} ${field} ${order} ${size}`).toEqual([{ field, values: dayValues(matched, field, order, size) }]);
              }
            }
          }
        }
        // The cases are not vacuous: the fixture has undated records, days shared by several records, a filter
        // that keeps some days and drops others.
        expect(records.some((r) => r.receivedDate === null)).toBe(true);
        expect(dayValues(records, 'decisionDate', 'count', 1)[0]!.count).toBeGreaterThan(1);
        const [, , filtered] = cases()[1]!;
        expect(filtered.length).toBeGreaterThan(1);
        expect(filtered.length).toBeLessThan(records.filter((r) => r.productCode === 'DXY').length);
      });

      it('counts days beside other facets, each in its place', async () => {
        const facets = [
          { field: 'decisionYear', size: null, order: 'value' },
          { field: 'receivedDate', size: 5, order: 'count' },
          { field: 'productCode', size: 3, order: 'count' },
          { field: 'decisionDate', size: null, order: 'value' },
        ] as const;
        const body = SearchResponse.parse(JSON.parse((await raw({ ...NONE, page: 1, pageSize: 1, facets })).text));
        const expected = naiveExtended(records, deviceTypes, deviceClasses, { ...NONE, facets: facets.map((f) => ({ ...f })) }).facets!;
        expect(body.facets.map((f) => f.field)).toEqual(facets.map((f) => f.field));
        expect(body.facets[0]).toEqual(expected[0]);
        expect(body.facets[2]).toEqual(expected[2]);
        expect(body.facets[1]).toEqual({ field: 'receivedDate', values: dayValues(records, 'receivedDate', 'count', 5) });
        expect(body.facets[3]).toEqual({ field: 'decisionDate', values: dayValues(records, 'decisionDate', 'value', null) });
      });

      it.each<[string, unknown, RegExp]>([
        ['a day field misspelt', [{ field: 'decisionDay' }], /must be one of "productCode", .*"decisionDate", "receivedDate"/],
        ['a day facet of size 0', [{ field: 'decisionDate', size: 0 }], /must be at least 1/],
        ['an unknown order', [{ field: 'receivedDate', order: 'time' }], /must be "count" or "value"/],
        ['a day field asked twice', [{ field: 'decisionDate' }, { field: 'decisionDate', order: 'value' }], /must name each field once/],
      ])('refuses %s with invalid_input naming the field and the rule', async (_what, facets, message) => {
        const { status, text } = await raw({ ...NONE, page: 1, pageSize: 10, facets });
        expect(status).toBe(400);
        const body = ErrorBody.parse(JSON.parse(text));
        expect(body.error.code).toBe('invalid_input');
        expect(body.error.details.map((d) => d.message).join(' ')).toMatch(message);
        expect(body.error.details.map((d) => d.path).join(' ')).toMatch(/facets/);
      });
    });

    it('describes the day fields in the OpenAPI document, and a real day-facet request and answer validate against it', async () => {
      const doc = (await (await fetch(`${url}/v1/openapi.json`)).json()) as Record<string, unknown>;
      const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
      ajv.addSchema(doc, 'openapi.json');
      const valid = (component: string, value: unknown) => ajv.getSchema(`openapi.json#/components/schemas/${component}`)!(value);
      const input = { ...NONE, query: 'catheter', page: 1, pageSize: 1, facets: [{ field: 'decisionDate', size: null, order: 'value' }, { field: 'receivedDate', size: 2 }] };
      expect(valid('SearchRequest', { version: 1, operation: 'device-510k.search', input })).toBe(true);
      expect(valid('SearchRequest', { version: 1, operation: 'device-510k.search', input: { ...input, facets: [{ field: 'decisionDay' }] } })).toBe(false);
      const { text } = await raw(input);
      expect(valid('SearchResponse', JSON.parse(text))).toBe(true);
    });

    describe('requests that use no day facet', () => {
      /**
       * The whole answer's bytes, assembled from the records: the page's records as the snapshot holds them, the page,
       * and the facets as a plain count gives them. Only `sourceState` (it carries the time it was served) and the
       * page's snapshot token are taken from the answer itself.
       */
      const expectedText = (input: Record<string, unknown> & { page: number; pageSize: number }, got: { sourceState: unknown; page: { snapshotToken: string | null } }) => {
        const facets = (input.facets as { field: string; size?: number | null; order?: Order }[] | undefined)?.map((f) => ({ field: f.field, size: f.size === undefined ? 10 : f.size, order: f.order ?? 'count' }));
        const defaults = [
          { field: 'productCode', size: 10, order: 'count' as const },
          { field: 'applicant', size: 10, order: 'count' as const },
          { field: 'decisionYear', size: 10, order: 'count' as const },
        ];
        const naive = naiveExtended(records, deviceTypes, deviceClasses, { ...NONE, ...input, facets: facets ?? defaults } as never);
        // The contract's facets carry no labels; the extension's carry them where known.
        const shown = facets ? naive.facets! : naive.facets!.map((f) => ({ field: f.field, values: f.values.map(({ value, count }) => ({ value, count })) }));
        const byK = new Map(records.map((r) => [r.kNumber, r]));
        const items = naive.kNumbers.slice((input.page - 1) * input.pageSize, input.page * input.pageSize).map((k) => byK.get(k)!);
        const total = naive.kNumbers.length;
        const page = {
          itemsReturned: items.length,
          total,
          totalRelation: 'exact',
          hasNextPage: input.page * input.pageSize < total,
          nextCursor: null,
          snapshotToken: got.page.snapshotToken,
          consistency: 'live-offset',
        };
        return `{"version":1,"operation":"device-510k.search","data":{"items":[${items.map((r) => JSON.stringify(r)).join(',')}]},"sourceState":${JSON.stringify(got.sourceState)},"page":${JSON.stringify(page)},"facets":${JSON.stringify(shown)}}`;
      };

      it.each<[string, Record<string, unknown> & { page: number; pageSize: number }]>([
        ['the contract\'s request', { ...NONE, query: 'catheter', page: 1, pageSize: 5 }],
        ['the contract\'s filters', { ...NONE, productCode: 'DXY', yearFrom: 1976, yearTo: 1985, page: 2, pageSize: 3 }],
        ['year facets', { ...NONE, page: 2, pageSize: 2, facets: [{ field: 'decisionYear', size: null, order: 'value' }, { field: 'receivedYear', size: 4 }] }],
        ['every other field', { ...NONE, query: 'catheter', page: 1, pageSize: 1, facets: [{ field: 'productCode', size: null }, { field: 'applicant' }, { field: 'decisionCode', order: 'value' }, { field: 'thirdParty' }, { field: 'countryCode', size: null, order: 'value' }] }],
      ])('answers %s byte for byte as a plain scan assembles it', async (_what, input) => {
        const { status, text } = await raw(input);
        expect(status).toBe(200);
        const got = JSON.parse(text) as { sourceState: unknown; page: { snapshotToken: string | null } };
        expect(text).toBe(expectedText(input, got));
      });
    });
  });
}
