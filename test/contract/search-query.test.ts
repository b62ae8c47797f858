import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ErrorBody,
  FACET_FIELDS,
  ResponseSchemas,
  SORTS,
  type ClearanceRecord,
} from '../../src/contract/index.ts';
import { CSV_COLUMNS } from '../../src/operations/export.ts';
import { buildFixtureSnapshot, FIXTURE_SOURCES } from '../helpers/fixture-snapshot.ts';
import { allProductCodes, allRecords, ask } from '../server/helpers.ts';
import { TARGETS, hostFor } from './targets.ts';
import { naiveExtended, type NaiveEdges, type NaiveExtendedRequest } from '../search/naive-query.ts';
import { readModel } from '../helpers/lineage-model.ts';

/**
 * The search extensions (qualifiers, sorts, facets, stats) and the export, against the real server over the fixture
 * snapshot of real FDA rows. Every expectation is computed by a plain scan (test/search/naive-query.ts). On each host
 * of the API (test/contract/targets.ts).
 */
let snapshotPath: string;
/** The host the running describe block asks: each target's block sets it in its beforeAll. */
let url: string;
let records: ClearanceRecord[];
const deviceTypes = new Map<string, string | null>();
const deviceClasses = new Map<string, string | null>();
/** The fixture's edge files read as text (test/helpers/lineage-model.ts), by device. */
let edges: NaiveEdges;
/** The device the most fixture clearances name, by those edges. */
let mostCited: string;
const SearchResponse = ResponseSchemas['device-510k.search'];
const NONE = { query: '', applicant: null, productCode: null, yearFrom: null, yearTo: null };

const post = (input: unknown) => ask(url, 'device-510k.search', input);


beforeAll(async () => {
  snapshotPath = await buildFixtureSnapshot();
  records = await allRecords(snapshotPath);
  for (const e of await allProductCodes(snapshotPath)) {
    deviceTypes.set(e.productCode, e.deviceType);
    deviceClasses.set(e.productCode, e.deviceClass);
  }
  edges = readModel(FIXTURE_SOURCES[4] as string).forward;
  const cites = new Map<string, number>();
  for (const r of records) for (const to of new Set((edges.get(r.kNumber) ?? []).map((e) => e.to))) cites.set(to, (cites.get(to) ?? 0) + 1);
  mostCited = [...cites].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]![0];
});

/** Questions a regulatory-affairs user asks, with words and values taken from the fixture's records. */
function questions(): [string, NaiveExtendedRequest][] {
  const foreign = records.find((r) => r.countryCode !== null && r.countryCode !== 'US')!.countryCode!;
  const state = records.find((r) => r.state !== null && r.countryCode === 'US')!.state!;
  return [
    ['catheters but not Foley', { ...NONE, query: 'catheter -foley' }],
    ['a phrase', { ...NONE, query: '"blood pressure"' }],
    ['OR', { ...NONE, query: 'pacemaker OR defibrillator' }],
    ['Bard in any spelling', { ...NONE, query: 'applicant:bard' }],
    ['an exact applicant in quotes', { ...NONE, query: `applicant:"${records.find((r) => r.applicant)!.applicant!.toLowerCase()}"` }],
    ['device words', { ...NONE, query: 'device:cath' }],
    ['class II cardiovascular, decided in Q1 2024, third-party reviewed, not from the US', {
      ...NONE,
      query: 'class:2 panel:cardiovascular decided:2024-01-01..2024-03-31 thirdparty:yes -country:US',
    }],
    ['class II cardiovascular in 2024', { ...NONE, query: 'class:II panel:cardio decided:2024' }],
    ['a product code and a decision', { ...NONE, query: 'code:DQY decision:SESE' }],
    ['a decision by name', { ...NONE, query: 'decision:"substantially equivalent"' }],
    ['special 510(k)s with a summary', { ...NONE, query: 'type:special summary:yes' }],
    ['not expedited', { ...NONE, query: 'expedited:no' }],
    ['a foreign country', { ...NONE, query: `country:${foreign}` }],
    ['a state', { ...NONE, query: `state:${state.toLowerCase()}` }],
    ['received since mid-2023', { ...NONE, query: 'received:>=2023-06' }],
    ['reviews over 180 days', { ...NONE, query: 'reviewdays:>180' }],
    ['qualifiers with the filters', { ...NONE, query: 'reviewdays:<=90', yearFrom: 1980, yearTo: 1985 }],
    ['the clearances that name a device', { ...NONE, query: `predicate:${mostCited}` }],
    ['that name it by a named edge', { ...NONE, query: `predicate:${mostCited.toLowerCase()} kind:named` }],
    ['that name it as a predicate their summary states', { ...NONE, query: `predicate:${mostCited} kind:predicate` }],
    ['whose summary states a predicate', { ...NONE, query: 'kind:predicate' }],
    ['that name a device nobody cites', { ...NONE, query: 'predicate:K000001' }],
    ['that do not name it, among catheters', { ...NONE, query: `catheter -predicate:${mostCited}` }],
  ];
}

