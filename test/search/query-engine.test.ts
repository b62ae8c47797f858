import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildSearchIndexData } from '../../build/index/search.ts';
import { FACET_FIELDS, SORTS, toClearanceRecord, type ClearanceRecord } from '../../src/contract/index.ts';
import { decodeSearchIndex, encodeSearchIndex } from '../../src/search/codec.ts';
import { parseQuery, QueryError } from '../../src/search/grammar.ts';
import { openSearchIndex, type SearchIndex } from '../../src/search/model.ts';
import { runSearch, runSearchSliced, type SearchRequest } from '../../src/search/engine.ts';
import { SearchCancelled } from '../../src/search/slices.ts';
import { FacetValuesError } from '../../src/search/facet-fields.ts';
import { compareKeys, orderPage, orderRange, pickPage, sortKey, type Way } from '../../src/search/sort.ts';
import { naiveExtended, type NaiveEdges } from './naive-query.ts';
import { mergeEdges } from '../../build/lineage/merge.ts';
import type { EdgeInput } from '../../build/lineage/read.ts';

/** An edge as an edge file gives it: a row of a source of one kind. */
type Edge = { device: string; predicate: string; kind: 'predicate' | 'named' };

/** Builds, encodes in small parts, decodes and opens, as a server does; the edges merged as the build merges them. */
function indexOf(records: ClearanceRecord[], types: ReadonlyMap<string, string | null>, classes: ReadonlyMap<string, string | null>, edges: readonly Edge[] = []): SearchIndex {
  const sorted = [...records].sort((a, b) => (a.kNumber < b.kNumber ? -1 : 1));
  const input = (kind: 'predicate' | 'named'): EdgeInput => {
    const rows = edges.filter((e) => e.kind === kind).map(({ device, predicate }) => ({ device, predicate }));
    return { folder: kind, source: kind === 'predicate' ? 'summary' : 'other', kind, sha256: '0'.repeat(64), rows: rows.length, edges: rows, skipped: {}, read: null };
  };
  const merged = mergeEdges([input('named'), input('predicate')]);
  const { header, parts } = encodeSearchIndex(buildSearchIndexData(sorted, types, classes, { forward: merged.forward, origins: merged.origins }), 64);
  return openSearchIndex(decodeSearchIndex(JSON.parse(JSON.stringify(header)), parts.map((p) => p.slice())));
}

/** The edges by device, from the rows themselves (repeats kept: the plain scan counts a device once all the same). */
function naiveEdges(edges: readonly Edge[]): NaiveEdges {
  const out = new Map<string, { to: string; kind: 'predicate' | 'named' }[]>();
  for (const e of edges) out.set(e.device, [...(out.get(e.device) ?? []), { to: e.predicate, kind: e.kind }]);
  return out;
}

/** Devices cited from outside the corpus too (a predicate the snapshot has no record of, a De Novo number). */
const CITED = ['K000001', 'K000002', 'DEN200012'];

const TYPES = new Map<string, string | null>([
  ['DTB', 'Implantable Pacemaker Pulse Generator'],
  ['DQY', 'Catheter, Percutaneous'],
  ['FRN', 'Pump, Infusion'],
  ['QQQ', null],
]);
const CLASSES = new Map<string, string | null>([
  ['DTB', '3'],
  ['DQY', '2'],
  ['FRN', '2'],
  ['QQQ', 'U'],
]);
const DECISIONS: Record<string, string> = { SESE: 'Substantially Equivalent', SESK: 'Substantially Equivalent - Kit', SESU: 'Substantially Equivalent - With Limitations' };

