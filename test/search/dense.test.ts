import { describe, expect, it } from 'vitest';
import { buildSearchIndexData } from '../../build/index/search.ts';
import { SORTS, type ClearanceRecord } from '../../src/contract/index.ts';
import { dayNumber } from '../../src/contract/search-index.ts';
import { denseSearch } from '../../src/search/dense.ts';
import { parseQuery } from '../../src/search/grammar.ts';
import { openSearchIndex, type SearchIndex } from '../../src/search/model.ts';
import { runSearch, type SearchRequest } from '../../src/search/engine.ts';
import { kNumberText } from '../../src/search/k-number.ts';
import { idsByBits } from '../../src/search/docset.ts';
import { ascendingIds } from '../../src/search/sort.ts';
import { makeRecord } from '../helpers/records.ts';

/**
 * The dense path (src/search/dense.ts) against the general one on an index large enough that date ranges fail whole
 * blocks of ids (src/search/facets.ts, `facetsWithout`): the same total, page and facets for every sort.
 */
const CODES = ['DQY', 'DTB', 'FRN', 'QQQ'];
const PANELS = [null, 'Cardiovascular', 'General Hospital', 'General & Plastic Surgery', 'Radiology', 'Radiology', 'Radiology'];
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);

function corpus(n: number): ClearanceRecord[] {
  let seed = 12345;
  const rnd = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const start = Date.UTC(1976, 0, 1);
  const span = Date.UTC(2024, 11, 31) - start;
  const out: ClearanceRecord[] = [];
  for (let i = 0; i < n; i++) {
    const decided = rnd() < 0.02 ? null : start + Math.floor(rnd() * span / DAY) * DAY;
    const received = rnd() < 0.03 ? null : (decided ?? start + span / 2) - Math.floor(rnd() * 400) * DAY;
    out.push(
      makeRecord(`K${String(i * 9 + 7).padStart(6, '0')}`, {
        deviceName: 'pump',
        applicant: rnd() < 0.05 ? null : `Maker ${Math.floor(rnd() * rnd() * 40)}`,
        productCode: rnd() < 0.05 ? null : CODES[Math.floor(rnd() * CODES.length)]!,
        decisionDate: decided === null ? null : iso(decided),
        receivedDate: received === null ? null : iso(received),
        thirdParty: rnd() < 0.02 ? null : rnd() < 0.02,
        advisoryCommittee: PANELS[(i * 31) % PANELS.length]!,
      }),
    );
  }
  return out;
}

const TYPES = new Map<string, string | null>(CODES.map((c) => [c, null]));
let shared: SearchIndex | null = null;
const index = (): SearchIndex => (shared ??= openSearchIndex(buildSearchIndexData(corpus(100_000), TYPES, TYPES)));

/** The three default facets of the documents `ids`, counted one by one (count descending, then value ascending). */
function plainFacets(ix: SearchIndex, ids: readonly number[]) {
  const top = (counts: Map<number, number>, name: (v: number) => string | number) =>
    [...counts]
      .sort((a, b) => b[1] - a[1] || a[0] - b[0])
      .slice(0, 10)
      .map(([v, count]) => ({ value: name(v), count }));
  const codes = new Map<number, number>();
  const applicants = new Map<number, number>();
  const years = new Map<number, number>();
  const add = (m: Map<number, number>, v: number) => m.set(v, (m.get(v) ?? 0) + 1);
  for (const d of ids) {
    if (ix.docCode[d]! < ix.codes.length) add(codes, ix.docCode[d]!);
    if (ix.docApplicant[d]! < ix.applicants.length) add(applicants, ix.docApplicant[d]!);
    if (ix.docYear[d]! !== 0) add(years, ix.docYear[d]!);
  }
  return [
    { field: 'productCode', values: top(codes, (c) => ix.codes[c]!) },
    { field: 'applicant', values: top(applicants, (a) => ix.applicants[a]!) },
    { field: 'decisionYear', values: top(years, (y) => y) },
  ];
}

