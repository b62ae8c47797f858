import { describe, expect, test } from 'vitest';
import { parseQuery } from '../../src/search/grammar.ts';

// The page's pure modules are plain JavaScript (no build step); the casts keep the typecheck off them.
type State = {
  q: string;
  productCode: string | null;
  applicant: string | null;
  from: string | null;
  to: string | null;
  quals: Record<string, string>;
  page: number;
  size: number;
  sort: string | null;
  record: string | null;
  lineage?: string | null;
};
type Caps = { sorts: string[]; decided: boolean; qualifiers: string[]; qualifierHelp: { name: string; accepts: string }[]; facetFields: string[]; exportUrl: string | null; stats: boolean };
type QualifierFacet = { field: string; qualifier: string; title: string; term(v: unknown): string; label?(v: unknown): string };
type StateModule = {
  EMPTY_STATE: State;
  parseHash(hash: string): State;
  toHash(state: State): string;
  withChanges(state: State, changes: Partial<State>): State;
  searchInput(state: State, caps?: Partial<Caps>): Record<string, unknown>;
  kNumberIn(query: string): string | null;
  topValues(counts: Record<string, number>, limit?: number, numeric?: boolean): { value: string | number; count: number }[];
  yearsBetween(from: number | null, to: number | null, minYear: number, maxYear: number): string[];
  freshnessOf(lastSuccessfulSyncAt: string | null, now: number, maxAgeHours?: number): string;
  dateBound(value: string | null, end: boolean): string | null;
  wholeYear(state: State): number | null;
  rangeNeedsDays(state: State): boolean;
  reviewDays(received: string | null, decided: string | null): number | null;
  summaryPdfUrl(kNumber: string, statementOrSummary: string | null): string | null;
  thinYears(counts: { year: number | null; count: number }[], bounds?: { minYear?: number; maxYear?: number }): { from: number; to: number; count: number }[];
  capsOf(meta: unknown): Caps;
  downloadsOf(meta: unknown, snapshotBase: URL): { name: string; href: string; bytes: number | null }[];
  suggestionsFor(q: string, qualifiers?: string[], limit?: number): { q: string; why: string }[];
  QUALIFIER_FACETS: QualifierFacet[];
  qualifierChoice(state: State, facet: QualifierFacet, value: unknown): { on: boolean; next: State };
  exportUrlOf(base: URL, input: Record<string, unknown>): URL;
  feedUrlOf(base: URL, input: Record<string, unknown>): URL;
};
type CsvModule = {
  csvText(records: Record<string, unknown>[]): string;
  exportFileName(search: Record<string, unknown>, snapshotId: string | null): string;
  CSV_COLUMNS: string[];
};
type ViewModule = { plainWarning(w: string): string };
const m = (await import('../../public/js/state.js' as string)) as StateModule;
const csv = (await import('../../public/js/csv-format.js' as string)) as CsvModule;
const view = (await import('../../public/js/view.js' as string)) as ViewModule;