const words = ['foley', 'catheter', 'balloon', 'pump', 'infusion', 'lead', 'pacemaker', 'x-ray', 'kit', 'urethral'];
const arbRecord = (k: number) =>
  fc
    .record({
      name: fc.array(fc.constantFrom(...words), { minLength: 0, maxLength: 4 }).map((ws) => ws.join(' ')),
      applicant: fc.constantFrom(null, 'C.R. Bard, Inc.', 'BARD ACCESS SYSTEMS', 'Bard Co', 'Cook Inc', 'Covidien LLC', 'Acme Corp', 'Inc Partners'),
      productCode: fc.constantFrom(null, 'DTB', 'DQY', 'FRN', 'QQQ'),
      decisionDate: fc.constantFrom(null, '1976-07-15', '2023-12-31', '2024-01-01', '2024-02-29', '2024-03-31', '2024-04-01'),
      receivedDate: fc.constantFrom(null, '1976-01-02', '2023-06-01', '2023-12-01', '2024-01-01'),
      advisoryCommittee: fc.constantFrom(null, 'Cardiovascular', 'Gastroenterology/Urology', 'General Hospital'),
      decisionCode: fc.constantFrom(null, 'SESE', 'SESK', 'SESU'),
      submissionType: fc.constantFrom(null, 'Traditional', 'Special', 'Abbreviated'),
      thirdParty: fc.constantFrom(null, true, false),
      expeditedReview: fc.constantFrom(null, true, false),
      statementOrSummary: fc.constantFrom(null, 'Summary', 'Statement'),
      countryCode: fc.constantFrom(null, 'US', 'DE', 'IE'),
      state: fc.constantFrom(null, 'MN', 'UT', 'NY'),
    })
    .map((f) =>
      toClearanceRecord(`K${String(k).padStart(6, '0')}`, {
        ...f,
        deviceName: f.name,
        decisionDescription: f.decisionCode === null ? null : DECISIONS[f.decisionCode]!,
        classificationCommittee: null,
        contact: null,
        street1: null,
        street2: null,
        city: null,
        zipCode: null,
        postalCode: null,
      }),
    );
const arbCorpus = fc.uniqueArray(fc.integer({ min: 0, max: 999_999 }), { minLength: 1, maxLength: 40 }).chain((ks) => fc.tuple(...ks.map(arbRecord)));
/** A corpus with edges among its records and to devices outside it, of both kinds, some given twice, some cycles. */
const arbLinked = arbCorpus.chain((corpus) => {
  const numbers = [...corpus.map((r) => r.kNumber), ...CITED];
  const edge = fc.record({
    device: fc.constantFrom(...corpus.map((r) => r.kNumber), 'K999999'),
    predicate: fc.constantFrom(...numbers),
    kind: fc.constantFrom('predicate' as const, 'named' as const),
  });
  return fc.tuple(fc.constant(corpus), fc.array(edge, { maxLength: 60 }));
});

/** Clauses of every kind, each of which decides something on the corpus above. */
const CLAUSES = [
  'catheter', 'cath', '-foley', '-"balloon catheter"', '"balloon catheter"', '"foley"', 'foley OR pump', 'x-ray', '-x-ray',
  'applicant:bard', 'applicant:"c.r. bard, inc."', 'applicant:co', 'applicant:inc', '-applicant:cook', 'applicant:"bard access"',
  'device:cath', 'device:"foley catheter"', 'code:DQY', 'code:dtb OR code:frn', '-code:QQQ', 'panel:cardio', 'panel:"general hospital"',
  'class:2', 'class:III', 'class:u', 'decision:SESE', 'decision:"substantially equivalent - kit"', 'decision:substantially',
  'type:special', 'type:trad', 'thirdparty:yes', 'thirdparty:no', 'expedited:no', 'summary:yes', 'summary:no', 'country:DE',
  '-country:US', 'state:mn', 'decided:2024-01-01..2024-03-31', 'decided:2024', 'decided:<2024', 'decided:>=2024-02', 'decided:..2023',
  'received:>=2023-06', 'received:2023-06-01', 'reviewdays:>180', 'reviewdays:<=90', 'reviewdays:0..31', 'pacemaker OR code:DQY',
  'predicate:K000001', 'predicate:k000002', 'predicate:DEN200012', '-predicate:K000001', 'predicate:K000001 OR predicate:DEN200012',
  'predicate:K000002 OR code:DQY', 'kind:predicate', 'kind:named', 'predicate:K999998',
  'lead OR "infusion pump"', 'kit', 'k0', '-country:US OR thirdparty:yes', 'class:2 OR -state:MN', '-decided:2024 OR received:2023',
  '-reviewdays:<=90', '-received:>=2023-06', 'received:<2023-06-15', 'reviewdays:<0', 'code:dqy OR applicant:cook OR panel:cardio', '-applicant:"c.r. bard, inc."', 'code:ZZZ', '-code:ZZZ',
];
// One kind: a query (the grammar refuses two different ones).
const arbQuery = fc
  .array(fc.constantFrom(...CLAUSES), { maxLength: 3 })
  .map((cs) => cs.join(' '))
  .filter((q) => !(q.includes('kind:predicate') && q.includes('kind:named')));