describe('facets of matches that fill blocks of ids', () => {
  const plain = (ix: SearchIndex, pass: (d: number) => boolean) => [...Array(ix.docCount).keys()].filter(pass);

  it('counts a list of most of some blocks, with gaps', () => {
    const ix = index();
    // Asking for stats lists the matches (the general path): runs of ids with a few missing.
    const got = runSearch(ix, { query: 'thirdparty:no received:>=2003', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10, stats: true });
    const want = plain(ix, (d) => (ix.docFlags[d]! & 3) === 1 && ix.docReceived[d]! >= dayNumber('2003-01-01'));
    expect(got.total).toBe(want.length);
    expect(got.facets).toEqual(plainFacets(ix, want));
  });

  it('counts a range of ids over whole blocks', () => {
    const ix = index();
    for (const [from, to] of [[1980, 2010], [1976, 2024], [2001, 2001]] as const) {
      const got = runSearch(ix, { query: '', applicant: null, productCode: null, yearFrom: from, yearTo: to, page: 1, pageSize: 10 });
      const want = plain(ix, (d) => ix.docYear[d]! >= from && ix.docYear[d]! <= to);
      expect(got.total).toBe(want.length);
      expect(got.facets).toEqual(plainFacets(ix, want));
    }
  });
});

describe('queries of filters whose failures are few or mostly runs of ids', () => {
  // Each fails under half the documents, or more but mostly as one run of ids (a receipt date range's old dates, a
  // decision date bound), and passes at least an eighth of them.
  const QUERIES = [
    'received:>=1995-06',
    'thirdparty:no received:>=1992-03',
    'received:>=1998-01',
    'decided:..2008',
    'decided:1995.. thirdparty:no',
    '-received:1990..1996',
    'received:>=1990 -received:2010-01..2012-06',
    'thirdparty:no -code:QQQ received:>=1985',
    'reviewdays:<390 received:>=1994',
    'thirdparty:no received:>=2010-05',
    'received:>=2016-02',
    'received:2008..2019 thirdparty:no',
    'decided:..2018 received:>=2009',
  ];
  const request = (query: string, sort: (typeof SORTS)[number], page: number): SearchRequest => ({
    query, applicant: null, productCode: null, yearFrom: null, yearTo: null, page, pageSize: 25, sort,
  });

  it.each(QUERIES)('%s: the same total, page and facets as the general path, for every sort', (query) => {
    const ix = index();
    for (const sort of SORTS) {
      for (const page of [1, 3]) {
        const req = request(query, sort, page);
        // Asking for stats takes the general path: its facets are counted over the listed matches.
        const general = runSearch(ix, { ...req, stats: true });
        const dense = denseSearch(ix, parseQuery(query), req, sort, (page - 1) * 25, 25);
        expect(dense, 'the dense path answers it').not.toBeNull();
        expect(dense!.total).toBe(general.total);
        expect(dense!.facets).toEqual(general.facets);
        const got = runSearch(ix, req);
        expect(got.kNumbers).toEqual(general.kNumbers);
        expect(got.facets).toEqual(general.facets);
      }
    }
  });

  it('leaves to the general path a query that passes few documents, or fails many outside runs', () => {
    const ix = index();
    for (const query of ['received:>=2021-06', 'decided:2020..', 'reviewdays:>200 received:>=1990', '-thirdparty:no']) {
      expect(denseSearch(ix, parseQuery(query), { yearFrom: null, yearTo: null }, 'kNumber:asc', 0, 25), query).toBeNull();
    }
  });

  it('answers the same query the same way after other queries', () => {
    const ix = index();
    const first = QUERIES.map((q) => runSearch(ix, request(q, 'receivedDate:desc', 1)));
    const again = QUERIES.map((q) => runSearch(ix, request(q, 'receivedDate:desc', 1)));
    expect(again).toEqual(first);
  });
});

