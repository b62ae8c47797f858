import { describe, expect, test } from 'vitest';

// The page's pure state module is plain JavaScript (no build step); the cast keeps the typecheck off it.
type State = { q: string; productCode: string | null; applicant: string | null; from: number | null; to: number | null; page: number; record: string | null };
type StateModule = {
  EMPTY_STATE: State;
  parseHash(hash: string): State;
  toHash(state: State): string;
  withChanges(state: State, changes: Partial<State>): State;
  searchInput(state: State): Record<string, unknown>;
  kNumberIn(query: string): string | null;
  topValues(counts: Record<string, number>, limit?: number, numeric?: boolean): { value: string | number; count: number }[];
  yearsBetween(from: number | null, to: number | null, minYear: number, maxYear: number): string[];
  freshnessOf(lastSuccessfulSyncAt: string | null, now: number, maxAgeHours?: number): string;
};
const m = (await import('../../public/js/state.js' as string)) as StateModule;

describe('the page state in the location hash', () => {
  test.each([
    ['#', m.EMPTY_STATE],
    ['', m.EMPTY_STATE],
    ['#q=balloon+catheter&code=dqy&applicant=Acme%20Corp&from=1990&to=1995&page=3&record=k123456',
      { q: 'balloon catheter', productCode: 'DQY', applicant: 'Acme Corp', from: 1990, to: 1995, page: 3, record: 'K123456' }],
    ['#code=DQ1&from=abc&to=1850&page=0&record=K12', m.EMPTY_STATE],
    ['#page=2.5&applicant=%20%20', m.EMPTY_STATE],
    ['#from=2000&to=1990', { ...m.EMPTY_STATE, from: 1990, to: 2000 }],
  ])('%s', (hash, expected) => {
    expect(m.parseHash(hash)).toEqual(expected);
  });

  test('toHash and parseHash round-trip, leaving defaults out', () => {
    const state = { q: 'stent & graft', productCode: 'MAF', applicant: 'A, B & C', from: null, to: 2001, page: 2, record: null };
    const hash = m.toHash(state);
    expect(hash).not.toContain('from=');
    expect(m.parseHash(hash)).toEqual(state);
    expect(m.toHash(m.EMPTY_STATE)).toBe('#');
  });

  test('changing what is searched goes back to page 1 and closes the record; paging keeps the search', () => {
    const s = { ...m.EMPTY_STATE, q: 'stent', page: 4, record: 'K123456' };
    expect(m.withChanges(s, { productCode: 'MAF' })).toEqual({ ...s, productCode: 'MAF', page: 1, record: null });
    expect(m.withChanges(s, { page: 5 })).toEqual({ ...s, page: 5 });
    expect(m.withChanges(s, { q: 'stent' })).toEqual(s);
  });

  test('the API input has every field of the search operation', () => {
    expect(m.searchInput({ ...m.EMPTY_STATE, q: 'x', from: 1990 })).toEqual({
      query: 'x', applicant: null, productCode: null, yearFrom: 1990, yearTo: null, page: 1, pageSize: 10,
    });
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
    expect(m.topValues({ 1990: 1, 1985: 1 }, 10, true)).toEqual([
      { value: 1985, count: 1 },
      { value: 1990, count: 1 },
    ]);
  });

  test('a year range becomes the years it covers, within the bounds', () => {
    expect(m.yearsBetween(1990, 1992, 1900, 2026)).toEqual(['1990', '1991', '1992']);
    expect(m.yearsBetween(null, 1901, 1900, 2026)).toEqual(['1900', '1901']);
    expect(m.yearsBetween(2025, null, 1900, 2026)).toEqual(['2025', '2026']);
    expect(m.yearsBetween(3000, null, 1900, 2026)).toEqual([]);
  });

  test('freshness follows the contract: unknown without a sync, current within the maximum age, stale after', () => {
    const now = Date.parse('2026-01-03T00:00:00Z');
    expect(m.freshnessOf(null, now)).toBe('unknown');
    expect(m.freshnessOf('2026-01-01T00:00:00Z', now)).toBe('current');
    expect(m.freshnessOf('2026-01-01T00:00:00Z', now + 1)).toBe('stale');
  });
});
