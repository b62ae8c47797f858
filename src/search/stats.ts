import { MAX_YEAR } from '../contract/search-index.ts';
import type { ListOrRange } from './docset.ts';
import type { SearchIndex } from './model.ts';

export type ReviewFigures = { count: number; min: number; median: number; p90: number; max: number };
export type ReviewStats = {
  reviewDays: (ReviewFigures & { byDecisionYear: ({ year: number } & ReviewFigures)[] }) | null;
};

/**
 * Review times (decision date minus received date, in days) over every match that has both dates: count, min,
 * median, 90th percentile and max, overall and by decision year (ascending). Percentiles are nearest-rank (the
 * value at rank ⌈p × count⌉), so each figure is a real review time. Null when no match has both dates.
 */
export function reviewStats(index: SearchIndex, docs: ListOrRange): ReviewStats {
  const { docDecided, docReceived, docYear } = index;
  const ids = docs instanceof Uint32Array ? docs : null;
  const from = docs instanceof Uint32Array ? 0 : docs.lo;
  const n = docs instanceof Uint32Array ? docs.length : docs.hi - docs.lo;
  const byYear = new Uint32Array(MAX_YEAR + 2);
  let count = 0;
  for (let i = 0; i < n; i++) {
    const d = ids ? ids[i]! : from + i;
    if (docDecided[d] !== 0 && docReceived[d] !== 0) {
      byYear[docYear[d]! + 1]!++;
      count++;
    }
  }
  if (count === 0) return { reviewDays: null };
  // Counting sort by year, then each year's days sorted.
  for (let y = 1; y < byYear.length; y++) byYear[y]! += byYear[y - 1]!;
  const start = byYear.slice();
  const days = new Int32Array(count);
  for (let i = 0; i < n; i++) {
    const d = ids ? ids[i]! : from + i;
    if (docDecided[d] !== 0 && docReceived[d] !== 0) days[byYear[docYear[d]!]!++] = docDecided[d]! - docReceived[d]!;
  }
  const perYear: ({ year: number } & ReviewFigures)[] = [];
  for (let y = 0; y <= MAX_YEAR; y++) {
    const lo = start[y]!;
    const hi = start[y + 1]!;
    if (hi === lo) continue;
    const slice = days.subarray(lo, hi).sort();
    perYear.push({ year: y, ...figures(slice) });
  }
  return { reviewDays: { ...figures(days.slice().sort()), byDecisionYear: perYear } };
}

function figures(sorted: Int32Array): ReviewFigures {
  const rank = (p: number) => sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;
  return { count: sorted.length, min: sorted[0]!, median: rank(0.5), p90: rank(0.9), max: sorted[sorted.length - 1]! };
}
