import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildSearchIndexData } from '../../build/index/search.ts';
import type { ClearanceRecord } from '../../src/contract/index.ts';
import { decodeSearchIndex, encodeSearchIndex } from '../../src/search/codec.ts';
import { checkWord, prepareWord, scanCostWithin, scanWord, Tier, tierOf } from '../../src/search/words.ts';
import { openSearchIndex, type SearchIndex } from '../../src/search/model.ts';
import { runSearch, type SearchRequest } from '../../src/search/engine.ts';
import { naiveSearch, record } from './naive.ts';

/** Builds, encodes (in small parts, to exercise the cutting), decodes and opens: the same path a server takes. */
function indexOf(records: ClearanceRecord[], deviceTypes: ReadonlyMap<string, string | null>): SearchIndex {
  const sorted = [...records].sort((a, b) => (a.kNumber < b.kNumber ? -1 : 1));
  const { header, parts } = encodeSearchIndex(buildSearchIndexData(sorted, deviceTypes), 64);
  return openSearchIndex(decodeSearchIndex(JSON.parse(JSON.stringify(header)), parts.map((p) => p.slice())));
}

const ALL: Omit<SearchRequest, 'query'> = { applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 50 };
const find = (index: SearchIndex, query: string, more: Partial<SearchRequest> = {}) => runSearch(index, { ...ALL, query, ...more });

const DEVICE_TYPES = new Map<string, string | null>([
  ['DTB', 'Implantable Pacemaker Pulse Generator'],
  ['DXY', 'Pacemaker Lead Adaptor'],
  ['JAK', 'System, X-Ray, Tomography, Computed'],
  ['FRN', 'Pump, Infusion'],
  ['QQQ', null],
]);

/** A small corpus where every rule of section 6 decides something. */
const CORPUS = [
  record('K100001', 'Cardiac Pacemaker', { applicant: 'Medtronic, Inc.', productCode: 'DTB', decisionDate: '2020-05-01' }),
  record('K100002', 'Pacemaker', { applicant: 'MEDTRONIC, INC.', productCode: 'DTB', decisionDate: '2020-05-01' }),
  record('K100003', 'Implantable Lead', { applicant: 'Acme Corp', productCode: 'DXY', decisionDate: '2019-01-01' }),
  record('K100004', 'Pacemakers Programmer', { applicant: 'Acme Corp', productCode: 'DXY', decisionDate: '2021-03-03' }),
  record('K100005', 'Café Crème Infusion Pump', { applicant: 'Pacemaker Systems Ltd', productCode: 'FRN', decisionDate: '1999-12-31' }),
  record('K100006', 'Pacemaker Analyzer', { applicant: 'Medtronic, Inc.', productCode: null, decisionDate: null }),
  record('K100007', 'CT Scanner', { applicant: null, productCode: 'JAK', decisionDate: '2020-05-01' }),
  record('K200001', 'Infusion Pumps Kit', { applicant: 'Medtronic, Inc.', productCode: 'FRN', decisionDate: '1985-06-15' }),
  record('K200002', 'Dental Cafe Chair', { applicant: 'medtronic,   inc.', productCode: 'QQQ', decisionDate: '1976-07-15' }),
  record('K123456', 'Pump K654321 Adapter', { applicant: 'Zeta', productCode: 'FRN', decisionDate: '2020-05-01' }),
];
const index = indexOf(CORPUS, DEVICE_TYPES);

