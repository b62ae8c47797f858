import { ApiError } from '../../src/api/errors.ts';
import { parseSearchQuery } from '../../src/operations/search-query.ts';
import { describe, expect, it } from 'vitest';
import { buildSearchIndexData } from '../../build/index/search.ts';
import { SearchInput, type ClearanceRecord } from '../../src/contract/index.ts';
import { decodeSearchIndex, encodeSearchIndex } from '../../src/search/codec.ts';
import { checkQueryCost, QUERY_LIMITS, QueryCostError } from '../../src/search/cost.ts';
import { parseQuery } from '../../src/search/grammar.ts';
import { openSearchIndex, type SearchIndex } from '../../src/search/model.ts';
import { matchesOf, runSearch, type SearchRequest } from '../../src/search/engine.ts';
import { makeRecord } from '../helpers/records.ts';
import { naiveExtended } from './naive-query.ts';

/**
 * The query limits of src/search/cost.ts and the work budget of src/search/budget.ts: each limit with a query just
 * under it (answered, and the answer equal to a plain scan of the records) and just over it (refused, the message
 * naming the limit and the query's value).
 */

function indexOf(records: ClearanceRecord[], types: ReadonlyMap<string, string | null>, classes: ReadonlyMap<string, string | null>): SearchIndex {
  const sorted = [...records].sort((a, b) => (a.kNumber < b.kNumber ? -1 : 1));
  const { header, parts } = encodeSearchIndex(buildSearchIndexData(sorted, types, classes), 64);
  return openSearchIndex(decodeSearchIndex(JSON.parse(JSON.stringify(header)), parts.map((p) => p.slice())));
}

const TYPES = new Map<string, string | null>([['DQY', 'Catheter, Percutaneous']]);
const CLASSES = new Map<string, string | null>([['DQY', '2']]);
const k = (i: number) => `K${String(i).padStart(6, '0')}`;

const NAMES = ['foley catheter kit', 'balloon catheter', 'infusion pump', 'x-ray system', 'pacemaker lead', 'urethral catheter tray', 'blood pump set', 'lead wire kit'];
const small = Array.from({ length: 48 }, (_, i) =>
  makeRecord(k(100 + i), {
    deviceName: `${NAMES[i % NAMES.length]} ${['alpha', 'bravo', 'charlie', 'delta'][i % 4]} model ${i}`,
    applicant: ['Acme Corp', 'Bard Inc', null][i % 3]!,
    productCode: i % 2 ? 'DQY' : null,
    decisionDate: `20${String(10 + (i % 14)).padStart(2, '0')}-0${1 + (i % 9)}-15`,
    countryCode: ['US', 'DE', null][i % 3]!,
  }),
);
const smallIndex = indexOf(small, TYPES, CLASSES);

const request = (query: string): SearchRequest => ({ query, applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 5000 });

/** The engine's whole answer equals the plain scan's (order included). */
function expectNaive(index: SearchIndex, records: ClearanceRecord[], query: string, budget?: number): void {
  const got = runSearch(index, request(query), budget);
  const want = naiveExtended(records, TYPES, CLASSES, { query, applicant: null, productCode: null, yearFrom: null, yearTo: null });
  expect(got.kNumbers).toEqual(want.kNumbers);
  expect(got.total).toBe(want.kNumbers.length);
}

/** Refused where the query is parsed (no index needed) and by the engine, with this message after the field's name. */
function expectRefused(index: SearchIndex, query: string, message: RegExp): void {
  let refused: unknown = null;
  try {
    parseSearchQuery(query, 'input.query');
  } catch (err) {
    refused = err;
  }
  expect(refused).toBeInstanceOf(ApiError);
  expect((refused as ApiError).code).toBe('invalid_input');
  expect((refused as ApiError).details).toEqual([{ path: 'input.query', message: expect.stringMatching(message) }]);
  expect(() => runSearch(index, request(query))).toThrow(message);
  expect(() => matchesOf(index, request(query))).toThrow(QueryCostError);
}

/** Refused only where the index is known (the expansion limits and the work budget). */
function expectRefusedByIndex(index: SearchIndex, query: string, message: RegExp): void {
  expect(SearchInput.safeParse({ ...request(query), pageSize: 10 }).success).toBe(true);
  expect(() => runSearch(index, request(query))).toThrow(message);
  expect(() => matchesOf(index, request(query))).toThrow(QueryCostError);
}

