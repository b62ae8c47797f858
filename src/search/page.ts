import type { SORTS } from '../contract/operations.ts';
import { partitionPoint, lowerBound } from '../utils/bisect.ts';
import type { Budget } from './budget.ts';
import type { SearchIndex } from './model.ts';
import { Bits, eachDocSliced, popcount, sliceOf, type DocSet } from './docset.ts';

/**
 * The page of a set of matches, for every engine: /v1/query's relevance page (`rankedPage`), the bounded heap of the
 * smallest keys that its keyed sorts and openFDA's sorts both keep (`SmallestKeys`), and openFDA's page of an order
 * (`pageOf`: an id slice, a heap, or a selection, with `skip`/`limit` or after a key).
 */

/**
 * The order of an openFDA page. Without `sort`, the index's own order: decision date newest first (undated last), then K
 * number descending (document ids run in that order, so a page is a slice of the matches). With `sort=field:dir`,
 * the field's order with documents lacking a value last in both directions, then K number ascending: a total order,
 * as openFDA's (which breaks ties by its `_id`).
 */
export type SortKey = {
  key: (d: number) => number;
  descending: boolean;
  keyText: (key: number) => string;
  keyOf: (text: string) => number;
};

export type Order = { kNumber: Uint32Array; decided: Uint32Array; sort: SortKey | null };

/** 2^21 > every six-digit K number: a composite key is primary × 2^21 + K number, exact in a double. */
const K_SPAN = 2 ** 21;
const MISSING = 2 ** 31;

function composite(o: Order, d: number): number {
  const s = o.sort!;
  const k = s.key(d);
  const primary = k < 0 ? MISSING : s.descending ? -k : k;
  return primary * K_SPAN + o.kNumber[d]!;
}

/**
 * Where a page starts instead of `skip`: after the record of this key (openFDA's `search_after`, read by its caller
 * only when the page needs it): `first` is the decision day (0: undated) without `sort` and the sort's key with it;
 * `k` the K number's digits.
 */
export type PageAfter = { first: number; k: number };

/** Up to this many wanted, the page is kept in a bounded heap; more (a deep skip) are found by selection. */
const HEAP_MAX = 4096;

/**
 * The page: `limit` matches from `skip`, or after the `search_after` key. Without `sort`, a slice of the matches (ids
 * run in the default order). With `sort`, each match's composite key is read once, counted as work in `budget`, and
 * the page is the `want` smallest keys: a heap while few are wanted, and otherwise a selection (quickselect) of the
 * `skip`-th key and the `limit` after it, whose passes are counted and give the host its turn between them, so a
 * deep skip is a few passes over the keys, never a sort of all of them.
 */
export async function pageOf(set: DocSet, total: number, o: Order, skip: number, limit: number, after: (() => PageAfter) | null, budget: Budget): Promise<number[]> {
  if (!o.sort) {
    budget.charge(set instanceof Bits ? set.words.length : Math.min(set.length, skip + limit));
    if (after === null) return sliceOf(set, skip, limit);
    // The first id past the key: ids run by (decision date desc, undated last, K number desc).
    const { first: day, k } = after();
    const from = partitionPoint(0, o.decided.length, (i) => o.decided[i]! > day || (o.decided[i] === day && o.kNumber[i]! >= k));
    return sliceFrom(set, from, limit);
  }
  let floor = -Infinity;
  if (after !== null) {
    const { first: key, k } = after();
    const primary = key < 0 ? MISSING : o.sort.descending ? -key : key;
    floor = primary * K_SPAN + k;
  }
  const want = after === null ? skip + limit : limit;
  if (want <= 0 || total === 0) return [];
  if (want > HEAP_MAX) {
    const from = after === null ? skip : 0;
    return selectPage(set, total, o, floor, from, limit, budget);
  }
  // The `want` smallest composite keys above the floor: a bounded max-heap.
  const heap = new SmallestKeys(Math.min(want, total));
  await eachDocSliced(set, budget, (d) => {
    const c = composite(o, d);
    if (c > floor) heap.offer(c, d);
    return 1;
  });
  const sorted = heap.sortedDocs();
  return after === null ? sorted.slice(skip, skip + limit) : sorted.slice(0, limit);
}

/**
 * The matches ranked `from` to `from + limit - 1` by composite key (above `floor`): the keys read once into two typed
 * arrays (keys and documents, 12 bytes a match), then the `from`-th smallest selected in place, then the `limit - 1`
 * smallest of what lies above it, and those few sorted. Keys are distinct (the K number is part of each).
 */
