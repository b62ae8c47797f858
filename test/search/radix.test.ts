import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sortedIds } from '../../src/search/radix.ts';

describe('sortedIds', () => {
  it('sorts as the built-in sort does, on both sides of its size threshold and for ids of any width, leaving its input', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 1, max: 32 }), fc.integer(), (n, width, seed) => {
        let x = seed >>> 0;
        const ids = new Uint32Array(n);
        for (let i = 0; i < n; i++) {
          x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
          ids[i] = width === 32 ? x : x & ((1 << width) - 1);
        }
        const before = ids.slice();
        const got = sortedIds(ids);
        expect(Array.from(got)).toEqual(Array.from(before.slice().sort()));
        expect(Array.from(ids)).toEqual(Array.from(before));
      }),
      { numRuns: 200 },
    );
  });

  it('sorts a large list, then a smaller one (the scratch it keeps is only read after being written)', () => {
    const big = Uint32Array.from({ length: 40_000 }, (_, i) => (i * 7919) % 1_000_003);
    expect(Array.from(sortedIds(big))).toEqual(Array.from(big.slice().sort()));
    const small = Uint32Array.from({ length: 2_000 }, (_, i) => (i * 104729) % 65_537);
    expect(Array.from(sortedIds(small))).toEqual(Array.from(small.slice().sort()));
  });
});
