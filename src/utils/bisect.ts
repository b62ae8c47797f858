/**
 * The one binary search of the codebase: the first i in [lo, hi) for which `before(i)` is false, where `before` is
 * true then false along the range (hi when it never turns false). Every sorted lookup (shards, table entries, index
 * terms, years) states its order as `before` and asks this.
 */
export function partitionPoint(lo: number, hi: number, before: (i: number) => boolean): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (before(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