async function selectPage(set: DocSet, total: number, o: Order, floor: number, from: number, limit: number, budget: Budget): Promise<number[]> {
  const keys = new Float64Array(total);
  const docs = new Uint32Array(total);
  let n = 0;
  await eachDocSliced(set, budget, (d) => {
    const c = composite(o, d);
    if (c > floor) {
      keys[n] = c;
      docs[n++] = d;
    }
    return 1;
  });
  if (from >= n || limit <= 0) return [];
  await selectNth(keys, docs, 0, n - 1, from, budget);
  const end = Math.min(n, from + limit);
  if (end - from > 1) await selectNth(keys, docs, from + 1, n - 1, end - 1, budget);
  const order = Array.from({ length: end - from }, (_, i) => from + i).sort((a, b) => keys[a]! - keys[b]!);
  budget.charge(order.length);
  return order.map((i) => docs[i]!);
}

/**
 * Hoare's selection over keys[lo..hi] (documents moved alongside): afterwards keys[k] is the one a sort would put
 * there, with none greater before it and none smaller after. Each partition pass is counted as work, and the host
 * gets its turn between passes when a slice is spent.
 */
async function selectNth(keys: Float64Array, docs: Uint32Array, lo: number, hi: number, k: number, budget: Budget): Promise<void> {
  let seed = 0x9e3779b9;
  while (hi > lo) {
    budget.charge(hi - lo + 1);
    // A pseudo-random pivot: no order of the matches makes every pass a bad one.
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    const pivot = keys[lo + (seed % (hi - lo + 1))]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (keys[i]! < pivot) i++;
      while (keys[j]! > pivot) j--;
      if (i <= j) {
        const tk = keys[i]!;
        keys[i] = keys[j]!;
        keys[j] = tk;
        const td = docs[i]!;
        docs[i] = docs[j]!;
        docs[j] = td;
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return;
    await budget.turn();
  }
}

/** Members with id ≥ from, at most `limit`. */
function sliceFrom(set: DocSet, from: number, limit: number): number[] {
  if (set instanceof Bits) {
    let before = 0;
    const w = set.words;
    const whole = from >>> 5;
    for (let i = 0; i < whole && i < w.length; i++) before += popcount(w[i]!);
    for (let d = whole << 5; d < from; d++) if (set.has(d)) before++;
    return sliceOf(set, before, limit);
  }
  const at = lowerBound(set, from);
  return sliceOf(set, at, limit);
}

/**
 * The `cap` smallest keys offered, each with its document: a bounded max-heap, whose root is the key a smaller one
 * replaces. Keys must be distinct (each holds its document or its K number), so the set kept is the same whatever the
 * order of the offers.
 */
export class SmallestKeys {
  readonly keys: Float64Array;
  readonly docs: Uint32Array;
  n = 0;
  constructor(cap: number) {
    this.keys = new Float64Array(cap);
    this.docs = new Uint32Array(cap);
  }
  offer(key: number, doc: number): void {
    const { keys, docs } = this;
    const cap = keys.length;
    if (this.n < cap) {
      let c = this.n++;
      while (c > 0) {
        const p = (c - 1) >> 1;
        if (keys[p]! >= key) break;
        keys[c] = keys[p]!;
        docs[c] = docs[p]!;
        c = p;
      }
      keys[c] = key;
      docs[c] = doc;
    } else if (key < keys[0]!) {
      let c = 0;
      for (;;) {
        let child = 2 * c + 1;
        if (child >= cap) break;
        if (child + 1 < cap && keys[child + 1]! > keys[child]!) child++;
        if (keys[child]! <= key) break;
        keys[c] = keys[child]!;
        docs[c] = docs[child]!;
        c = child;
      }
      keys[c] = key;
      docs[c] = doc;
    }
  }
  /** The keys kept, ascending (for keys that hold their document). */
  sortedKeys(): Float64Array {
    return this.keys.subarray(0, this.n).sort();
  }
  /** The documents kept, by ascending key. */
  sortedDocs(): number[] {
    const { keys, docs } = this;
    const order = Array.from({ length: this.n }, (_, i) => i).sort((a, b) => keys[a]! - keys[b]!);
    return order.map((i) => docs[i]!);
  }
}

/**
 * The requested page of matches in answer order: score descending, then document id ascending (ids are already in
 * tie order: decision date descending, null last, then K number descending). Without scores the matches are in answer
 * order as they are. Scores are small integers, so one counting pass finds which score buckets overlap the page and
 * a second pass picks their documents: no sort of all matches.
 */
export function rankedPage(docs: Uint32Array, scores: Uint32Array | null, offset: number, limit: number): Uint32Array {
  if (offset >= docs.length || limit <= 0) return new Uint32Array(0);
  if (scores === null) return docs.slice(offset, offset + limit);

  const histogram = scoreHistogram(scores);
  const max = histogram.length - 1;

  // For each score that overlaps the page: how many of its documents to skip, how many to take, where they go.
  const skip = new Float64Array(max + 1);
  const take = new Float64Array(max + 1);
  const at = new Float64Array(max + 1);
  const size = Math.min(limit, docs.length - offset);
  let before = 0;
  let placed = 0;
  for (let s = max; s >= 0 && placed < size; s--) {
    const count = histogram[s]!;
    if (count === 0) continue;
    if (before + count > offset) {
      skip[s] = Math.max(0, offset - before);
      take[s] = Math.min(count - skip[s]!, size - placed);
      at[s] = placed;
      placed += take[s]!;
    }
    before += count;
  }

  // Stops once the page is full: on a first page, most often within its first few hundred matches.
  const out = new Uint32Array(size);
  let left = size;
  for (let i = 0; i < docs.length && left > 0; i++) {
    const s = scores[i]!;
    if (take[s] === 0) continue;
    if (skip[s]! > 0) skip[s]!--;
    else {
      out[at[s]!++] = docs[i]!;
      take[s]!--;
      left--;
    }
  }
  return out;
}

/** How many matches have each score, up to the highest (its length is the highest score + 1). */
function scoreHistogram(scores: Uint32Array): Uint32Array {
  // One pass when every score is below 64 (a query of up to six words): counted straight into a table that size.
  const small = new Uint32Array(64);
  let max = 0;
  let i = 0;
  for (; i < scores.length; i++) {
    const s = scores[i]!;
    if (s >= 64) break;
    small[s]!++;
    if (s > max) max = s;
  }
  if (i === scores.length) return small.subarray(0, max + 1);
  for (let j = i; j < scores.length; j++) if (scores[j]! > max) max = scores[j]!;
  const histogram = new Uint32Array(max + 1);
  for (let j = 0; j < scores.length; j++) histogram[scores[j]!]!++;
  return histogram;
}

/**
 * Positions [offset, offset + limit) of the documents not failed (a byte a document, 1: failed; `total` of them pass),
 * in a /v1/query sort's order (docs/search.md, "Sorts"): the ids, the dated ids reversed then the undated ones, or the
 * sort's precomputed order of every document (`orderOf`, read only for those sorts).
 */
export function maskPage(index: SearchIndex, failed: Uint8Array, total: number, sort: (typeof SORTS)[number], offset: number, limit: number, orderOf: () => Uint32Array): Uint32Array {
  const size = Math.max(0, Math.min(limit, total - offset));
  const out = new Uint32Array(size);
  if (size === 0) return out;
  const n = index.docCount;
  let seen = 0;
  let at = 0;
  const visit = (d: number): boolean => {
    if (failed[d] === 1) return false;
    if (seen >= offset) out[at++] = d;
    seen++;
    return at === size;
  };
  // In id order, four failed ids in a row are skipped at once: a date range's failures are long runs of ids.
  const quads = new Uint32Array(failed.buffer, failed.byteOffset, failed.length >>> 2);
  const ALL_FAILED = 0x01010101;
  switch (sort) {
    case 'relevance':
    case 'decisionDate:desc':
      for (let d = 0; d < n; ) {
        if ((d & 3) === 0 && quads[d >>> 2] === ALL_FAILED) {
          d += 4;
          continue;
        }
        if (visit(d)) break;
        d++;
      }
      break;
    case 'decisionDate:asc': {
      // Dated documents from the oldest, then the undated ones reversed (K number ascending).
      const decided = index.docDecided;
      const dated = partitionPoint(0, n, (d) => decided[d]! !== 0);
      let done = false;
      for (let d = dated - 1; d >= 0 && !done; ) {
        if ((d & 3) === 3 && quads[d >>> 2] === ALL_FAILED) {
          d -= 4;
          continue;
        }
        done = visit(d);
        d--;
      }
      for (let d = n - 1; d >= dated && !done; d--) done = visit(d);
      break;
    }
    default: {
      const order = orderOf();
      for (let i = 0; i < order.length; i++) if (visit(order[i]!)) break;
    }
  }
  return out;
}
