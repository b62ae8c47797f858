import type { SearchIndex } from './model.ts';
import { rankedPage, SmallestKeys } from './page.ts';
import { sortedIds } from './radix.ts';

import type { SORTS } from '../contract/operations.ts';
import { partitionPoint } from '../utils/bisect.ts';
import { idsByBits, listHas } from './docset.ts';
import { kept } from './kept.ts';

/** The orders a search can ask for (docs/search.md, "Sorts"). `relevance` is the default and today's order. */
export type Sort = (typeof SORTS)[number];

/** The matches of a search: a list of ids, ascending, or one id range [lo, hi). */
export type Members = { docs: Uint32Array } | { lo: number; hi: number };

/**
 * Positions [offset, offset + limit) of the matches in the sort's order. `docs` ascend by id, which is the tie order
 * of every sort but kNumber:asc (decision date descending, null last, then K number descending); `scores` are the
 * relevance points, null without query words. Only the page is ordered: relevance and the decision date need no key
 * at all; received date, review time and K number walk a precomputed order of every document when the matches are
 * dense in it, and otherwise select the best offset + limit keys of the matches in a bounded heap.
 */
export function orderPage(index: SearchIndex, docs: Uint32Array, scores: Uint32Array | null, sort: Sort, offset: number, limit: number): Uint32Array {
  if (offset >= docs.length || limit <= 0) return new Uint32Array(0);
  switch (sort) {
    case 'relevance':
      return rankedPage(docs, scores, offset, limit);
    case 'decisionDate:desc':
      return rankedPage(docs, null, offset, limit);
    case 'decisionDate:asc': {
      // Dated documents reversed, then the undated ones reversed (K number ascending among them).
      const decided = index.docDecided;
      const z = partitionPoint(0, docs.length, (i) => decided[docs[i]!]! !== 0);
      const size = Math.min(limit, docs.length - offset);
      const out = new Uint32Array(size);
      for (let i = 0; i < size; i++) {
        const p = offset + i;
        out[i] = p < z ? docs[z - 1 - p]! : docs[docs.length - 1 - (p - z)]!;
      }
      return out;
    }
    default:
      return keyedPage(index, { docs }, sort, offset, limit);
  }
}

/** The same as `orderPage` for the matches lo..hi-1 (no words, at most a year or decision-date range): no list made. */
export function orderRange(index: SearchIndex, lo: number, hi: number, sort: Sort, offset: number, limit: number): Uint32Array {
  const total = hi - lo;
  if (offset >= total || limit <= 0) return new Uint32Array(0);
  const size = Math.min(limit, total - offset);
  const out = new Uint32Array(size);
  switch (sort) {
    case 'relevance':
    case 'decisionDate:desc':
      for (let i = 0; i < size; i++) out[i] = lo + offset + i;
      return out;
    case 'decisionDate:asc': {
      // Ids from 0 to `undated` have a decision date; the dated part of the range reversed, then the undated part.
      const decided = index.docDecided;
      const undated = Math.min(hi, Math.max(lo, partitionPoint(0, index.docCount, (d) => decided[d]! !== 0)));
      const dated = undated - lo;
      for (let i = 0; i < size; i++) {
        const p = offset + i;
        out[i] = p < dated ? undated - 1 - p : hi - 1 - (p - dated);
      }
      return out;
    }
    default:
      return keyedPage(index, { lo, hi }, sort, offset, limit);
  }
}

export type KeyedSort = 'receivedDate:desc' | 'reviewDays:desc' | 'kNumber:asc';

/**
 * A keyed sort's primary key of document d, a non-negative integer up to 2^23, smaller first: received date and review
 * time descending with no value last, the K number ascending. Ties go by id (the tie order), so primary * 2^26 + id is
 * one exact number (below 2^50) per document that orders them all.
 */
function primary(index: SearchIndex, sort: KeyedSort, d: number): number {
  if (sort === 'kNumber:asc') return index.docKNumber[d]!;
  const r = index.docReceived[d]!;
  if (r === 0) return NO_KEY;
  if (sort === 'receivedDate:desc') return NO_KEY - r;
  const decided = index.docDecided[d]!;
  return decided === 0 ? NO_KEY : REVIEW_ZERO - (decided - r);
}
/** Above every key: day numbers stay below 2^22 (years up to 9999), review times within ±2^22 days. */
const NO_KEY = 2 ** 23;
const REVIEW_ZERO = 2 ** 22;
/** Document ids are below 2^26: a snapshot holds far fewer than 67 million clearances. */
const ID_SPAN = 2 ** 26;

const orders = new WeakMap<SearchIndex, Map<KeyedSort, Uint32Array>>();

