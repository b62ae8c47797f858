import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lowerBound, partitionPoint } from '../../src/utils/bisect.ts';

describe('partitionPoint', () => {
  it('finds where a sorted array stops being below a value, as a scan does, within any range', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 50 })).map((a) => a.sort((x, y) => x - y)), fc.integer({ min: -1, max: 51 }), fc.nat(), fc.nat(), (items, value, a, b) => {
        const lo = Math.min(a, b) % (items.length + 1);
        const hi = Math.max(lo, Math.max(a, b) % (items.length + 1));
        let expected = lo;
        while (expected < hi && (items[expected] as number) < value) expected++;
        expect(partitionPoint(lo, hi, (i) => (items[i] as number) < value)).toBe(expected);
      }),
    );
  });

  it.each([
    [0, 0, 0],
    [0, 5, 5],
    [3, 3, 3],
  ])('an empty or never-false range [%i, %i) answers %i', (lo, hi, expected) => {
    expect(partitionPoint(lo, hi, () => true)).toBe(expected);
  });
});

describe('lowerBound', () => {
  it('answers as partitionPoint over a sorted list of numbers, within any range, and over the whole list by default', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 50 })).map((a) => Uint32Array.from(a.sort((x, y) => x - y))), fc.integer({ min: 0, max: 51 }), fc.nat(), fc.nat(), (items, value, a, b) => {
        const lo = Math.min(a, b) % (items.length + 1);
        const hi = Math.max(lo, Math.max(a, b) % (items.length + 1));
        let expected = lo;
        while (expected < hi && items[expected]! < value) expected++;
        expect(lowerBound(items, value, lo, hi)).toBe(expected);
        let whole = 0;
        while (whole < items.length && items[whole]! < value) whole++;
        expect(lowerBound(items, value)).toBe(whole);
      }),
    );
  });
});