const letters = 'abcdefghijklmnopqrstuvwxyz0123456789';
/** The hostile query of the report: every one- and two-character prefix, 346 of them, ORed (2,036 characters). */
function prefixStorm(): string {
  const prefixes: string[] = [...letters];
  for (const a of letters.slice(1)) for (const b of letters) if (prefixes.length < 346) prefixes.push(a + b);
  return prefixes.join(' OR ');
}

describe('the query limits', () => {
  it('refuses the 346-prefix OR query before evaluating it, naming the limit and the value', () => {
    const query = prefixStorm();
    expect(query.length).toBe(2036);
    expectRefused(smallIndex, query, /^has 346 OR branches; at most 32 are allowed$/);
  });

  it('OR branches: 32 answered as a scan does, 33 refused', () => {
    const branches = (n: number) => Array.from({ length: n }, (_, i) => (i < 26 ? letters[i]! : `${i - 26}`)).join(' OR ');
    expectNaive(smallIndex, small, branches(QUERY_LIMITS.orBranches));
    expectRefused(smallIndex, branches(QUERY_LIMITS.orBranches + 1), /^has 33 OR branches; at most 32 are allowed$/);
  });

  it('exclusions: 32 answered as a scan does, 33 refused', () => {
    // A few that remove records, the rest words no record holds.
    const words = ['foley', 'alpha', 'x-ray', '"catheter tray"', 'country:DE', ...Array.from({ length: 28 }, (_, i) => `zq${i}`)];
    const exclusions = (n: number) => `catheter ${words.slice(0, n).map((w) => `-${w}`).join(' ')}`;
    expectNaive(smallIndex, small, exclusions(QUERY_LIMITS.exclusions));
    expect(runSearch(smallIndex, request(exclusions(QUERY_LIMITS.exclusions))).total).toBeGreaterThan(0);
    expectRefused(smallIndex, exclusions(QUERY_LIMITS.exclusions + 1), /^has 33 exclusions; at most 32 are allowed$/);
  });

  it('phrases: 16 answered as a scan does, 17 refused', () => {
    const pool = ['"foley catheter"', '"balloon catheter"', '"infusion pump"', '"x ray"', '"pacemaker lead"', '"catheter tray"', '"pump set"', '"wire kit"'];
    const phrases = (n: number) => Array.from({ length: n }, (_, i) => pool[i % pool.length]).join(' OR ');
    expectNaive(smallIndex, small, phrases(QUERY_LIMITS.phrases));
    expect(runSearch(smallIndex, request(phrases(QUERY_LIMITS.phrases))).total).toBeGreaterThan(0);
    expectRefused(smallIndex, phrases(QUERY_LIMITS.phrases + 1), /^has 17 phrases; at most 16 are allowed$/);
  });

  it('words of a phrase: 16 answered as a scan does, 17 refused', () => {
    const phrase = (n: number) => `"${Array.from({ length: n }, (_, i) => (i === 0 ? 'foley' : 'catheter')).join(' ')}"`;
    expectNaive(smallIndex, small, `${phrase(QUERY_LIMITS.phraseWords)} OR "foley catheter"`);
    expectRefused(smallIndex, phrase(QUERY_LIMITS.phraseWords + 1), /^has a phrase of 17 words; at most 16 are allowed$/);
  });

  it('terms: 64 answered as a scan does, 65 refused', () => {
    const qualifiers = ['country:US', 'decided:2010..', '-country:DE', 'class:2'];
    const terms = (n: number) => ['cath', ...Array.from({ length: n - 1 }, (_, i) => qualifiers[i % qualifiers.length])].join(' ');
    expectNaive(smallIndex, small, terms(QUERY_LIMITS.terms));
    expect(runSearch(smallIndex, request(terms(QUERY_LIMITS.terms))).total).toBeGreaterThan(0);
    expectRefused(smallIndex, terms(QUERY_LIMITS.terms + 1), /^has 65 terms; at most 64 are allowed$/);
  });

  it('words: 64 answered as a scan does, 65 refused (one term of many words)', () => {
    // `47` is a word of one record's name only.
    const words = (n: number) => ['kit', ...Array.from({ length: n - 1 }, () => '47')].join('-');
    expectNaive(smallIndex, small, words(QUERY_LIMITS.words));
    expect(runSearch(smallIndex, request(words(QUERY_LIMITS.words))).total).toBeGreaterThan(0);
    expectRefused(smallIndex, words(QUERY_LIMITS.words + 1), /^has 65 words; at most 64 are allowed$/);
  });

  it('index entries reached: 8 per record answered as a scan does, more refused', () => {
    // 20 records, each named by the same ten words: every word holds 20 postings, so the limit is 160 (8 words).
    const same = Array.from({ length: 20 }, (_, i) => makeRecord(k(500 + i), { deviceName: 'aa ab ac ad ae af ag ah ai aj' }));
    const index = indexOf(same, TYPES, CLASSES);
    expectNaive(index, same, 'aa ab ac ad ae af ag ah');
    expect(runSearch(index, request('aa ab ac ad ae af ag ah')).total).toBe(20);
    expectRefusedByIndex(index, 'aa ab ac ad ae af ag ah ai', /^has words whose prefixes reach 180 index entries; at most 160 \(8 per record\) are allowed/);
    expectRefusedByIndex(index, 'a', /^has words whose prefixes reach 200 index entries; at most 160/);
  });

  it('index words a prefix starts: 20,000 answered as a scan does, more refused', () => {
    // 2,600 records of eight words each, w00000 … w20799: `w0` and `w1` start 10,000 words each.
    const many = Array.from({ length: 2600 }, (_, i) =>
      makeRecord(k(10_000 + i), { deviceName: Array.from({ length: 8 }, (_, j) => `w${String(i * 8 + j).padStart(5, '0')}`).join(' ') }),
    );
    const index = indexOf(many, TYPES, CLASSES);
    expectNaive(index, many, 'w0 OR w1');
    expect(runSearch(index, request('w0 OR w1')).total).toBe(2500);
    expectRefusedByIndex(index, 'w0 OR w1 OR w200', /^has words whose prefixes reach 20,100 words of the index; at most 20,000 are allowed/);
    expectRefusedByIndex(index, 'w', /^has words whose prefixes reach 20,800 words of the index/);
  });

  it('checkQueryCost takes the parsed query and the index, and throws the limit, the value and the maximum', () => {
    try {
      checkQueryCost(parseQuery(prefixStorm()), smallIndex);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(QueryCostError);
      expect(err).toMatchObject({ limit: 'orBranches', value: 346, max: 32 });
    }
    expect(() => checkQueryCost(parseQuery('catheter OR pump -foley "balloon catheter" country:US'), smallIndex)).not.toThrow();
  });
});