/** Every document in a keyed sort's order: derived once per index by a counting pass over the keys (K numbers have theirs). */
export function orderOf(index: SearchIndex, sort: KeyedSort): Uint32Array {
  if (sort === 'kNumber:asc') return index.byKNumber;
  let byIndex = orders.get(index);
  if (!byIndex) orders.set(index, (byIndex = new Map()));
  const known = byIndex.get(sort);
  if (known) return known;
  const n = index.docCount;
  if (n === 0) return new Uint32Array(0);
  const keys = new Uint32Array(n);
  let least = NO_KEY;
  let most = 0;
  for (let d = 0; d < n; d++) {
    const key = primary(index, sort, d);
    keys[d] = key;
    if (key < least) least = key;
    if (key > most) most = key;
  }
  let out: Uint32Array;
  if (most - least <= 4 * n + 65_536) {
    // A counting pass over the keys' span (decades of days), ids ascending into each key's slots: ties in id order.
    const starts = new Uint32Array(most - least + 2);
    for (let d = 0; d < n; d++) starts[keys[d]! - least + 1]!++;
    for (let k = 0; k + 1 < starts.length; k++) starts[k + 1]! += starts[k]!;
    out = new Uint32Array(n);
    for (let d = 0; d < n; d++) out[starts[keys[d]! - least]!++] = d;
  } else {
    const packed = new Float64Array(n);
    for (let d = 0; d < n; d++) packed[d] = keys[d]! * ID_SPAN + d;
    packed.sort();
    out = new Uint32Array(n);
    for (let i = 0; i < n; i++) out[i] = packed[i]! % ID_SPAN;
  }
  byIndex.set(sort, kept(index, out, out.byteLength));
  return out;
}

/**
 * Where the documents passing a receipt date or review time range are in that sort's order of every document
 * (values descending, documents without one last): positions [above, within); those before are above the range,
 * those after below it or without a value.
 */
export function rangeSpan(
  index: SearchIndex,
  test: { kind: 'range' | 'review'; lo: number; hi: number },
): { order: Uint32Array; above: number; within: number } {
  const order = orderOf(index, test.kind === 'range' ? 'receivedDate:desc' : 'reviewDays:desc');
  const { docReceived, docDecided } = index;
  // The value of document d, or null: NaN compares false, so one test covers "no value".
  const value = (d: number): number => {
    const r = docReceived[d]!;
    if (r === 0) return Number.NaN;
    if (test.kind === 'range') return r;
    const decided = docDecided[d]!;
    return decided === 0 ? Number.NaN : decided - r;
  };
  const above = partitionPoint(0, order.length, (i) => value(order[i]!) > test.hi);
  const within = partitionPoint(above, order.length, (i) => value(order[i]!) >= test.lo);
  return { order, above, within };
}

const bitmaps = new WeakMap<SearchIndex, Uint8Array>();

/**
 * A byte per document (the length rounded up to a multiple of 4, for reading four at a time), all 0, made once per
 * index and lent to one search at a time, which leaves it all 0 again: a megabyte made per query at a million
 * documents kept the collector busy.
 */
export function zeroedBitmap(index: SearchIndex): Uint8Array {
  let bitmap = bitmaps.get(index);
  if (!bitmap) bitmaps.set(index, (bitmap = kept(index, new Uint8Array((index.docCount + 3) & ~3), (index.docCount + 3) & ~3)));
  return bitmap;
}

/**
 * Distinct ids of an index of `docCount` documents, ascending: sorted (`sortedIds`, linear) when fewer than
 * `docCount / sortUnder`, else set as bits and read back (`idsByBits`). Where the two meet depends on the caller:
 * matching sorts up to a tenth of the index (`sortUnder` 10), where a sort is still cheaper than reading a bit per
 * document; the id range of a sorted column uses 64.
 */
export function ascendingIds(ids: Uint32Array, docCount: number, sortUnder: number): Uint32Array {
  if (ids.length * sortUnder < docCount) return sortedIds(ids);
  return idsByBits(docCount, [ids]);
}

/** Which page-picking way a keyed sort takes; `keyedPage` chooses, tests force each one. */
export type Way = 'walk' | 'probe' | 'heap' | 'sort';

