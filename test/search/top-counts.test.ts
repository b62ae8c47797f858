import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { topCounts, topOfIds } from '../../src/search/facets.ts';

describe('topOfIds', () => {
  it('picks what topCounts picks from the same counts (ties by id), and leaves the counts zeroed', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.array(fc.integer({ min: 0, max: 45 }), { maxLength: 300 }), fc.integer({ min: 1, max: 12 }), (size, values, k) => {
        // Ids counted in the order they come, each noted the first time (as the facet count notes them).
        const counts = new Uint32Array(size);
        const ids = new Uint32Array(values.length);
        let n = 0;
        for (const v of values) if (v < size && counts[v]!++ === 0) ids[n++] = v;
        const expected = topCounts(counts, k);
        expect(topOfIds(counts, ids, n, k)).toEqual(expected);
        expect(counts.every((c) => c === 0)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('reads only the given span of counts', () => {
    const counts = Uint32Array.from([0, 0, 3, 1, 3, 0, 0]);
    expect(topCounts(counts, 2, 2, 5)).toEqual([[2, 3], [4, 3]]);
    expect(topCounts(counts, 10, 3, 4)).toEqual([[3, 1]]);
  });
});

describe('topCounts', () => {
  it('lists the k highest non-zero counts, count descending then id ascending, for any k (a plain sort of the counts)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 30 }), { maxLength: 400 }), fc.integer({ min: 1, max: 500 }), (values, k) => {
        const counts = Uint32Array.from(values);
        const expected = values
          .map((count, id) => [id, count] as [number, number])
          .filter(([, count]) => count > 0)
          .sort((a, b) => b[1] - a[1] || a[0] - b[0])
          .slice(0, k);
        expect(topCounts(counts, k)).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });
});

describe('topCounts with counts of a million and more', () => {
  it('orders by count then id whichever way it sorts', () => {
    const values = Array.from({ length: 200 }, (_, id) => (id % 7 === 0 ? 0 : ((id * 7919) % 13) * 250_000 + (id % 3)));
    const counts = Uint32Array.from(values);
    const expected = values
      .map((count, id) => [id, count] as [number, number])
      .filter(([, count]) => count > 0)
      .sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    expect(topCounts(counts, 500)).toEqual(expected);
    const small = Uint32Array.from(values.map((v) => v % 1000));
    expect(topCounts(small, 100)).toEqual(
      [...small].map((count, id) => [id, count] as [number, number]).filter(([, c]) => c > 0).sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, 100),
    );
  });
});