describe('the page state in the location hash', () => {
  test.each([
    ['#', m.EMPTY_STATE],
    ['', m.EMPTY_STATE],
    ['#q=balloon+catheter&code=dqy&applicant=Acme%20Corp&from=1990&to=1995&page=3&size=25&sort=decisionDate%3Aasc&record=k123456',
      { q: 'balloon catheter', productCode: 'DQY', applicant: 'Acme Corp', from: '1990-01-01', to: '1995-12-31', quals: {}, page: 3, size: 25, sort: 'decisionDate:asc', record: 'K123456', lineage: null }],
    // The lineage view of a K or De Novo number, either direction; without a record, or another word, none.
    ['#record=den200012&lineage=descendants', { ...m.EMPTY_STATE, record: 'DEN200012', lineage: 'descendants' }],
    ['#record=K123456&lineage=predicates', { ...m.EMPTY_STATE, record: 'K123456', lineage: 'predicates' }],
    ['#lineage=predicates', m.EMPTY_STATE],
    ['#record=K123456&lineage=sideways', { ...m.EMPTY_STATE, record: 'K123456' }],
    ['#panel=General%2C+Plastic+Surgery&class=2&thirdparty=yes&country=DE&decision=%22x%22&nope=1',
      { ...m.EMPTY_STATE, quals: { panel: 'General, Plastic Surgery', class: '2', thirdparty: 'yes', country: 'DE' } }],
    ['#from=2024-01-15&to=2024-03-31', { ...m.EMPTY_STATE, from: '2024-01-15', to: '2024-03-31' }],
    ['#code=DQ1&from=abc&to=1850&page=0&size=20&sort=price&record=K12', m.EMPTY_STATE],
    ['#from=2023-02-30&to=2024-13-01', m.EMPTY_STATE],
    ['#page=2.5&applicant=%20%20', m.EMPTY_STATE],
    ['#from=2000&to=1990', { ...m.EMPTY_STATE, from: '1990-12-31', to: '2000-01-01' }],
  ])('%s', (hash, expected) => {
    expect(m.parseHash(hash)).toEqual(expected);
  });

  test('toHash and parseHash round-trip, leaving defaults out and whole years short', () => {
    const state = { ...m.EMPTY_STATE, q: 'stent & graft', productCode: 'MAF', applicant: 'A, B & C', to: '2001-12-31', quals: { panel: 'Cardiovascular', summary: 'no' }, page: 2, size: 50, sort: 'kNumber:asc' };
    const hash = m.toHash(state);
    expect(hash).not.toContain('from=');
    expect(hash).toContain('to=2001&');
    expect(m.parseHash(hash)).toEqual(state);
    const days = { ...m.EMPTY_STATE, from: '2024-01-15', to: '2024-03-31' };
    expect(m.toHash(days)).toBe('#from=2024-01-15&to=2024-03-31');
    expect(m.parseHash(m.toHash(days))).toEqual(days);
    expect(m.toHash(m.EMPTY_STATE)).toBe('#');
    const lineage = { ...state, record: 'K123456', lineage: 'descendants' };
    expect(m.toHash(lineage)).toMatch(/&record=K123456&lineage=descendants$/);
    expect(m.parseHash(m.toHash(lineage))).toEqual(lineage);
    expect(m.toHash({ ...m.EMPTY_STATE, lineage: 'predicates' })).toBe('#');
  });

  test('changing what is searched (page size and sort included) goes back to page 1 and closes the record', () => {
    const s = { ...m.EMPTY_STATE, q: 'stent', page: 4, record: 'K123456' };
    expect(m.withChanges(s, { productCode: 'MAF' })).toEqual({ ...s, productCode: 'MAF', page: 1, record: null });
    expect(m.withChanges(s, { size: 25 })).toEqual({ ...s, size: 25, page: 1, record: null });
    expect(m.withChanges(s, { sort: 'decisionDate:asc' })).toEqual({ ...s, sort: 'decisionDate:asc', page: 1, record: null });
    expect(m.withChanges(s, { quals: { class: '3' } })).toEqual({ ...s, quals: { class: '3' }, page: 1, record: null });
    expect(m.withChanges(s, { page: 5 })).toEqual({ ...s, page: 5 });
    expect(m.withChanges(s, { q: 'stent' })).toEqual(s);
    // A new search closes a lineage view too.
    expect(m.withChanges({ ...s, lineage: 'predicates' }, { q: 'graft' })).toEqual({ ...s, q: 'graft', page: 1, record: null, lineage: null });
  });

  test('the API input: whole years for the contract, a decided: qualifier for days when the service takes one', () => {
    expect(m.searchInput({ ...m.EMPTY_STATE, q: 'x', from: '1990-01-01' })).toEqual({
      query: 'x', applicant: null, productCode: null, yearFrom: 1990, yearTo: null, page: 1, pageSize: 10,
    });
    const days = { ...m.EMPTY_STATE, q: 'stent', from: '2024-01-15', to: '2024-03-31', size: 25, sort: 'decisionDate:asc' };
    expect(m.searchInput(days)).toMatchObject({ query: 'stent', yearFrom: 2024, yearTo: 2024, pageSize: 25 });
    expect(m.searchInput(days)).not.toHaveProperty('sort');
    expect(m.searchInput(days, { decided: true, sorts: ['relevance', 'decisionDate:asc'] })).toMatchObject({
      query: 'stent decided:2024-01-15..2024-03-31', yearFrom: null, yearTo: null, sort: 'decisionDate:asc',
    });
    // Whole years need no qualifier even when the service takes one.
    expect(m.searchInput({ ...days, from: '2024-01-01', to: '2024-12-31' }, { decided: true })).toMatchObject({ query: 'stent', yearFrom: 2024, yearTo: 2024 });
    expect(m.rangeNeedsDays({ ...m.EMPTY_STATE, from: '2024-01-01', to: '2025-12-31' })).toBe(false);
    expect(m.wholeYear({ ...m.EMPTY_STATE, from: '2024-01-01', to: '2024-12-31' })).toBe(2024);
    expect(m.wholeYear({ ...m.EMPTY_STATE, from: '2024-01-01', to: '2025-12-31' })).toBeNull();
  });

  test('capabilities: sorts only when a request can choose one, days only with the decided qualifier', () => {
    const today = { title: 't', totalRecords: 1, supportedFilters: ['query', 'applicant', 'productCode', 'yearFrom', 'yearTo'], supportedSorts: ['relevance', 'decisionDate:desc'], sourceNotes: [] };
    expect(m.capsOf({ data: today })).toEqual({ sorts: [], decided: false, qualifiers: [], qualifierHelp: [], facetFields: [], exportUrl: null, stats: false });
    expect(m.capsOf(today)).toEqual(m.capsOf({ data: today }));
    const later = { ...today, qualifiers: [{ name: 'decided:', accepts: '…' }, { name: 'class:', accepts: '…' }], facetFields: ['productCode', 'deviceClass'] };
    expect(m.capsOf({ data: later })).toEqual({ sorts: ['relevance', 'decisionDate:desc'], decided: true, qualifiers: ['decided', 'class'], qualifierHelp: [{ name: 'decided', accepts: '…' }, { name: 'class', accepts: '…' }], facetFields: ['productCode', 'deviceClass'], exportUrl: 'export', stats: true });
  });

  test('qualifier filters: each goes into the query as its qualifier, when the service takes it, with the facets to count', () => {
    const s = { ...m.EMPTY_STATE, q: 'catheter', quals: { panel: 'General, Plastic Surgery', class: '2', thirdparty: 'no' } };
    expect(m.searchInput(s)).toMatchObject({ query: 'catheter' });
    expect(m.searchInput(s)).not.toHaveProperty('facets');
    const caps = { qualifiers: ['panel', 'class', 'thirdparty', 'decided'], decided: true, facetFields: ['productCode', 'applicant', 'decisionYear', 'advisoryCommittee', 'deviceClass', 'countryCode'] };
    const input = m.searchInput({ ...s, from: '2024-02-01' }, caps);
    expect(input.query).toBe('catheter panel:"General, Plastic Surgery" class:2 thirdparty:no decided:>=2024-02-01');
    expect(input.facets).toEqual([
      { field: 'productCode', size: 10, order: 'count' },
      { field: 'applicant', size: 10, order: 'count' },
      { field: 'decisionYear', size: null, order: 'value' },
      { field: 'advisoryCommittee', size: null, order: 'count' },
      { field: 'deviceClass', size: null, order: 'count' },
    ]);
    expect(m.searchInput({ ...m.EMPTY_STATE, to: '2020-06-30' }, caps).query).toBe('decided:<=2020-06-30');
  });

  test('a qualifier facet value selects its filter, and selected again clears it', () => {
    const facet = (field: string) => m.QUALIFIER_FACETS.find((f) => f.field === field)!;
    const s = { ...m.EMPTY_STATE, q: 'pump', page: 3 };
    const panel = m.qualifierChoice(s, facet('advisoryCommittee'), 'General, Plastic Surgery');
    expect(panel).toEqual({ on: false, next: { ...s, page: 1, quals: { panel: 'General, Plastic Surgery' } } });
    expect(m.qualifierChoice(panel.next, facet('advisoryCommittee'), 'General, Plastic Surgery')).toEqual({ on: true, next: { ...panel.next, quals: {} } });
    expect(m.qualifierChoice(s, facet('thirdParty'), true).next.quals).toEqual({ thirdparty: 'yes' });
    expect(m.qualifierChoice(s, facet('statementOrSummary'), 'Statement').next.quals).toEqual({ summary: 'no' });
    expect(facet('deviceClass').label!('2')).toBe('Class II');
  });

  test('the export URL carries the search and asks for CSV', () => {
    const url = m.exportUrlOf(new URL('http://h/v1/export'), { query: 'stent class:2', applicant: null, productCode: 'DQY', yearFrom: 2020, yearTo: null, page: 2, pageSize: 25, sort: 'decisionDate:asc', facets: [] });
    expect(url.href).toBe('http://h/v1/export?query=stent+class%3A2&productCode=DQY&yearFrom=2020&sort=decisionDate%3Aasc&format=csv');
  });

  test("a search's feed URL carries its filters but neither sort nor page", () => {
    const url = m.feedUrlOf(new URL('http://h/v1/feed'), { query: 'stent class:2', applicant: 'Acme', productCode: 'DQY', yearFrom: 2020, yearTo: null, page: 2, pageSize: 25, sort: 'decisionDate:asc', facets: [] });
    expect(url.href).toBe('http://h/v1/feed?query=stent+class%3A2&applicant=Acme&productCode=DQY&yearFrom=2020');
  });
});

