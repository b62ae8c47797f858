/**
 * The binary search of the codebase: the first i in [lo, hi) for which `before(i)` is false, where `before` is true
 * then false along the range (hi when it never turns false). Every sorted lookup (shards, table entries, index terms,
 * years) states its order as `before` and asks this, or `lowerBound` below for a sorted list of numbers.
 */
export function partitionPoint(lo: number, hi: number, before: (i: number) => boolean): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (before(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * `partitionPoint(lo, hi, (i) => sorted[i] < value)` over an ascending list of numbers, without a function call per
 * step: the engine's inner loops (a year's documents among the matches, a word's documents within an id range) ask
 * it many times a request, where the call through a predicate that many callers share costs more than the comparison.
 */
export function lowerBound(sorted: Uint32Array, value: number, lo = 0, hi = sorted.length): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