describe('filters that list their candidates: review time ranges, column values', () => {
  const QUERIES: [string, (review: number) => boolean, (d: number, ix: SearchIndex) => boolean][] = [
    ['reviewdays:>395', (r) => r > 395, () => true],
    ['reviewdays:>200', (r) => r > 200, () => true],
    ['reviewdays:10..20 thirdparty:no', (r) => r >= 10 && r <= 20, (d, ix) => (ix.docFlags[d]! & 3) === 1],
    ['reviewdays:>100 received:>=2001-02', (r) => r > 100, (d, ix) => ix.docReceived[d]! >= dayNumber('2001-02-01')],
    ['reviewdays:>50 received:2019-03..2021-06', (r) => r > 50, (d, ix) => ix.docReceived[d]! >= dayNumber('2019-03-01') && ix.docReceived[d]! <= dayNumber('2021-06-30')],
    // The receipt date range scans fewer ids (the recent ones) than the review time range lists, nearly all passing.
    ['reviewdays:>5 received:>=1999-06', (r) => r > 5, (d, ix) => ix.docReceived[d]! >= dayNumber('1999-06-01')],
  ];

  it.each(QUERIES)('%s: every match, in order, with their facets', (query, review, also) => {
    const ix = index();
    const want: number[] = [];
    for (let d = 0; d < ix.docCount; d++) {
      const a = ix.docReceived[d]!;
      const b = ix.docDecided[d]!;
      if (a !== 0 && b !== 0 && review(b - a) && also(d, ix)) want.push(d);
    }
    expect(want.length).toBeGreaterThan(0);
    const got = runSearch(ix, { query, applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 2, pageSize: 25 });
    expect(got.total).toBe(want.length);
    expect(got.kNumbers).toEqual(want.slice(25, 50).map((d) => kNumberText(ix.docKNumber[d]!)));
    expect(got.facets).toEqual(plainFacets(ix, want));
  });

  it.each([
    ['panel:general', (ix: SearchIndex, d: number) => ix.panels[ix.docPanel[d]!]?.startsWith('General') === true],
    ['panel:cardio thirdparty:no', (ix: SearchIndex, d: number) => ix.docPanel[d] === ix.panels.indexOf('Cardiovascular') && (ix.docFlags[d]! & 3) === 1],
    ['panel:general received:>=2000', (ix: SearchIndex, d: number) => ix.panels[ix.docPanel[d]!]?.startsWith('General') === true && ix.docReceived[d]! >= dayNumber('2000-01-01')],
  ] as const)('%s: a column value\'s documents as candidates, every match in order', (query, pass) => {
    const ix = index();
    const want = [...Array(ix.docCount).keys()].filter((d) => pass(ix, d));
    expect(want.length).toBeGreaterThan(0);
    const got = runSearch(ix, { query, applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 3, pageSize: 25 });
    expect(got.total).toBe(want.length);
    expect(got.kNumbers).toEqual(want.slice(50, 75).map((d) => kNumberText(ix.docKNumber[d]!)));
    expect(got.facets).toEqual(plainFacets(ix, want));
  });

  it('filters a column value\'s documents in a list of their own, leaving the index\'s rows as they were', () => {
    const ix = index();
    const cardio = ix.panels.indexOf('Cardiovascular');
    const ask = (query: string) => runSearch(ix, { query, applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 2, pageSize: 25 });
    // Keeps few of the panel's documents, in place in the candidates.
    expect(ask('panel:cardio thirdparty:yes').total).toBeGreaterThan(0);
    const want = [...Array(ix.docCount).keys()].filter((d) => ix.docPanel[d] === cardio);
    const got = ask('panel:cardio');
    expect(got.kNumbers).toEqual(want.slice(25, 50).map((d) => kNumberText(ix.docKNumber[d]!)));
    expect(got.facets).toEqual(plainFacets(ix, want));
  });

  it('puts ids in id order whether it sorts them or sets them as bits', () => {
    const ix = index();
    for (const size of [0, 1, 500, 40_000, ix.docCount]) {
      const ids = Uint32Array.from([...Array(ix.docCount).keys()].filter((d) => (d * 7919) % ix.docCount < size));
      const shuffled = Uint32Array.from([...ids].reverse());
      // Both sides of each caller's threshold (matching's tenth, the sorted column's 1/64).
      for (const sortUnder of [10, 64]) expect([...ascendingIds(shuffled, ix.docCount, sortUnder)]).toEqual([...ids]);
    }
    // Lists that share ids: each once.
    const a = Uint32Array.from([9, 70_000, 3, 64]);
    const b = Uint32Array.from([64, 3, 99_999, 31, 32]);
    expect([...idsByBits(ix.docCount, [a, b])]).toEqual([3, 9, 31, 32, 64, 70_000, 99_999]);
  });
});