function keyedPage(index: SearchIndex, members: Members, sort: KeyedSort, offset: number, limit: number): Uint32Array {
  const m = 'docs' in members ? members.docs.length : members.hi - members.lo;
  const k = Math.min(m, offset + limit);
  // Walking the whole order visits about k * docCount / m documents; selecting reads each match once. When that walk
  // is short next to the list (dense matches, a small page), each document walked is looked up in the list by
  // binary search, rather than marking every match in a bitmap first and clearing it after (two passes over them).
  const steps = (k * index.docCount) / m;
  if ('docs' in members && m >= 4096 && steps * 32 <= m) {
    const page = pickPage(index, members, sort, offset, limit, 'probe', Math.ceil(m / 32));
    if (page) return page;
  }
  if (m >= 4096 && k * index.docCount <= 2 * m * m) {
    const page = pickPage(index, members, sort, offset, limit, 'walk', 4 * m);
    if (page) return page;
  }
  return pickPage(index, members, sort, offset, limit, k * 4 > m ? 'sort' : 'heap')!;
}

/**
 * Positions [offset, offset + limit) of the members in a keyed sort, one way:
 * - `walk`: down the whole order of the index, keeping members, until the page is full; null if that took more
 *   than `budget` steps (members clustered late in the order);
 * - `probe`: the same walk, each document looked up in the members by binary search (no bitmap made);
 * - `heap`: the offset + limit smallest keys in a bounded max-heap, then those sorted;
 * - `sort`: every member's key, sorted.
 */
export function pickPage(index: SearchIndex, members: Members, sort: KeyedSort, offset: number, limit: number, way: Way, budget = Infinity): Uint32Array | null {
  const list = 'docs' in members ? members.docs : null;
  const lo = list ? 0 : (members as { lo: number }).lo;
  const m = list ? list.length : (members as { hi: number }).hi - lo;
  if (offset >= m || limit <= 0) return new Uint32Array(0);
  const size = Math.min(limit, m - offset);
  const out = new Uint32Array(size);
  const k = offset + size;
  if (way === 'probe' && list) {
    const order = orderOf(index, sort);
    let seen = 0;
    let at = 0;
    for (let step = 0; step < order.length && seen < k; step++) {
      if (step >= budget) return null;
      const d = order[step]!;
      if (listHas(list, d)) {
        if (seen >= offset) out[at++] = d;
        seen++;
      }
    }
    return seen < k ? null : out;
  }
  if (way === 'walk' || way === 'probe') {
    const order = orderOf(index, sort);
    let member: Uint8Array | null = null;
    if (list) {
      member = zeroedBitmap(index);
      for (let i = 0; i < m; i++) member[list[i]!] = 1;
    }
    const hi = lo + m;
    let seen = 0;
    let at = 0;
    let step = 0;
    for (; step < order.length && seen < k && step < budget; step++) {
      const d = order[step]!;
      if (member ? member[d] === 1 : d >= lo && d < hi) {
        if (seen >= offset) out[at++] = d;
        seen++;
      }
    }
    if (member) for (let i = 0; i < m; i++) member[list![i]!] = 0;
    return seen < k ? null : out;
  }
  const at = (i: number): number => (list ? list[i]! : lo + i);
  let keys: Float64Array;
  if (way === 'sort') {
    keys = new Float64Array(m);
    for (let i = 0; i < m; i++) {
      const d = at(i);
      keys[i] = primary(index, sort, d) * ID_SPAN + d;
    }
    keys.sort();
  } else {
    // The k smallest keys (each holds its document), ascending.
    const heap = new SmallestKeys(k);
    for (let i = 0; i < m; i++) {
      const d = at(i);
      heap.offer(primary(index, sort, d) * ID_SPAN + d, d);
    }
    keys = heap.sortedKeys();
  }
  for (let i = 0; i < size; i++) out[i] = keys[offset + i]! % ID_SPAN;
  return out;
}

/**
 * A document's place in a sort as a tuple of numbers, compared element by element: ascending tuples are the answer
 * order. It holds only what the record itself says (and its relevance points, which depend only on the record and
 * the query), so an export cursor made of it keeps its meaning on a rebuilt snapshot.
 */
export function sortKey(index: SearchIndex, d: number, sort: Sort, score: number): number[] {
  const NULL_LAST = 1e9;
  const decided = index.docDecided[d]!;
  const k = index.docKNumber[d]!;
  const base = [decided === 0 ? NULL_LAST : -decided, -k];
  switch (sort) {
    case 'relevance':
      return [-score, ...base];
    case 'decisionDate:desc':
      return base;
    case 'decisionDate:asc':
      return [decided === 0 ? NULL_LAST : decided, k];
    case 'receivedDate:desc': {
      const r = index.docReceived[d]!;
      return [r === 0 ? NULL_LAST : -r, ...base];
    }
    case 'reviewDays:desc': {
      const r = index.docReceived[d]!;
      return [r === 0 || decided === 0 ? NULL_LAST : -(decided - r), ...base];
    }
    case 'kNumber:asc':
      return [k];
  }
}

export function compareKeys(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  return a.length - b.length;
}
