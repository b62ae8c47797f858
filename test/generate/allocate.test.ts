import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allocateKNumbers, MAX_K_NUMBERS, sequenceNumbers, waterFill, YEAR_VOLUMES } from '../../build/generate/allocate.ts';

const total = (plan: { count: number }[]): number => plan.reduce((s, p) => s + p.count, 0);

describe('allocateKNumbers', () => {
  it.each([1, 51, 1_000, 175_000, 510_000, 510_001, 999_999])('places exactly %i K numbers, at most 10,000 a prefix', (n) => {
    const plan = allocateKNumbers(n);
    expect(total(plan)).toBe(n);
    for (const p of plan) expect(p.count).toBeLessThanOrEqual(10_000);
    expect(new Set(plan.map((p) => p.prefix)).size).toBe(plan.length);
  });

  it('uses every one of the 1,000,000 K numbers for 1,000,000 records', () => {
    const plan = allocateKNumbers(MAX_K_NUMBERS);
    expect(plan).toHaveLength(100);
    const numbers = new Set<string>();
    for (const p of plan) for (const s of sequenceNumbers(p.count)) numbers.add(`K${p.prefix}${String(s).padStart(4, '0')}`);
    expect(numbers.size).toBe(1_000_000);
    expect(numbers.has('K000000')).toBe(true);
    expect(numbers.has('K999999')).toBe(true);
  });

  it('keeps the real years only, in time order, up to 510,000 records', () => {
    const plan = allocateKNumbers(175_000);
    expect(plan.map((p) => p.year)).toEqual([...YEAR_VOLUMES.keys()]);
    expect(plan[0]).toMatchObject({ prefix: '76', year: 1976 });
    expect(plan.at(-1)).toMatchObject({ prefix: '26', year: 2026 });
    // Proportional: the busiest year of the table gets more than the quietest.
    const byYear = new Map(plan.map((p) => [p.year, p.count]));
    expect(byYear.get(1992)).toBeGreaterThan(byYear.get(1976) ?? Infinity);
  });

  it('sends the numbers past 510,000 to prefixes of no real year', () => {
    const plan = allocateKNumbers(510_049);
    const others = plan.filter((p) => p.year === null);
    expect(others).toHaveLength(49);
    for (const p of others) expect(p.count).toBe(1);
    expect(others.map((p) => p.prefix)).toContain('50');
  });

  it.each([0, -1, 1.5, MAX_K_NUMBERS + 1])('refuses %s records', (n) => {
    expect(() => allocateKNumbers(n)).toThrow(/records/);
  });

  it('always sums to the request (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: MAX_K_NUMBERS }), (n) => {
        const plan = allocateKNumbers(n);
        return total(plan) === n && plan.every((p) => p.count >= 1 && p.count <= 10_000);
      }),
      { numRuns: 200 },
    );
  });
});

describe('sequenceNumbers', () => {
  it.each([
    [3, [1, 2, 3]],
    [1, [1]],
  ])('numbers %i from 0001 as FDA does', (count, expected) => {
    expect(sequenceNumbers(count)).toEqual(expected);
  });
  it('includes 0000 when the prefix is full', () => {
    const all = sequenceNumbers(10_000);
    expect(all[0]).toBe(0);
    expect(all.at(-1)).toBe(9_999);
  });
});

describe('waterFill', () => {
  it.each([
    { total: 10, weights: [1, 1], cap: 10, expected: [5, 5] },
    { total: 10, weights: [1, 1, 1], cap: 10, expected: [4, 3, 3] },
    { total: 15, weights: [10, 1], cap: 10, expected: [10, 5] },
    { total: 20, weights: [3, 1], cap: 10, expected: [10, 10] },
    { total: 7, weights: [0, 1], cap: 10, expected: [0, 7] },
  ])('shares $total over $weights with cap $cap', ({ total: t, weights, cap, expected }) => {
    expect(waterFill(t, weights, cap)).toEqual(expected);
  });
  it('refuses more than the slots hold', () => {
    expect(() => waterFill(21, [1, 1], 10)).toThrow(/cannot place/);
  });
});
