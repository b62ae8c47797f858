/**
 * Which K numbers a generated set uses. A K number is `K` + two digits of the year FDA received the submission + a
 * four-digit sequence, so there are 10,000 a year prefix and 1,000,000 in all.
 *
 * Volumes a year: 1976–1990 are the record counts of FDA's complete files for those years (1990 raised for its
 * numbers decided in 1991, which sit in the next file); 1991–2026 approximate FDA's yearly volumes (about 174,000
 * clearances in all, 2026 to August), since the full later files are not bundled. Only the proportions matter.
 */
export const YEAR_VOLUMES: ReadonlyMap<number, number> = new Map([
  [1976, 1255], [1977, 2163], [1978, 1987], [1979, 2485], [1980, 2924], [1981, 3260], [1982, 3578], [1983, 4077],
  [1984, 4379], [1985, 4437], [1986, 4219], [1987, 4375], [1988, 4226], [1989, 5357], [1990, 5000], [1991, 5600],
  [1992, 5900], [1993, 5600], [1994, 5200], [1995, 4800], [1996, 4800], [1997, 4600], [1998, 4200], [1999, 4100],
  [2000, 4000], [2001, 4000], [2002, 3900], [2003, 3800], [2004, 3700], [2005, 3700], [2006, 3600], [2007, 3400],
  [2008, 3300], [2009, 3200], [2010, 3200], [2011, 3100], [2012, 3200], [2013, 3100], [2014, 3100], [2015, 3100],
  [2016, 3000], [2017, 3100], [2018, 3200], [2019, 3200], [2020, 3300], [2021, 3100], [2022, 3000], [2023, 3100],
  [2024, 3100], [2025, 3100], [2026, 1900],
]);

export const NUMBERS_PER_PREFIX = 10_000;
export const MAX_K_NUMBERS = 100 * NUMBERS_PER_PREFIX;

/** One year prefix and how many K numbers it gets; `year` is null for prefixes of no real year (K27… to K75…). */
export type PrefixPlan = { prefix: string; year: number | null; count: number };

/**
 * Spreads `total` K numbers over the real year prefixes in proportion to their volumes, none above 10,000.
 * Past 510,000 (every real year full) the rest go evenly to the prefixes of no real year, so 1,000,000 uses every
 * K number there is. Real years come first, in time order, then the others in numeric order.
 */
export function allocateKNumbers(total: number, volumes: ReadonlyMap<number, number> = YEAR_VOLUMES): PrefixPlan[] {
  if (!Number.isInteger(total) || total < 1) throw new Error(`Expected \`records\` to be an integer from 1 and up, got ${total}`);
  if (total > MAX_K_NUMBERS) throw new Error(`Expected \`records\` to be at most ${MAX_K_NUMBERS}: only that many K numbers exist`);
  const years = [...volumes.keys()].sort((a, b) => a - b);
  const realPrefixes = new Set(years.map(prefixOfYear));
  if (realPrefixes.size !== years.length) throw new Error('Expected `volumes` to cover at most 100 years');
  const realCapacity = years.length * NUMBERS_PER_PREFIX;

  const realCounts = waterFill(Math.min(total, realCapacity), years.map((y) => volumes.get(y) ?? 0), NUMBERS_PER_PREFIX);
  const plan: PrefixPlan[] = years.map((year, i) => ({ prefix: prefixOfYear(year), year, count: realCounts[i] ?? 0 }));

  const others: string[] = [];
  for (let p = 0; p < 100; p++) {
    const prefix = String(p).padStart(2, '0');
    if (!realPrefixes.has(prefix)) others.push(prefix);
  }
  const rest = total - Math.min(total, realCapacity);
  const otherCounts = waterFill(rest, others.map(() => 1), NUMBERS_PER_PREFIX);
  others.forEach((prefix, i) => plan.push({ prefix, year: null, count: otherCounts[i] ?? 0 }));
  return plan.filter((p) => p.count > 0);
}

/** The sequence numbers of a prefix: 0001 upward as FDA numbers them, and 0000 too when all 10,000 are needed. */
export function sequenceNumbers(count: number): number[] {
  const first = count >= NUMBERS_PER_PREFIX ? 0 : 1;
  return Array.from({ length: count }, (_, i) => first + i);
}

export function prefixOfYear(year: number): string {
  return String(year % 100).padStart(2, '0');
}

/**
 * Integer shares of `total` in proportion to `weights`, none above `cap`: shares that would pass the cap are fixed
 * at it and the rest is shared again; rounding goes by largest remainder, ties to the earlier entry.
 */
export function waterFill(total: number, weights: readonly number[], cap: number): number[] {
  if (total > weights.length * cap) throw new Error(`cannot place ${total} in ${weights.length} slots of ${cap}`);
  const result = weights.map(() => 0);
  const active = new Set(weights.map((_, i) => i).filter((i) => (weights[i] ?? 0) > 0));
  let remaining = total;
  for (;;) {
    const sum = [...active].reduce((s, i) => s + (weights[i] ?? 0), 0);
    if (sum === 0 || remaining === 0) break;
    const capped = [...active].filter((i) => ((weights[i] ?? 0) * remaining) / sum >= cap);
    if (capped.length === 0) {
      const ideal = [...active].map((i) => ({ i, share: ((weights[i] ?? 0) * remaining) / sum }));
      let placed = 0;
      for (const { i, share } of ideal) {
        result[i] = Math.floor(share);
        placed += Math.floor(share);
      }
      ideal.sort((a, b) => b.share - Math.floor(b.share) - (a.share - Math.floor(a.share)) || a.i - b.i);
      for (let k = 0; k < remaining - placed; k++) {
        const entry = ideal[k];
        if (entry) result[entry.i] = (result[entry.i] ?? 0) + 1;
      }
      break;
    }
    for (const i of capped) {
      result[i] = cap;
      remaining -= cap;
      active.delete(i);
    }
  }
  return result;
}