describe('matching', () => {
  it.each([
    // every record
    ['', 10],
    ['   ', 10],
    [' , ; ', 10],
    // whole words and prefixes, any case, accents ignored
    ['pacemaker', 6],
    ['PACEMAKER', 6],
    ['pace', 6],
    ['cafe', 2],
    ['CAFÉ', 2],
    ['creme', 1],
    // every word must match (AND), in any of the fields
    ['infusion pump', 3],
    ['infusion pumps', 1],
    ['pump medtronic', 1],
    ['pacemaker zzz', 0],
    // through the product code's device type only: "tomography" is in JAK's type, not in the name
    ['tomography', 1],
    ['x-ray', 1],
    // product codes, whole or by prefix
    ['dtb', 2],
    ['dt', 2],
    ['FRN', 3],
    // K numbers, whole or by prefix, and K numbers written in a device name
    ['K100001', 1],
    ['k1000', 7],
    ['k2', 2],
    ['k', 10],
    ['K654321', 1],
    ['100001', 0],
    ['nothing', 0],
  ])('%j matches %i records', (query, total) => {
    const r = find(index, query);
    expect(r.total).toBe(total);
    expect(r.kNumbers).toHaveLength(total);
  });

  it('finds records through the device type of their product code', () => {
    // K100003 never says "pacemaker"; DXY's device type does.
    expect(find(index, 'pacemaker').kNumbers).toContain('K100003');
    expect(find(index, 'generator').kNumbers.sort()).toEqual(['K100001', 'K100002']);
  });
});

describe('the two ways of matching a word', () => {
  it('agree: scanning postings and checking one document give every document the same tier', () => {
    const words = ['pacemaker', 'pace', 'p', 'pump', 'infusion', 'k', 'k1', 'k100001', 'k654321', 'dt', 'dtb', 'frn', 'medtronic', 'inc', 'x', 'caf', 'zz'];
    for (const word of words) {
      const w = prepareWord(index, word);
      const tiers = new Uint8Array(index.docCount);
      const touched = scanWord(index, w, tiers);
      expect(new Set(touched).size).toBe(touched.length);
      expect(touched.length).toBe(tiers.filter((t) => t > 0).length);
      for (let d = 0; d < index.docCount; d++) expect([word, d, tierOf(index, w, d)]).toEqual([word, d, tiers[d]]);
      // Over candidates at once: the same documents kept, each with its tier's points added (here the tier itself).
      const docs = Uint32Array.from(tiers.keys());
      const scores = Uint32Array.from(docs, (d) => 10 * d);
      const kept = checkWord(index, w, docs, scores, Uint32Array.from([0, 1, 2, 3, 4]));
      const expected = [...tiers.keys()].filter((d) => tiers[d]! > 0);
      expect([word, Array.from(docs.subarray(0, kept))]).toEqual([word, expected]);
      expect(Array.from(scores.subarray(0, kept))).toEqual(expected.map((d) => 10 * d + tiers[d]!));
    }
  });

  it('agree within an id range: a scan of [lo, hi) marks exactly the whole scan\'s documents there, and counts them', () => {
    const words = ['pacemaker', 'pace', 'p', 'pump', 'infusion', 'k', 'k1', 'k100001', 'dt', 'dtb', 'frn', 'medtronic', 'inc', 'caf', 'a'];
    for (const word of words) {
      const w = prepareWord(index, word);
      const whole = new Uint8Array(index.docCount);
      scanWord(index, w, whole);
      for (let lo = 0; lo <= index.docCount; lo++) {
        for (let hi = lo; hi <= index.docCount; hi++) {
          const tiers = new Uint8Array(index.docCount);
          const touched = scanWord(index, w, tiers, lo, hi);
          const expected = whole.map((t, d) => (d >= lo && d < hi ? t : 0));
          expect([word, lo, hi, Array.from(tiers)]).toEqual([word, lo, hi, Array.from(expected)]);
          expect(touched.length).toBe(expected.filter((t) => t > 0).length);
          expect(scanCostWithin(index, w, lo, hi)).toBeGreaterThanOrEqual(touched.length);
          expect(scanCostWithin(index, w, lo, hi)).toBeLessThanOrEqual(w.scanCost);
        }
      }
    }
  });

  it('grades a word on one document by field first, then whole word over prefix', () => {
    const docOf = (k: string) => Array.from(index.docKNumber).indexOf(Number(k.slice(1)));
    const tier = (word: string, k: string) => tierOf(index, prepareWord(index, word), docOf(k));
    expect(tier('pacemaker', 'K100002')).toBe(Tier.primaryWhole);
    expect(tier('pacemaker', 'K100004')).toBe(Tier.primaryPrefix);
    expect(tier('pacemaker', 'K100003')).toBe(Tier.secondaryWhole); // DXY's device type
    expect(tier('pacemaker', 'K100005')).toBe(Tier.secondaryWhole); // the applicant
    expect(tier('pacemak', 'K100005')).toBe(Tier.secondaryPrefix);
    expect(tier('k100005', 'K100005')).toBe(Tier.primaryWhole);
    expect(tier('k10000', 'K100005')).toBe(Tier.primaryPrefix);
    expect(tier('frn', 'K100005')).toBe(Tier.primaryWhole);
    expect(tier('fr', 'K100005')).toBe(Tier.primaryPrefix);
    expect(tier('pump', 'K100005')).toBe(Tier.primaryWhole); // in the name and in FRN's type: the best counts
    expect(tier('pump', 'K100001')).toBe(Tier.none);
  });
});