describe('helpers of the page', () => {
  test.each([
    [' k123456 ', 'K123456'],
    ['K123456 stent', null],
    ['K12345', null],
    ['DEN123456', null],
  ])('kNumberIn(%j)', (q, k) => expect(m.kNumberIn(q)).toBe(k));

  test('facet values: count descending, then value ascending, no zeros, at most the limit', () => {
    expect(m.topValues({ B: 2, A: 2, C: 5, D: 0, E: 1 }, 3)).toEqual([
      { value: 'C', count: 5 },
      { value: 'A', count: 2 },
      { value: 'B', count: 2 },
    ]);
  });

  test('a year range becomes the years it covers, within the bounds', () => {
    expect(m.yearsBetween(1990, 1992, 1900, 2026)).toEqual(['1990', '1991', '1992']);
    expect(m.yearsBetween(3000, null, 1900, 2026)).toEqual([]);
  });

  test('date bounds: a year is its first or last day, a day must exist, nothing before 1900', () => {
    expect([m.dateBound('1990', false), m.dateBound('1990', true)]).toEqual(['1990-01-01', '1990-12-31']);
    expect(m.dateBound('2024-02-29', false)).toBe('2024-02-29');
    expect([m.dateBound('2023-02-29', false), m.dateBound('1899-12-31', true), m.dateBound('', false), m.dateBound(null, true)]).toEqual([null, null, null, null]);
  });

  test('freshness follows the contract: unknown without a sync, current within the maximum age, stale after', () => {
    const now = Date.parse('2026-01-03T00:00:00Z');
    expect(m.freshnessOf(null, now)).toBe('unknown');
    expect(m.freshnessOf('2026-01-01T00:00:00Z', now)).toBe('current');
    expect(m.freshnessOf('2026-01-01T00:00:00Z', now + 1)).toBe('stale');
  });

  test("each qualifier facet writes a term the service's grammar reads as that qualifier", () => {
    // A value of each field as the service counts it.
    const values: Record<string, unknown> = {
      advisoryCommittee: 'General Hospital', deviceClass: '2', decisionCode: 'SESE', submissionType: 'Traditional', thirdParty: true,
      expeditedReview: false, statementOrSummary: 'Summary', countryCode: 'DE', state: 'MN',
    };
    expect(m.QUALIFIER_FACETS.map((f) => f.field).sort()).toEqual(Object.keys(values).sort());
    for (const f of m.QUALIFIER_FACETS) {
      const parsed = parseQuery(`${f.qualifier}:${f.term(values[f.field])}`);
      expect(parsed.clauses.flat().map((t) => (t.kind === 'field' ? t.qualifier.field : t.kind))).toEqual([f.qualifier]);
    }
  });

  test('review days: decision minus receipt, null when either is missing', () => {
    expect(m.reviewDays('2024-01-01', '2024-03-01')).toBe(60);
    expect(m.reviewDays('2023-12-31', '2024-01-01')).toBe(1);
    expect([m.reviewDays(null, '2024-01-01'), m.reviewDays('2024-01-01', null)]).toEqual([null, null]);
  });

  test("FDA's summary PDF: by receipt year from 2002, in pdf/ for 1996-2001, none before 1996 or without a document", () => {
    expect(m.summaryPdfUrl('K213737', 'Summary')).toBe('https://www.accessdata.fda.gov/cdrh_docs/pdf21/K213737.pdf');
    expect(m.summaryPdfUrl('K081234', 'Statement')).toBe('https://www.accessdata.fda.gov/cdrh_docs/pdf8/K081234.pdf');
    expect(m.summaryPdfUrl('K023456', 'Summary')).toBe('https://www.accessdata.fda.gov/cdrh_docs/pdf2/K023456.pdf');
    expect(m.summaryPdfUrl('K991234', 'Summary')).toBe('https://www.accessdata.fda.gov/cdrh_docs/pdf/K991234.pdf');
    expect(m.summaryPdfUrl('K011234', 'Summary')).toBe('https://www.accessdata.fda.gov/cdrh_docs/pdf/K011234.pdf');
    expect([m.summaryPdfUrl('K951234', 'Summary'), m.summaryPdfUrl('K213737', null)]).toEqual([null, null]);
  });

  test('thin years: runs of years under a tenth of the median year, missing years counted as zero', () => {
    const counts = [
      { year: 1988, count: 900 }, { year: 1989, count: 1000 }, { year: 1990, count: 1100 },
      { year: 1991, count: 5 }, { year: 1993, count: 3 },
      { year: 2015, count: 800 }, { year: 2016, count: 60 }, { year: 2017, count: 950 }, { year: null, count: 7 },
    ];
    expect(m.thinYears(counts)).toEqual([{ from: 1991, to: 2014, count: 8 }, { from: 2016, to: 2016, count: 60 }]);
    expect(m.thinYears([{ year: 2000, count: 10 }, { year: 2001, count: 12 }])).toEqual([]);
    expect(m.thinYears([])).toEqual([]);
  });

  test("service warnings in a reader's words", () => {
    expect(view.plainWarning('The last sync, at 2026-01-02T03:00:00Z, failed: getaddrinfo ENOTFOUND www.accessdata.fda.gov. Serving the snapshot built at 2026-01-01.')).toMatch(/^The last update from FDA did not complete/);
    expect(view.plainWarning('The data was last synced from FDA at 2026-01-01T00:00:00Z, more than 48 hours ago, so recent clearances may be missing.')).toMatch(/not been updated from FDA recently/);
    expect(view.plainWarning('something else')).not.toMatch(/ENOTFOUND|sync/);
  });
});

