import type { Facet } from '../contract/envelope.ts';
import { lowerBound } from '../utils/bisect.ts';
import { rowsByValue } from './csr.ts';
import { decidedIds, qualifierTest, shareOf, type Test } from './column-tests.ts';
import { facetsWithout } from './facets.ts';
import type { ParsedQuery } from './grammar.ts';
import { yearRange, type SearchIndex } from './model.ts';
import { maskPage } from './page.ts';
import { orderOf, rangeSpan, zeroedBitmap, type KeyedSort, type Sort } from './sort.ts';
import { kept } from './kept.ts';

/**
 * Queries made only of filters that pass most documents (thirdparty:no -country:MY, thirdparty:no received:>=1990):
 * listing their matches, often every document, costs a pass over the index per filter and more to count their
 * facets. Here the documents that fail are marked instead, from where each filter's failures already are: a set
 * filter's failing values hold their documents in one row each (the column grouped by value, made once per column),
 * a receipt date or review time range fails at both ends of that sort's order of every document. The answer is then
 * every document but those: the total by subtraction, the facets counted from the shorter side, the failures or the
 * passes (whole blocks of ids at once, src/search/facets.ts), and the page by walking the sort's order past the
 * failures. Null when the query is not of that kind, when the failures it sets one by one could be more than half the
 * documents, or when it could pass under an eighth of them (then listing the matches is cheaper than walking past the
 * failures). A receipt date range's failures are mostly one run of ids (ids run in decision date order), set at once
 * and taken off the facets a whole block at a time: they count in the first bound only for what lies outside the run.
 */
export type DenseOutcome = { total: number; page: Uint32Array; facets: Facet[] };

/**
 * A filter's failing documents: how many (at most), how many documents marking them visits one by one (the rest are
 * runs of ids set at once), and a loop that sets their bytes in `failed` to 1.
 */
type Failing = { count: number; work: number; runs: [number, number][]; mark: (failed: Uint8Array) => void };

export function denseSearch(
  index: SearchIndex,
  parsed: ParsedQuery,
  filters: { yearFrom: number | null; yearTo: number | null },
  sort: Sort,
  offset: number,
  limit: number,
): DenseOutcome | null {
  const n = index.docCount;
  if (n === 0) return null;
  const ids = yearRange(index, filters.yearFrom, filters.yearTo);
  const failing: Failing[] = [];
  for (const clause of parsed.clauses) {
    if (clause.length !== 1 || clause[0]!.kind !== 'field') return null;
    const term = clause[0]!;
    if (term.kind !== 'field') return null;
    if (!term.negate && term.qualifier.field === 'decided') {
      const r = decidedIds(index, term.qualifier.range);
      ids.lo = Math.max(ids.lo, r.lo);
      ids.hi = Math.min(ids.hi, r.hi);
      continue;
    }
    const test = qualifierTest(index, term.qualifier);
    const f = test && failures(index, test, term.negate);
    if (!f || f.work * 2 > n) return null;
    failing.push(f);
  }
  if (ids.hi <= ids.lo) return null;
  // Documents outside the id range fail too: two runs.
  failing.push({
    count: n - (ids.hi - ids.lo),
    work: 0,
    runs: [[0, ids.lo], [ids.hi, n]],
    mark: (failed) => {
      failed.fill(1, 0, ids.lo);
      failed.fill(1, ids.hi, n);
    },
  });
  let count = 0;
  let work = 0;
  for (const f of failing) {
    count += f.count;
    work += f.work;
  }
  // At least n - count documents pass (filters may fail the same ones).
  if (work * 2 > n || (n - count) * 8 < n) return null;

  // Filters may fail the same document: each only sets bytes, and one pass over them in id order counts the distinct
  // failures and takes them off the facets, reading the columns in order (a list in the filters' order, mostly a
  // sort's order, read them scattered: several times slower at a million documents).
  const failed = zeroedBitmap(index);
  for (const f of failing) f.mark(failed);
  const { left, facets } = facetsWithout(index, failed, failing.flatMap((f) => f.runs), Math.min(n, count));
  const total = n - left;
  const page = maskPage(index, failed, total, sort, offset, limit, () => orderOf(index, sort as KeyedSort));
  failed.fill(0);
  return { total, page, facets };
}