describe('filters', () => {
  it.each<[Partial<SearchRequest>, string[]]>([
    [{ applicant: 'medtronic, inc.' }, ['K100001', 'K100002', 'K100006', 'K200001', 'K200002']],
    [{ applicant: '  MEDTRONIC,    INC. ' }, ['K100001', 'K100002', 'K100006', 'K200001', 'K200002']],
    [{ applicant: 'Medtronic' }, []],
    [{ applicant: 'nobody' }, []],
    [{ productCode: 'FRN' }, ['K100005', 'K123456', 'K200001']],
    [{ productCode: 'ZZZ' }, []],
    [{ yearFrom: 2020, yearTo: 2020 }, ['K100001', 'K100002', 'K100007', 'K123456']],
    [{ yearFrom: 2020 }, ['K100001', 'K100002', 'K100004', 'K100007', 'K123456']],
    [{ yearTo: 1985 }, ['K200001', 'K200002']],
    [{ yearFrom: 1900, yearTo: 9999 }, ['K100001', 'K100002', 'K100003', 'K100004', 'K100005', 'K100007', 'K123456', 'K200001', 'K200002']],
    [{ yearFrom: 2000, yearTo: 2018 }, []],
    [{ applicant: 'medtronic, inc.', yearFrom: 1980, productCode: 'FRN' }, ['K200001']],
  ])('%j keeps %j', (filters, kNumbers) => {
    const r = find(index, '', filters);
    expect([...r.kNumbers].sort()).toEqual(kNumbers);
    expect(r.total).toBe(kNumbers.length);
  });

  it('never lets a record without a decision date through a year filter, and keeps it without one', () => {
    expect(find(index, 'analyzer').kNumbers).toEqual(['K100006']);
    expect(find(index, 'analyzer', { yearFrom: 1900 }).total).toBe(0);
    expect(find(index, 'analyzer', { yearTo: 9999 }).total).toBe(0);
  });
});

describe('order', () => {
  it('without query words: decision date descending, null last, then K number descending', () => {
    expect(find(index, '').kNumbers).toEqual([
      'K100004', // 2021-03-03
      'K123456', // 2020-05-01, the largest K number of that day
      'K100007',
      'K100002',
      'K100001',
      'K100003', // 2019
      'K100005', // 1999
      'K200001', // 1985
      'K200002', // 1976
      'K100006', // no date
    ]);
  });

  it('ranks deviceName above applicant and device type, whole words above prefixes', () => {
    expect(find(index, 'pacemaker').kNumbers).toEqual([
      'K100002', // whole word in deviceName, 2020-05-01, larger K number
      'K100001', // whole word in deviceName, 2020-05-01
      'K100006', // whole word in deviceName, no date
      'K100004', // "pacemakers": a prefix match in deviceName
      'K100003', // whole word in the device type of DXY, 2019
      'K100005', // whole word in the applicant, 1999
    ]);
  });

  it('ranks a prefix match in deviceName above a whole-word match in the applicant', () => {
    // "pacemake" is a prefix of deviceName words (K100001, K100002, K100004, K100006) and of the applicant of K100005.
    expect(find(index, 'pacemake').kNumbers.slice(0, 4)).toEqual(['K100004', 'K100002', 'K100001', 'K100006']);
  });

  it('ranks a K number and a product code as deviceName is ranked', () => {
    expect(find(index, 'k654321').kNumbers).toEqual(['K123456']);
    expect(find(index, 'frn pump').kNumbers).toEqual(['K123456', 'K100005', 'K200001']);
  });

  it('adds up the words: two whole deviceName words beat one', () => {
    // K200001 has "infusion" whole and "pumps" (prefix of "pump"); K100005 has both whole; K123456 has "pump" whole
    // but "infusion" only through FRN's device type.
    expect(find(index, 'infusion pump').kNumbers).toEqual(['K100005', 'K200001', 'K123456']);
  });
});