for (const target of TARGETS) {
  describe(`on ${target}`, () => {
    const host = hostFor(target, () => snapshotPath);
    beforeAll(() => {
      url = host.url;
    });

    describe('search extensions against the running server', () => {
      it('answers every qualifier question with the plain scan\'s items, order and total', async () => {
        for (const [what, q] of questions()) {
          const expected = naiveExtended(records, deviceTypes, deviceClasses, q, edges);
          const { status, json } = await post({ ...q, page: 1, pageSize: 50 });
          expect(status, `${what}: ${JSON.stringify(json).slice(0, 300)}`).toBe(200);
          const body = SearchResponse.parse(json);
          expect(body.page.total, what).toBe(expected.kNumbers.length);
          expect(body.data.items.map((r) => r.kNumber), what).toEqual(expected.kNumbers.slice(0, 50));
        }
        // The predicate questions are not vacuous on the fixture.
        expect(naiveExtended(records, deviceTypes, deviceClasses, { ...NONE, query: `predicate:${mostCited}` }, edges).kNumbers.length).toBeGreaterThan(1);
        expect(naiveExtended(records, deviceTypes, deviceClasses, { ...NONE, query: 'kind:predicate' }, edges).kNumbers.length).toBeGreaterThan(0);
        // The Q1 2024 question is not vacuous on the fixture.
        const broad = naiveExtended(records, deviceTypes, deviceClasses, { ...NONE, query: 'class:2 decided:2024' }, edges);
        expect(broad.kNumbers.length).toBeGreaterThan(0);
      });

      it.each(SORTS)('sorts by %s with a total order', async (sort) => {
        for (const q of [{ ...NONE }, { ...NONE, query: 'catheter' }, { ...NONE, query: 'summary:yes' }]) {
          const expected = naiveExtended(records, deviceTypes, deviceClasses, { ...q, sort }, edges).kNumbers;
          for (const page of [1, 3]) {
            const body = SearchResponse.parse((await post({ ...q, sort, page, pageSize: 50 })).json);
            expect(body.data.items.map((r) => r.kNumber)).toEqual(expected.slice((page - 1) * 50, page * 50));
          }
        }
      });

      it('counts every requested field exactly, with labels and years in order when asked', async () => {
        const facets = FACET_FIELDS.map((field, i) => ({ field, size: i % 3 === 0 ? null : 5, order: i % 2 === 0 ? ('count' as const) : ('value' as const) }));
        for (const q of [{ ...NONE }, { ...NONE, query: 'catheter' }, { ...NONE, query: 'decided:2015..' }, { ...NONE, query: 'kind:named' }, { ...NONE, query: 'kind:predicate' }]) {
          const expected = naiveExtended(records, deviceTypes, deviceClasses, { ...q, facets }, edges);
          const body = SearchResponse.parse((await post({ ...q, facets, page: 1, pageSize: 1 })).json);
          expect(body.facets).toEqual(expected.facets);
        }
        // The most-cited devices among every clearance, every one of them, by the edge files.
        const cited = SearchResponse.parse((await post({ ...NONE, facets: [{ field: 'predicate', size: null }], page: 1, pageSize: 1 })).json);
        expect(cited.facets[0]!.values[0]).toEqual({ value: mostCited, count: naiveExtended(records, deviceTypes, deviceClasses, { ...NONE, query: `predicate:${mostCited}` }, edges).kNumbers.length });
        expect(cited.facets[0]!.values.length).toBeGreaterThan(10);
        const years = SearchResponse.parse((await post({ ...NONE, facets: [{ field: 'decisionYear', size: null, order: 'value' }], page: 1, pageSize: 1 })).json);
        const values = years.facets[0]!.values.map((v) => v.value as number);
        expect(values).toEqual([...values].sort((a, b) => a - b));
        const codes = SearchResponse.parse((await post({ ...NONE, facets: [{ field: 'productCode' }], page: 1, pageSize: 1 })).json);
        expect(codes.facets[0]!.values.every((v) => (v as { label?: string }).label === (deviceTypes.get(v.value as string) || undefined))).toBe(true);
      });

      it('gives review-time statistics over every match', async () => {
        for (const q of [{ ...NONE }, { ...NONE, query: 'code:DQY' }, { ...NONE, query: 'qqqzzz' }]) {
          const expected = naiveExtended(records, deviceTypes, deviceClasses, { ...q, stats: true }, edges).stats;
          const body = SearchResponse.parse((await post({ ...q, stats: true, page: 1, pageSize: 1 })).json);
          expect(body.data.stats).toEqual(expected);
        }
      });

      it('lists predicate: and kind: among meta\'s qualifiers and predicate among its facet fields, after the others', async () => {
        const { status, json } = await ask(url, 'device-510k.meta', {});
        expect(status).toBe(200);
        const data = (json as { data: { qualifiers: { name: string; accepts: string }[]; facetFields: string[] } }).data;
        expect(data.qualifiers.slice(-2).map((q) => q.name)).toEqual(['predicate:', 'kind:']);
        expect(data.qualifiers.at(-2)!.accepts).toMatch(/K or De Novo number/);
        expect(data.facetFields.at(-1)).toBe('predicate');
      });

      it('answers exactly as before when no extension is used', async () => {
        const body = SearchResponse.parse((await post({ ...NONE, query: 'catheter', page: 1, pageSize: 5 })).json);
        expect(body.facets.map((f) => f.field)).toEqual(['productCode', 'applicant', 'decisionYear']);
        expect(body.data.stats).toBeUndefined();
      });

      it.each<[string, Record<string, unknown>, RegExp]>([
        ['an unknown qualifier', { query: 'colour:red' }, /"colour:" is not a qualifier; the qualifiers are applicant:/],
        ['a malformed date', { query: 'decided:2024-02-30' }, /decided: takes a decision date or range/],
        ['a malformed class', { query: 'catheter class:7' }, /class: takes the device class/],
        ['a predicate that is not a K or De Novo number', { query: 'predicate:123456' }, /predicate: takes a K or De Novo number/],
        ['a negated kind', { query: 'predicate:K000001 -kind:named' }, /kind: narrows the whole query and cannot be negated/],
        ['an unknown sort', { sort: 'deviceName:asc' }, /must be one of "relevance"/],
        ['an unknown facet field', { facets: [{ field: 'color' }] }, /must be one of "productCode"/],
        ['a facet asked twice', { facets: [{ field: 'state' }, { field: 'state' }] }, /must name each field once/],
        ['a facet size of 0', { facets: [{ field: 'state', size: 0 }] }, /must be at least 1/],
        ['stats that are not a boolean', { stats: 'yes' }, /must be true or false/],
      ])('refuses %s with invalid_input naming it', async (_what, change, message) => {
        const { status, json } = await post({ ...NONE, page: 1, pageSize: 10, ...change });
        expect(status).toBe(400);
        const body = ErrorBody.parse(json);
        expect(body.error.code).toBe('invalid_input');
        expect(body.error.details.map((d) => d.message).join(' ')).toMatch(message);
      });
    });

    describe('GET /v1/export', () => {
      const exportUrl = (params: Record<string, string>) => `${url}/v1/export?${new URLSearchParams(params)}`;

      it('streams every match as NDJSON, in the search\'s order, equal to the records', async () => {
        const q = { ...NONE, query: 'decided:1976..1990 -catheter', sort: 'receivedDate:desc' };
        const expected = naiveExtended(records, deviceTypes, deviceClasses, q, edges).kNumbers;
        expect(expected.length).toBeGreaterThan(50);
        const res = await fetch(exportUrl({ query: q.query, sort: q.sort, format: 'ndjson' }));
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
        expect(res.headers.get('x-total-count')).toBe(String(expected.length));
        const lines = (await res.text()).split('\n');
        expect(lines.pop()).toBe('');
        const got = lines.map((l) => JSON.parse(l) as ClearanceRecord);
        expect(got.map((r) => r.kNumber)).toEqual(expected);
        const byK = new Map(records.map((r) => [r.kNumber, r]));
        for (const r of got) expect(r).toEqual(byK.get(r.kNumber));
      });

      /** A text cell as the CSV writes it: a leading = + - @ tab, CR or apostrophe gets an apostrophe (docs/search.md, "Export"). */
      const asText = (v: string | null) => (v === null ? '' : /^[=+\-@\t\r']/.test(v) ? `'${v}` : v);

      it('gives every record back exactly, FDA names that begin with an apostrophe too, by the rule docs/search.md states', async () => {
        // Walked in parts of 50 (each part a CSV with its header), as a program reading a large set would.
        const rows: string[][] = [];
        let cursor: string | null = null;
        for (let part = 0; part < 100; part++) {
          const res: Response = await fetch(exportUrl({ sort: 'kNumber:asc', limit: '50', ...(cursor ? { cursor } : {}) }));
          expect(res.status).toBe(200);
          const partRows = parseCsv(new TextDecoder().decode(new Uint8Array(await res.arrayBuffer()).subarray(3)));
          expect(partRows[0]).toEqual([...CSV_COLUMNS]);
          rows.push(...(rows.length === 0 ? partRows : partRows.slice(1)));
          cursor = res.headers.get('x-next-cursor');
          if (cursor === null) break;
        }
        const sorted = [...records].sort((a, b) => (a.kNumber < b.kNumber ? -1 : 1));
        expect(rows.slice(1).map((r) => r[0])).toEqual(sorted.map((r) => r.kNumber));
        // The documented rule for programs: in a text column, drop one leading apostrophe; an empty cell is null.
        const undo = (cell: string) => (cell === '' ? null : cell.startsWith("'") ? cell.slice(1) : cell);
        const apostrophes = sorted.filter((r) => Object.values(r).some((v) => typeof v === 'string' && v.startsWith("'")));
        expect(apostrophes.length, 'the fixture has FDA names that begin with an apostrophe').toBeGreaterThan(0);
        for (const [i, row] of rows.slice(1).entries()) {
          const r = sorted[i]!;
          for (const [c, column] of CSV_COLUMNS.entries()) {
            const want = column === 'sourceUrl' ? r.source.sourceUrl : r[column];
            const cell = row[c]!;
            if (typeof want === 'number' || typeof want === 'boolean') expect(cell, `${r.kNumber} ${column}`).toBe(String(want));
            else expect(undo(cell), `${r.kNumber} ${column}`).toBe(want ?? null);
          }
        }
      });

      it('writes RFC 4180 CSV with a BOM and a header row, every record once', async () => {
        const res = await fetch(exportUrl({ query: 'panel:cardio' }));
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toMatch(/^text\/csv; charset=utf-8/);
        const bytes = new Uint8Array(await res.arrayBuffer());
        expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
        const rows = parseCsv(new TextDecoder().decode(bytes.subarray(3)));
        expect(rows[0]).toEqual([...CSV_COLUMNS]);
        const expected = naiveExtended(records, deviceTypes, deviceClasses, { ...NONE, query: 'panel:cardio' }).kNumbers;
        expect(expected.length).toBeGreaterThan(0);
        expect(rows.slice(1).map((r) => r[0])).toEqual(expected);
        const byK = new Map(records.map((r) => [r.kNumber, r]));
        for (const row of rows.slice(1)) {
          const r = byK.get(row[0]!)!;
          const cell = (c: string) => row[CSV_COLUMNS.indexOf(c as (typeof CSV_COLUMNS)[number])];
          expect(cell('applicant')).toBe(asText(r.applicant));
          expect(cell('deviceName')).toBe(asText(r.deviceName));
          // No cell a spreadsheet would run as a formula (numbers aside: a review time may be negative).
          for (const [i, value] of row.entries()) if (CSV_COLUMNS[i] !== 'reviewDays') expect(value).not.toMatch(/^[=+\-@\t\r]/);
          expect(cell('reviewDays')).toBe(r.reviewDays === null ? '' : String(r.reviewDays));
          expect(cell('sourceUrl')).toBe(r.source.sourceUrl);
        }
      });

      it('walks the set in parts by cursor, and resumes after a K number, each record exactly once', async () => {
        const expected = naiveExtended(records, deviceTypes, deviceClasses, { ...NONE, query: 'catheter' }).kNumbers;
        const seen: string[] = [];
        let cursor: string | null = null;
        for (let part = 0; part < 100; part++) {
          const params: Record<string, string> = { query: 'catheter', format: 'ndjson', limit: '17' };
          if (cursor) params.cursor = cursor;
          const res = await fetch(exportUrl(params));
          expect(res.status).toBe(200);
          const text = await res.text();
          seen.push(...text.split('\n').filter(Boolean).map((l) => (JSON.parse(l) as ClearanceRecord).kNumber));
          cursor = res.headers.get('x-next-cursor');
          if (cursor === null) break;
          expect(res.headers.get('link')).toContain('cursor=');
        }
        expect(seen).toEqual(expected);
        const from = expected[9]!;
        const rest = await (await fetch(exportUrl({ query: 'catheter', format: 'ndjson', after: from }))).text();
        expect(rest.split('\n').filter(Boolean).map((l) => (JSON.parse(l) as ClearanceRecord).kNumber)).toEqual(expected.slice(10));
      });

      it.each<[string, Record<string, string>, string]>([
        ['an unknown format', { format: 'xlsx' }, 'invalid_input'],
        ['an unknown parameter', { pageSize: '5' }, 'invalid_input'],
        ['a bad qualifier', { query: 'colour:red' }, 'invalid_input'],
        ['a year that is not a number', { yearFrom: 'soon' }, 'invalid_input'],
        ['a forged cursor', { cursor: 'not-a-cursor' }, 'invalid_cursor'],
        ['a cursor of another sort', { cursor: Buffer.from(JSON.stringify({ v: 1, s: 'kNumber:asc', k: [1] })).toString('base64url') }, 'invalid_cursor'],
        ['after a K number the snapshot lacks', { after: 'K999999' }, 'invalid_cursor'],
      ])('refuses %s', async (_what, params, code) => {
        const res = await fetch(exportUrl(params));
        expect(res.status).toBe(400);
        expect(ErrorBody.parse(await res.json()).error.code).toBe(code);
      });
    });

    describe('the OpenAPI document', () => {
      it('describes the new inputs and members, and real extended requests and answers validate against it', async () => {
        const doc = (await (await fetch(`${url}/v1/openapi.json`)).json()) as Record<string, any>;
        const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
        ajv.addSchema(doc, 'openapi.json');
        const check = (component: string, value: unknown) => {
          const fn = ajv.getSchema(`openapi.json#/components/schemas/${component}`)!;
          return { ok: fn(value), errors: JSON.stringify(fn.errors?.slice(0, 3)) };
        };
        const input = { ...NONE, query: 'catheter -foley class:2', sort: 'reviewDays:desc', facets: [{ field: 'deviceClass', size: null, order: 'value' }, { field: 'productCode' }], stats: true, page: 1, pageSize: 5 };
        const request = { version: 1, operation: 'device-510k.search', input };
        expect(check('SearchRequest', request)).toMatchObject({ ok: true });
        expect(check('SearchRequest', { ...request, input: { ...input, sort: 'nope' } }).ok).toBe(false);
        const { json } = await post(input);
        expect(check('SearchResponse', json)).toMatchObject({ ok: true });
        const names = (doc.paths['/v1/export'].get.parameters as { name: string }[]).map((p) => p.name);
        expect(names).toEqual(expect.arrayContaining(['query', 'sort', 'format', 'limit', 'cursor', 'after']));
      });
    });

    /** RFC 4180 rows (quoted fields, doubled quotes, CRLF). */
    function parseCsv(text: string): string[][] {
      const rows: string[][] = [];
      let row: string[] = [];
      let cell = '';
      let quoted = false;
      for (let i = 0; i < text.length; i++) {
        const c = text[i]!;
        if (quoted) {
          if (c === '"' && text[i + 1] === '"') {
            cell += '"';
            i++;
          } else if (c === '"') quoted = false;
          else cell += c;
        } else if (c === '"') quoted = true;
        else if (c === ',') {
          row.push(cell);
          cell = '';
        } else if (c === '\r' && text[i + 1] === '\n') {
          row.push(cell);
          rows.push(row);
          row = [];
          cell = '';
          i++;
        } else cell += c;
      }
      return rows;
    }
  });
}
