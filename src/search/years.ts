import type { SearchIndex } from './model.ts';

/**
 * How many documents each decision year holds, over the whole index, ascending by year; documents without a
 * decision date are counted under `null`. One pass over the year column, which is sorted, so a run per year.
 */
export function yearCounts(index: SearchIndex): { year: number | null; count: number }[] {
  const out: { year: number | null; count: number }[] = [];
  const { docYear, docCount } = index;
  let d = 0;
  while (d < docCount) {
    const y = docYear[d]!;
    let end = d + 1;
    while (end < docCount && docYear[end] === y) end++;
    out.push({ year: y === 0 ? null : y, count: end - d });
    d = end;
  }
  return out.sort((a, b) => (a.year ?? 100_000) - (b.year ?? 100_000));
}