describe('facets', () => {
  it('gives exactly three facets, over every match, with case variants of an applicant grouped', () => {
    const r = find(index, '', { pageSize: 1 });
    expect(r.facets).toEqual([
      {
        field: 'productCode',
        values: [
          { value: 'FRN', count: 3 },
          { value: 'DTB', count: 2 },
          { value: 'DXY', count: 2 },
          { value: 'JAK', count: 1 },
          { value: 'QQQ', count: 1 },
        ],
      },
      {
        field: 'applicant',
        values: [
          { value: 'Medtronic, Inc.', count: 5 }, // the most frequent of its three spellings
          { value: 'Acme Corp', count: 2 },
          { value: 'Pacemaker Systems Ltd', count: 1 },
          { value: 'Zeta', count: 1 },
        ],
      },
      {
        field: 'decisionYear',
        values: [
          { value: 2020, count: 4 },
          { value: 1976, count: 1 },
          { value: 1985, count: 1 },
          { value: 1999, count: 1 },
          { value: 2019, count: 1 },
          { value: 2021, count: 1 },
        ],
      },
    ]);
  });

  it('keeps at most ten values, count descending then value ascending', () => {
    const many = Array.from({ length: 30 }, (_, i) =>
      record(`K3${String(i).padStart(5, '0')}`, 'Widget', {
        productCode: `A${String.fromCharCode(65 + (i % 13))}A`,
        applicant: `Maker ${String.fromCharCode(65 + (i % 12))}`,
        decisionDate: `${2000 + (i % 11)}-01-01`,
      }),
    );
    const r = find(indexOf(many, new Map()), 'widget');
    expect(r.facets.map((f) => f.values.length)).toEqual([10, 10, 10]);
    expect(r.facets[0]!.values.slice(0, 5)).toEqual([
      { value: 'AAA', count: 3 },
      { value: 'ABA', count: 3 },
      { value: 'ACA', count: 3 },
      { value: 'ADA', count: 3 },
      { value: 'AEA', count: 2 },
    ]);
    expect(r.facets[2]!.values.map((v) => v.value)).toEqual([2000, 2001, 2002, 2003, 2004, 2005, 2006, 2007, 2008, 2009]);
  });

  it('counts facets of an empty result as empty lists', () => {
    expect(find(index, 'zzz').facets).toEqual([
      { field: 'productCode', values: [] },
      { field: 'applicant', values: [] },
      { field: 'decisionYear', values: [] },
    ]);
  });
});

describe('paging', () => {
  it('cuts the same order into pages, and a page past the end is empty with the right total', () => {
    for (const query of ['', 'pacemaker', 'pump', 'k']) {
      const whole = find(index, query).kNumbers;
      for (const pageSize of [1, 2, 3, 7]) {
        const pages: string[] = [];
        for (let page = 1; page <= Math.ceil(whole.length / pageSize) + 1; page++) {
          const r = find(index, query, { page, pageSize });
          expect(r.total).toBe(whole.length);
          pages.push(...r.kNumbers);
        }
        expect(pages).toEqual(whole);
      }
      expect(find(index, query, { page: 1_000_000, pageSize: 50 })).toMatchObject({ total: whole.length, kNumbers: [] });
    }
  });
});