const arbFacets = fc.option(
  fc.uniqueArray(fc.constantFrom(...FACET_FIELDS), { minLength: 1, maxLength: 4 }).chain((fields) =>
    fc.tuple(...fields.map((field) => fc.record({ field: fc.constant(field), size: fc.constantFrom(null, 1, 2, 10), order: fc.constantFrom('count' as const, 'value' as const) }))),
  ),
  { nil: undefined },
);

describe('the query language against a plain scan', () => {
  it('gives the same matches, order, total, facets and stats for every qualifier, sort and facet', () => {
    fc.assert(
      fc.property(
        arbLinked,
        arbQuery,
        fc.constantFrom(undefined, ...SORTS),
        arbFacets,
        fc.boolean(),
        fc.constantFrom<[string | null, string | null, number | null]>([null, null, null], ['c.r. bard, inc.', null, null], [null, 'DQY', 2024]),
        ([corpus, edges], query, sort, facets, stats, [applicant, productCode, yearFrom]) => {
          const ix = indexOf(corpus, TYPES, CLASSES, edges);
          const req = { query, applicant, productCode, yearFrom, yearTo: null };
          const expected = naiveExtended(corpus, TYPES, CLASSES, { ...req, sort, facets, stats }, naiveEdges(edges));
          const got = runSearch(ix, { ...req, page: 1, pageSize: 50, ...(sort && { sort }), ...(facets && { facets }), ...(stats && { stats }) } as SearchRequest);
          expect(got.kNumbers).toEqual(expected.kNumbers);
          expect(got.total).toBe(expected.kNumbers.length);
          if (facets) expect(got.facets).toEqual(expected.facets);
          if (stats) expect(got.stats).toEqual(expected.stats);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('pages a sorted order into the same whole', () => {
    fc.assert(
      fc.property(arbCorpus, arbQuery, fc.constantFrom(...SORTS), (corpus, query, sort) => {
        const ix = indexOf(corpus, TYPES, CLASSES);
        const base = { query, applicant: null, productCode: null, yearFrom: null, yearTo: null, sort };
        const whole = naiveExtended(corpus, TYPES, CLASSES, base).kNumbers;
        const seen: string[] = [];
        for (let page = 1; page <= Math.ceil(whole.length / 3) + 1; page++) seen.push(...runSearch(ix, { ...base, page, pageSize: 3 }).kNumbers);
        expect(seen).toEqual(whole);
      }),
      { numRuns: 100 },
    );
  });
});

describe('the values a facet may list', () => {
  /**
   * What a request with `facetValuesMax: max` must give, from the plain scan alone: the facets each list as many values
   * as their size asks, or the matches' distinct values when fewer (the scan's list at size null); the first facet
   * listing more than `max` is refused, naming its place, field and count; otherwise the answer is the scan's.
   */
  function expectedUnder(max: number, corpus: ClearanceRecord[], edges: readonly Edge[], req: Parameters<typeof naiveExtended>[3]) {
    const all = naiveExtended(corpus, TYPES, CLASSES, { ...req, facets: req.facets!.map((f) => ({ ...f, size: null })) }, naiveEdges(edges)).facets!;
    for (const [position, f] of req.facets!.entries()) {
      const values = Math.min(f.size ?? Infinity, all[position]!.values.length);
      if (values > max) return { refused: { position, field: f.field, values, max } };
    }
    return { facets: naiveExtended(corpus, TYPES, CLASSES, req, naiveEdges(edges)).facets };
  }

  async function outcomeOf(run: () => Promise<{ facets: unknown }>): Promise<{ facets: unknown } | { refused: object }> {
    try {
      return { facets: (await run()).facets };
    } catch (err) {
      if (!(err instanceof FacetValuesError)) throw err;
      return { refused: { position: err.position, field: err.field, values: err.values, max: err.max } };
    }
  }

  it('refuses a facet over the bound and answers one within it as a plain scan does, whole or in slices', async () => {
    await fc.assert(
      fc.asyncProperty(arbLinked, arbQuery, arbFacets.filter((f) => f !== undefined), fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 3 }), async ([corpus, edges], query, facets, max, sliceDocs) => {
        const ix = indexOf(corpus, TYPES, CLASSES, edges);
        const req = { query, applicant: null, productCode: null, yearFrom: null, yearTo: null, facets: facets! };
        const expected = expectedUnder(max, corpus, edges, req);
        const request = { ...req, page: 1, pageSize: 50, facetValuesMax: max } as SearchRequest;
        expect(await outcomeOf(async () => runSearch(ix, request))).toEqual(expected);
        expect(await outcomeOf(() => runSearchSliced(ix, request, { pause: async () => {}, sliceDocs }))).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('counts no other field before it refuses: the facets that may pass the bound are counted first', async () => {
    const corpus = fc.sample(fc.tuple(...Array.from({ length: 40 }, (_, i) => arbRecord(i * 7 + 1))), { numRuns: 1, seed: 7 })[0]!;
    // Every record names its own device and the next one's: 40 distinct devices cited.
    const edges: Edge[] = corpus.flatMap((r, i) => [r, corpus[(i + 1) % corpus.length]!].map((to) => ({ device: r.kNumber, predicate: to.kNumber, kind: 'named' as const })));
    const ix = indexOf(corpus, TYPES, CLASSES, edges);
    const base = { query: '', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 1, facetValuesMax: 5 };
    const pausesOf = async (facets: SearchRequest['facets']) => {
      let pauses = 0;
      const outcome = await outcomeOf(() => runSearchSliced(ix, { ...base, facets } as SearchRequest, { pause: async () => void pauses++, sliceDocs: 1 }));
      return { outcome, pauses };
    };
    const alone = await pausesOf([{ field: 'predicate', size: null, order: 'count' }]);
    expect(alone.outcome).toEqual({ refused: { position: 0, field: 'predicate', values: 40, max: 5 } });
    // Two fields that cannot pass the bound (two values each), asked before it: the same refusal, none of their work.
    const after = await pausesOf([{ field: 'thirdParty', size: null, order: 'count' }, { field: 'deviceClass', size: null, order: 'count' }, { field: 'predicate', size: null, order: 'count' }]);
    expect(after.outcome).toEqual({ refused: { position: 2, field: 'predicate', values: 40, max: 5 } });
    expect(after.pauses).toBe(alone.pauses);
    // Not vacuous: answered, the same fields do cost pauses of their own.
    const answered = await pausesOf([{ field: 'thirdParty', size: null, order: 'count' }, { field: 'deviceClass', size: null, order: 'count' }, { field: 'predicate', size: 5, order: 'count' }]);
    expect(answered.outcome).toHaveProperty('facets');
    expect(answered.pauses).toBeGreaterThan(alone.pauses + corpus.length);
  });

  it('answers every value at exactly the bound, and refuses one value more, counted from the records', () => {
    const corpus = fc.sample(fc.tuple(...Array.from({ length: 40 }, (_, i) => arbRecord(i * 7 + 1))), { numRuns: 1, seed: 42 })[0]!;
    const ix = indexOf(corpus, TYPES, CLASSES);
    const days = new Map<string, number>();
    for (const r of corpus) if (r.decisionDate !== null) days.set(r.decisionDate, (days.get(r.decisionDate) ?? 0) + 1);
    expect(days.size).toBeGreaterThan(2);
    const base = { query: '', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 1 };
    const facets = [{ field: 'decisionYear', size: 2, order: 'count' }, { field: 'decisionDate', size: null, order: 'value' }] as const;
    const at = runSearch(ix, { ...base, facets, facetValuesMax: days.size } as SearchRequest);
    expect(at.facets[1]).toEqual({ field: 'decisionDate', values: [...days].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([value, count]) => ({ value, count })) });
    expect(() => runSearch(ix, { ...base, facets, facetValuesMax: days.size - 1 } as SearchRequest)).toThrow(
      expect.objectContaining({ name: 'FacetValuesError', position: 1, field: 'decisionDate', values: days.size, max: days.size - 1 }),
    );
    // A size within the bound lists that many of a field with more values.
    const cut = runSearch(ix, { ...base, facets: [{ field: 'decisionDate', size: days.size - 1, order: 'value' }], facetValuesMax: days.size - 1 } as SearchRequest);
    expect((cut.facets[0] as { values: unknown[] }).values).toHaveLength(days.size - 1);
  });
});

describe('pages of a keyed sort', () => {
  const KEYED = ['receivedDate:desc', 'reviewDays:desc', 'kNumber:asc'] as const;
  /** The members in the sort's order by the cursor's sort key (a different formulation: tuples compared in turn). */
  const expected = (ix: SearchIndex, members: number[], sort: (typeof KEYED)[number]) =>
    [...members].sort((a, b) => compareKeys(sortKey(ix, a, sort, 0), sortKey(ix, b, sort, 0)));
  const arbPage = fc.record({ offset: fc.integer({ min: 0, max: 45 }), limit: fc.integer({ min: 1, max: 12 }) });

  it('is the same page whichever way picks it (walk, heap, sort), for lists and ranges, at every offset', () => {
    fc.assert(
      fc.property(arbCorpus, fc.constantFrom(...KEYED), fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }), arbPage, fc.nat(), (corpus, sort, keep, { offset, limit }, cut) => {
        const ix = indexOf(corpus, TYPES, CLASSES);
        const list = Uint32Array.from([...Array(ix.docCount).keys()].filter((d) => keep[d]));
        const lo = cut % (ix.docCount + 1);
        const hi = lo + ((cut >> 8) % (ix.docCount - lo + 1));
        const cases: [{ docs: Uint32Array } | { lo: number; hi: number }, number[]][] = [
          [{ docs: list }, [...list]],
          [{ lo, hi }, [...Array(hi - lo).keys()].map((i) => lo + i)],
        ];
        for (const [members, all] of cases) {
          const want = expected(ix, all, sort).slice(offset, offset + limit);
          for (const way of ['walk', 'probe', 'heap', 'sort'] as Way[]) expect([...pickPage(ix, members, sort, offset, limit, way)!]).toEqual(want);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('gives up a walk past its budget, and then the page comes from a selection', () => {
    const corpus = fc.sample(fc.tuple(...Array.from({ length: 30 }, (_, i) => arbRecord(i * 997 + 1))), { seed: 7, numRuns: 1 })[0]!;
    const ix = indexOf(corpus, TYPES, CLASSES);
    const order = [...ix.byKNumber];
    const last = Uint32Array.from(order.slice(-2)).sort();
    expect(pickPage(ix, { docs: last }, 'kNumber:asc', 0, 2, 'walk', 3)).toBeNull();
    expect([...pickPage(ix, { docs: last }, 'kNumber:asc', 0, 2, 'walk')!]).toEqual(order.slice(-2));
    expect([...orderPage(ix, last, null, 'kNumber:asc', 0, 2)]).toEqual(order.slice(-2));
  });

  it('orders a range as it orders the same ids listed, for every sort', () => {
    fc.assert(
      fc.property(arbCorpus, fc.constantFrom(...SORTS), arbPage, fc.nat(), (corpus, sort, { offset, limit }, cut) => {
        const ix = indexOf(corpus, TYPES, CLASSES);
        const lo = cut % (ix.docCount + 1);
        const hi = lo + ((cut >> 8) % (ix.docCount - lo + 1));
        const listed = Uint32Array.from([...Array(hi - lo).keys()].map((i) => lo + i));
        expect([...orderRange(ix, lo, hi, sort, offset, limit)]).toEqual([...orderPage(ix, listed, null, sort, offset, limit)]);
      }),
      { numRuns: 300 },
    );
  });

  it('breaks ties by decision date descending, then K number descending', () => {
    const at = (k: number, received: string | null, decided: string | null) =>
      toClearanceRecord(`K${String(k).padStart(6, '0')}`, {
        deviceName: 'pump', applicant: null, productCode: null, decisionDate: decided, receivedDate: received, decisionCode: null,
        decisionDescription: null, advisoryCommittee: null, classificationCommittee: null, submissionType: null, thirdParty: null,
        expeditedReview: null, statementOrSummary: null, countryCode: null, state: null, contact: null, street1: null, street2: null,
        city: null, zipCode: null, postalCode: null,
      });
    const corpus = [
      at(1, '2024-01-01', '2024-02-01'), at(2, '2024-01-01', '2024-03-01'), at(3, '2024-01-01', '2024-02-01'),
      at(4, null, '2024-02-01'), at(5, '2023-01-01', null), at(6, '2024-01-01', null),
    ];
    const ix = indexOf(corpus, TYPES, CLASSES);
    const ks = (ids: Uint32Array) => [...ids].map((d) => ix.docKNumber[d]);
    const all = Uint32Array.from([...Array(ix.docCount).keys()]);
    for (const way of ['walk', 'probe', 'heap', 'sort'] as Way[]) {
      expect(ks(pickPage(ix, { docs: all }, 'receivedDate:desc', 0, 6, way)!)).toEqual([2, 3, 1, 6, 5, 4]);
      expect(ks(pickPage(ix, { lo: 0, hi: 6 }, 'reviewDays:desc', 1, 3, way)!)).toEqual([3, 1, 4]);
    }
  });
});

describe('the query grammar', () => {
  it.each([
    ['catheter pump', true],
    ['x-ray OR', true],
    ['-foley', false],
    ['"two words"', false],
    ['a OR b', false],
    ['code:DQY', false],
  ])('%s is plain: %s', (q, plain) => {
    expect(parseQuery(q).plain).toBe(plain);
  });

  it.each([
    ['colour:red', /"colour:" is not a qualifier; the qualifiers are applicant:, device:/],
    ['code:DQ1', /code:DQ1 is not a valid value; code: takes a product code, three letters/],
    ['class:4', /class: takes the device class/],
    ['thirdparty:maybe', /thirdparty: takes yes or no/],
    ['decided:2024-13', /decided: takes a decision date or range/],
    ['decided:2024-02-30', /decided: takes/],
    ['received:..', /received: takes/],
    ['reviewdays:>many', /reviewdays: takes days/],
    ['country:USA', /country: takes/],
    ['code: DQY', /code: is not a valid value/],
    ['predicate:123456', /predicate:123456 is not a valid value; predicate: takes a K or De Novo number/],
    ['predicate:K12345', /predicate: takes a K or De Novo number/],
    ['kind:reference', /kind: takes the kind of edge: predicate .* or named/],
    ['-kind:named', /kind: narrows the whole query and cannot be negated or joined by OR/],
    ['kind:named OR code:DQY', /cannot be negated or joined by OR/],
    ['kind:named kind:predicate', /kind: is given twice with different values/],
  ])('refuses %s, naming it and the accepted forms', (q, message) => {
    expect(() => parseQuery(q)).toThrow(QueryError);
    expect(() => parseQuery(q)).toThrow(message);
  });

  it('reads OR between terms, a leading minus as exclusion and quotes as a phrase', () => {
    expect(parseQuery('catheter -foley "balloon tip" code:DQY OR code:DTB').clauses).toEqual([
      [{ negate: false, kind: 'words', words: ['catheter'] }],
      [{ negate: true, kind: 'words', words: ['foley'] }],
      [{ negate: false, kind: 'phrase', words: ['balloon', 'tip'] }],
      [
        { negate: false, kind: 'field', qualifier: { field: 'code', code: 'DQY' } },
        { negate: false, kind: 'field', qualifier: { field: 'code', code: 'DTB' } },
      ],
    ]);
  });

  it('narrows every predicate: term to the query\'s kind:, and keeps the kind: as a clause of its own', () => {
    const parsed = parseQuery('predicate:k000001 OR -predicate:DEN200012 kind:named');
    expect(parsed.edgeKinds).toBe(2);
    expect(parsed.clauses).toEqual([
      [
        { negate: false, kind: 'field', qualifier: { field: 'predicate', number: 'K000001', kinds: 2 } },
        { negate: true, kind: 'field', qualifier: { field: 'predicate', number: 'DEN200012', kinds: 2 } },
      ],
      [{ negate: false, kind: 'field', qualifier: { field: 'kind', kinds: 2 } }],
    ]);
    expect(parseQuery('predicate:K000001').edgeKinds).toBeUndefined();
    expect(parseQuery('predicate:K000001').clauses[0]![0]).toMatchObject({ qualifier: { kinds: 3 } });
  });
});

/** The column a facet field counts, where fields share one (src/search/facet-fields.ts). */
const COLUMN_OF: Partial<Record<string, string>> = { thirdParty: 'flags', expeditedReview: 'flags', statementOrSummary: 'flags', deviceClass: 'productCode' };

describe('the query language in slices', () => {
  it('gives what a plain scan gives when run in slices of one to three documents', async () => {
    await fc.assert(
      fc.asyncProperty(arbLinked, arbQuery, fc.constantFrom(undefined, ...SORTS), arbFacets, fc.boolean(), fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 3 }), async ([corpus, edges], query, sort, facets, stats, sliceDocs, sliceSteps) => {
        const ix = indexOf(corpus, TYPES, CLASSES, edges);
        const req = { query, applicant: null, productCode: null, yearFrom: null, yearTo: null };
        const expected = naiveExtended(corpus, TYPES, CLASSES, { ...req, sort, facets, stats }, naiveEdges(edges));
        let pauses = 0;
        const got = await runSearchSliced(
          ix,
          { ...req, page: 1, pageSize: 50, ...(sort && { sort }), ...(facets && { facets }), ...(stats && { stats }) } as SearchRequest,
          { pause: async () => void pauses++, sliceDocs, sliceSteps },
        );
        expect(got.kNumbers).toEqual(expected.kNumbers);
        expect(got.total).toBe(expected.kNumbers.length);
        if (facets) {
          expect(got.facets).toEqual(expected.facets);
          // Every column counted in slices: at least one pause per slice of the matches. Fields that read the same
          // column (the three flags; product codes and device classes) count it once.
          const columns = new Set(facets.map((f) => COLUMN_OF[f.field] ?? f.field)).size;
          expect(pauses).toBeGreaterThanOrEqual(columns * Math.ceil(expected.kNumbers.length / sliceDocs));
        }
        if (stats) expect(got.stats).toEqual(expected.stats);
      }),
      { numRuns: 100 },
    );
  });

  it('offers yield points within matching, once a slice of the work budget is spent', async () => {
    const corpus = fc.sample(fc.tuple(...Array.from({ length: 40 }, (_, i) => arbRecord(i * 7 + 1))), { numRuns: 1, seed: 510 })[0]!;
    const ix = indexOf(corpus, TYPES, CLASSES);
    // A phrase and words tested record by record (each a step or more), and an OR group of words read through postings.
    const req: SearchRequest = { query: '"balloon catheter" OR "foley" -x-ray foley OR pump OR kit', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10 };
    const pausesWith = async (sliceSteps?: number) => {
      let pauses = 0;
      const got = await runSearchSliced(ix, req, { pause: async () => void pauses++, ...(sliceSteps && { sliceSteps }) });
      return { pauses, got };
    };
    const whole = await pausesWith();
    const sliced = await pausesWith(1);
    expect(sliced.got).toEqual(whole.got);
    expect(whole.got.total).toBeGreaterThan(3);
    // Slices of one step: a yield point at least every few records tested.
    expect(sliced.pauses).toBeGreaterThan(whole.pauses + whole.got.total);
  });

  it('gives each search its own answer when many run interleaved, slice by slice, over one index', async () => {
    const corpus = fc.sample(fc.tuple(...Array.from({ length: 40 }, (_, i) => arbRecord(i * 7 + 3))), { numRuns: 1, seed: 28 })[0]!;
    const ix = indexOf(corpus, TYPES, CLASSES);
    const queries = ['foley OR pump OR kit', '"balloon catheter" OR "foley"', 'catheter -"balloon catheter" -x-ray', 'lead OR "infusion pump" -code:QQQ', 'cath -foley OR pump', 'kit OR lead OR x-ray -applicant:cook'];
    const facets = FACET_FIELDS.map((field) => ({ field, size: null, order: 'count' as const }));
    const requests: SearchRequest[] = queries.map((query) => ({ query, applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 50, facets }));
    const alone = requests.map((r) => runSearch(ix, r));
    // Each pause lets every other search run its next slice before this one goes on.
    const together = await Promise.all(requests.map((r) => runSearchSliced(ix, r, { pause: () => new Promise((next) => setImmediate(next)), sliceDocs: 2, sliceSteps: 1 })));
    expect(together).toEqual(alone);
    expect(alone.some((a) => a.total > 0)).toBe(true);
  });

  it('stops at the first yield point after it is cancelled, and does no more slices', async () => {
    const corpus = fc.sample(fc.tuple(...Array.from({ length: 35 }, (_, i) => arbRecord(i * 7 + 1))), { numRuns: 1, seed: 510 })[0]!;
    const ix = indexOf(corpus, TYPES, CLASSES);
    const facets = FACET_FIELDS.map((field) => ({ field, size: null, order: 'count' as const }));
    const req: SearchRequest = { query: '', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10, facets };
    // Uncancelled, the same search takes one slice per document per column counted: the three flags share one
    // column, product codes and device classes another.
    let whole = 0;
    await runSearchSliced(ix, req, { pause: async () => void whole++, sliceDocs: 1 });
    expect(whole).toBeGreaterThanOrEqual(corpus.length * (facets.length - 3));

    const cancel = { aborted: false, reason: undefined as unknown };
    let pauses = 0;
    let afterCancel = 0;
    const run = runSearchSliced(ix, req, {
      sliceDocs: 1,
      cancel,
      pause: async () => {
        if (cancel.aborted) afterCancel++;
        if (++pauses === 10) cancel.aborted = true;
      },
    });
    await expect(run).rejects.toBeInstanceOf(SearchCancelled);
    expect(pauses).toBe(10);
    expect(afterCancel).toBe(0);

    // A reason given with the cancellation is what the search rejects with.
    const reason = new Error('did not finish within 30000 ms');
    const aborted = new AbortController();
    let more = 0;
    const stopped = runSearchSliced(ix, req, { sliceDocs: 1, cancel: aborted.signal, pause: async () => void (++more === 3 && aborted.abort(reason)) });
    await expect(stopped).rejects.toBe(reason);
    expect(more).toBe(3);
  });
});