describe('the work budget', () => {
  // Candidates tested against OR branches that are not plain words (phrases, exclusions): the work grows with both.
  const query = '"foley catheter" OR "infusion pump" OR -alpha OR "lead wire" OR -x-ray';

  /** The fewest steps the query is answered with, found by bisection over budgets (the count is deterministic). */
  function stepsNeeded(): number {
    let lo = 0;
    let hi = 1_000_000;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      try {
        runSearch(smallIndex, request(query), mid);
        hi = mid;
      } catch (err) {
        if (!(err instanceof QueryCostError)) throw err;
        lo = mid + 1;
      }
    }
    return lo;
  }

  it('stops the evaluation once its steps are spent, and answers as a scan does with exactly enough', () => {
    const needed = stepsNeeded();
    // Every candidate is tested against the five branches: well over one step a record.
    expect(needed).toBeGreaterThan(small.length);
    expectNaive(smallIndex, small, query, needed);
    let thrown: unknown;
    try {
      runSearch(smallIndex, request(query), needed - 1);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(QueryCostError);
    expect(thrown).toMatchObject({ limit: 'work', max: needed - 1 });
    expect((thrown as Error).message).toMatch(/^needs more than [\d,]+ steps of work .*; at most [\d,]+ are allowed/);
    // The same budget gives the same answer every time: a count, not a clock.
    expect(() => runSearch(smallIndex, request(query), needed - 1)).toThrow(QueryCostError);
    expect(runSearch(smallIndex, request(query), needed).total).toBe(runSearch(smallIndex, request(query)).total);
  });

  it('leaves no budget behind: a search after a refused one runs with its own', () => {
    expect(() => runSearch(smallIndex, request(query), 1)).toThrow(QueryCostError);
    expectNaive(smallIndex, small, query);
  });
});