describe('the bulk downloads meta names', () => {
  const base = new URL('https://example.org/app/snapshot/');
  const parquet = { format: 'parquet', path: 'downloads/clearances.parquet', mediaType: 'application/vnd.apache.parquet', bytes: 5_243_557, sha256: 'a'.repeat(64) };
  const sqlite = { format: 'sqlite', path: 'downloads/clearances.sqlite', mediaType: 'application/vnd.sqlite3', bytes: 20_553_728, sha256: 'b'.repeat(64) };

  test('are links beside the snapshot, named by format, with their size, from the answer or meta.json', () => {
    const expected = [
      { name: 'Parquet', href: 'https://example.org/app/snapshot/downloads/clearances.parquet', bytes: 5_243_557 },
      { name: 'SQLite', href: 'https://example.org/app/snapshot/downloads/clearances.sqlite', bytes: 20_553_728 },
    ];
    expect(m.downloadsOf({ data: { downloads: [parquet, sqlite] } }, base)).toEqual(expected);
    expect(m.downloadsOf({ downloads: [parquet, sqlite] }, base)).toEqual(expected);
  });

  test('leave out what is not a plain file under downloads/, and say nothing for a meta without them', () => {
    expect(m.downloadsOf({ title: 'x' }, base)).toEqual([]);
    expect(m.downloadsOf(null, base)).toEqual([]);
    const odd = [{ ...parquet, path: '../manifest.json' }, { ...parquet, path: 'https://elsewhere.example/x.parquet' }, { ...sqlite, format: 7 }, { ...sqlite, bytes: -1 }];
    expect(m.downloadsOf({ downloads: odd }, base)).toEqual([{ name: 'SQLite', href: 'https://example.org/app/snapshot/downloads/clearances.sqlite', bytes: null }]);
  });
});