/** Where the documents that fail a test are, or null when this test's failures cannot be listed that way. */
function failures(index: SearchIndex, test: Test, negate: boolean): Failing | null {
  if (test.kind === 'set') {
    if (test.col instanceof Uint32Array) return null;
    const rows = rowsByValue(test.col);
    const { offsets, values } = rows;
    const want = negate ? 0 : 1;
    // How many fail, from the share that passes (exact for these columns, kept per test).
    const passing = Math.round(shareOf(index, test) * index.docCount);
    const cost = negate ? passing : index.docCount - passing;
    return {
      count: cost,
      work: cost,
      runs: [],
      mark: (failed) => {
        for (let v = 0; v + 1 < offsets.length; v++) {
          if (test.ok[v] !== want) for (let i = offsets[v]!, end = offsets[v + 1]!; i < end; i++) failed[values[i]!] = 1;
        }
      },
    };
  }
  if (test.kind === 'range' || test.kind === 'review') {
    const { order, above, within } = rangeSpan(index, test);
    const spans: [number, number][] = negate ? [[above, within]] : [[0, above], [within, order.length]];
    const count = spans.reduce((s, [a, b]) => s + b - a, 0);
    // A receipt date range passes no document between the two id ranges of `within` (src/search/column-tests.ts): those
    // ids fail as one run, set at once. The failures outside it are found either down the spans of the order (which
    // also hold the run's ids, skipped) or by testing the ids outside the run in id order: the shorter.
    const [, from, to] = !negate && test.kind === 'range' && test.within ? test.within : [0, 0, 0];
    if (test.kind === 'range' && to > from) {
      const { col, lo, hi } = test;
      const zones = zonesOf(col);
      const outside = zoneWork(zones, lo, hi, 0, from) + zoneWork(zones, lo, hi, to, index.docCount);
      if (outside < count) {
        return {
          count,
          work: outside,
          runs: [[from, to]],
          mark: (failed) => {
            failed.fill(1, from, to);
            markOutside(col, zones, lo, hi, 0, from, failed);
            markOutside(col, zones, lo, hi, to, index.docCount, failed);
          },
        };
      }
    }
    return {
      count,
      work: count,
      runs: to > from ? [[from, to]] : [],
      mark: (failed) => {
        failed.fill(1, from, to);
        for (const [a, b] of spans) {
          for (let i = a; i < b; i++) {
            const d = order[i]!;
            if (d < from || d >= to) failed[d] = 1;
          }
        }
      },
    };
  }
  return null;
}

/** Ids per zone of `zonesOf`. */
const ZONE = 256;

/**
 * A day column's zone map: the least and the greatest day of each run of ZONE ids (days present only), and the ids
 * without a day, ascending. Made once per column: ids run in decision date order, so receipt dates are close within
 * a zone, and a range test need not read a zone that lies wholly within its days.
 */
type Zones = { least: Uint32Array; most: Uint32Array; undated: Uint32Array };
const zonesByColumn = new WeakMap<Uint32Array, Zones>();

function zonesOf(col: Uint32Array): Zones {
  let zones = zonesByColumn.get(col);
  if (!zones) {
    const count = Math.ceil(col.length / ZONE);
    const least = new Uint32Array(count).fill(0xffffffff);
    const most = new Uint32Array(count);
    const undated: number[] = [];
    for (let d = 0; d < col.length; d++) {
      const v = col[d]!;
      if (v === 0) {
        undated.push(d);
        continue;
      }
      const z = (d / ZONE) | 0;
      if (v < least[z]!) least[z] = v;
      if (v > most[z]!) most[z] = v;
    }
    zones = { least, most, undated: Uint32Array.from(undated) };
    zonesByColumn.set(col, kept(col, zones, least.byteLength + most.byteLength + zones.undated.byteLength));
  }
  return zones;
}

/** How many ids `markOutside` reads over [from, to): those of the zones not wholly within [lo, hi], and the undated. */
function zoneWork(zones: Zones, lo: number, hi: number, from: number, to: number): number {
  if (to <= from) return 0;
  let work = 0;
  for (let z = (from / ZONE) | 0, last = ((to - 1) / ZONE) | 0; z <= last; z++) if (zones.least[z]! < lo || zones.most[z]! > hi) work += ZONE;
  return work + zones.undated.length;
}

/** Sets failed[d] to 1 for each id d in [from, to) whose day col[d] is outside [lo, hi] or absent (0). */
function markOutside(col: Uint32Array, zones: Zones, lo: number, hi: number, from: number, to: number, failed: Uint8Array): void {
  if (to <= from) return;
  const { least, most, undated } = zones;
  for (let i = lowerBound(undated, from); i < undated.length && undated[i]! < to; i++) failed[undated[i]!] = 1;
  const span = hi - lo;
  for (let z = (from / ZONE) | 0, last = ((to - 1) / ZONE) | 0; z <= last; z++) {
    if (least[z]! >= lo && most[z]! <= hi) continue;
    for (let d = Math.max(from, z * ZONE), end = Math.min(to, (z + 1) * ZONE); d < end; d++) if ((col[d]! - lo) >>> 0 > span) failed[d] = 1;
  }
}