describe('the index against a plain scan of the records', () => {
  const words = ['pump', 'pumps', 'infusion', 'lead', 'pacemaker', 'café', 'cafe', 'x-ray', 'kit', 'acme', 'beta'];
  const arbRecord = (k: number) =>
    fc.record({
      name: fc.array(fc.constantFrom(...words), { minLength: 0, maxLength: 3 }).map((ws) => ws.join(' ')),
      applicant: fc.constantFrom(null, 'Acme Corp', 'ACME  corp', 'acme corp', 'Beta Pump Co', 'Lead Inc', 'Medtronic Pacemaker'),
      productCode: fc.constantFrom(null, 'DTB', 'DXY', 'FRN', 'JAK', 'QQQ'),
      decisionDate: fc.constantFrom(null, '1976-07-15', '1990-01-01', '1990-12-31', '2020-05-01'),
    }).map((f) => record(`K${String(k).padStart(6, '0')}`, f.name, f));
  const arbCorpus = fc
    .uniqueArray(fc.integer({ min: 0, max: 999_999 }), { minLength: 1, maxLength: 40 })
    .chain((ks) => fc.tuple(...ks.map(arbRecord)));
  // Query words are whole words or prefixes of words found in names, applicants, device types, codes and K numbers.
  const pool = [...words, 'generator', 'tomography', 'adaptor', 'infusion', 'medtronic', 'beta', 'dtb', 'frn', 'k0', 'k00', 'zz'];
  const arbWord = fc.constantFrom(...pool).chain((w) => fc.integer({ min: 1, max: w.length }).map((l) => w.slice(0, l)));
  const arbQuery = fc.array(arbWord, { maxLength: 3 }).map((ws) => ws.join(' '));
  const sometimes = <T>(arb: fc.Arbitrary<T>) => fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: arb });
  const arbFilters = fc
    .record({
      applicant: sometimes(fc.constantFrom('acme corp', 'Lead Inc', 'none')),
      productCode: sometimes(fc.constantFrom('FRN', 'DTB', 'ZZZ')),
      yearFrom: sometimes(fc.constantFrom(1976, 1990)),
      yearTo: sometimes(fc.constantFrom(1990, 2020)),
    })
    .filter((f) => f.yearFrom === null || f.yearTo === null || f.yearFrom <= f.yearTo);

  it('gives the same matches, order, total and facets', () => {
    fc.assert(
      fc.property(arbCorpus, arbQuery, arbFilters, (corpus, query, filters) => {
        const ix = indexOf(corpus, DEVICE_TYPES);
        const expected = naiveSearch(corpus, DEVICE_TYPES, { query, ...filters });
        const got = runSearch(ix, { query, ...filters, page: 1, pageSize: 50 });
        expect(got.kNumbers).toEqual(expected.kNumbers);
        expect(got.total).toBe(expected.kNumbers.length);
        expect(got.facets).toEqual(expected.facets);
      }),
      { numRuns: 300 },
    );
  });

  it('gives each query of a run on one index what a scan gives (what a query borrows comes back clean)', () => {
    fc.assert(
      fc.property(arbCorpus, fc.array(fc.tuple(arbQuery, arbFilters), { minLength: 2, maxLength: 12 }), (corpus, asked) => {
        const ix = indexOf(corpus, DEVICE_TYPES);
        for (const [query, filters] of asked) {
          const expected = naiveSearch(corpus, DEVICE_TYPES, { query, ...filters });
          const got = runSearch(ix, { query, ...filters, page: 1, pageSize: 50 });
          expect(got.kNumbers).toEqual(expected.kNumbers);
          expect(got.facets).toEqual(expected.facets);
        }
      }),
      { numRuns: 150 },
    );
  });
});