describe('suggestions for a search that finds nothing', () => {
  const QUALS = ['applicant', 'device', 'code', 'panel', 'class', 'decided'];
  const qs = (q: string) => m.suggestionsFor(q, QUALS).map((x) => x.q);
  test.each([
    ['catheter NOT foley', ['catheter -foley']],
    ['catheter not foley', ['catheter -foley']],
    ['applicant:"c.r. bard"', ['c.r. bard', 'applicant:c.r. applicant:bard']],
    ['catheter or foley', ['catheter OR foley']],
    ['catheter and balloon', ['catheter balloon', 'balloon', 'catheter']],
    ['company:bard stent', ['applicant:bard stent', 'bard stent']],
    ['aplicant:bard', ['applicant:bard', 'bard']],
    ['foo:bar', ['bar']],
    ['"balloon catheter"', ['balloon catheter']],
    ['balloon catheter foley', ['catheter foley', 'balloon foley', 'balloon catheter']],
    ['catheter', []],
    ['', []],
  ])('%j → %j', (q, want) => {
    expect(qs(q)).toEqual(want);
  });
  test('each says why, and there are at most `limit`', () => {
    expect(m.suggestionsFor('catheter NOT foley', QUALS)[0]!.why).toMatch(/NOT is not an operator/);
    expect(m.suggestionsFor('a b c d e f g h', QUALS, 3)).toHaveLength(3);
    // Without qualifiers (a service with the contract's search only) no qualifier is suggested.
    expect(m.suggestionsFor('company:bard', [])).toEqual([]);
  });
});

describe('the CSV download', () => {
  test('RFC 4180: a header row, quoting where needed, CRLF, a byte-order mark for Excel, formulas not run', () => {
    const text = csv.csvText([
      { kNumber: 'K000001', deviceName: 'Catheter, "Foley"', applicant: 'Ünïcode GmbH', productCode: 'EZL', decisionDate: '2024-03-01', receivedDate: '2024-01-01', reviewDays: 60, thirdParty: false, expeditedReview: null, source: { sourceUrl: 'https://x/K000001' } },
      { kNumber: 'K000002', deviceName: 'two\nlines', applicant: '=HYPERLINK("x")', productCode: null, decisionDate: null, receivedDate: null, contact: '-AMYLASE', source: { sourceUrl: 'https://x/K000002' } },
    ]);
    expect(text.startsWith('\ufeffkNumber,deviceName,applicant,')).toBe(true);
    const lines = text.slice(1).split('\r\n');
    expect(lines).toHaveLength(4);
    expect(lines[3]).toBe('');
    expect(lines[0]!.split(',')).toEqual(csv.CSV_COLUMNS);
    expect(csv.CSV_COLUMNS).toHaveLength(24);
    expect(lines[1]).toBe(`K000001,"Catheter, ""Foley""",Ünïcode GmbH,EZL,2024-03-01,,,2024-01-01,60,,,,,false${','.repeat(10)}https://x/K000001`);
    expect(lines[2]).toBe(`K000002,"two\nlines","'=HYPERLINK(""x"")"${','.repeat(13)}'-AMYLASE${','.repeat(8)}https://x/K000002`);
  });

  test('the file name says the search', () => {
    const search = { query: '', applicant: null, productCode: null, yearFrom: null, yearTo: null };
    expect(csv.exportFileName(search, 'abc123')).toBe('device-510k-all-abc123.csv');
    expect(csv.exportFileName({ ...search, query: 'catheter -foley' }, 'abc123')).toBe('device-510k-catheter-not-foley-abc123.csv');
    expect(csv.exportFileName({ ...search, query: 'Cathéter', productCode: 'DQY', yearFrom: 1990, yearTo: 2000, sort: 'decisionDate:desc' }, null))
      .toBe('device-510k-catheter-code-dqy-1990-2000-by-decisiondate-desc.csv');
    expect(csv.exportFileName({ ...search, applicant: 'C.R. Bard, Inc.', yearFrom: 2001, yearTo: 2001 }, 'x')).toBe('device-510k-applicant-c-r-bard-inc-2001-x.csv');
    expect(csv.exportFileName({ ...search, query: 'a '.repeat(100) }, 'x')).toMatch(/^device-510k-(a-){39}a-x\.csv$/);
  });
});
