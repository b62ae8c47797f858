import { partitionPoint } from '../utils/bisect.ts';
import { Bits, popcount, sliceOf, type DocSet } from './docset.ts';
import { BadQuery, eachDocSliced, type Budget } from './plan.ts';

/**
 * The order of a page. Without `sort`, the index's own order: decision date newest first (undated last), then K
 * number descending (document ids run in that order, so a page is a slice of the matches). With `sort=field:dir`,
 * the field's order with documents lacking a value last in both directions, then K number ascending: a total order,
 * as openFDA's (which breaks ties by its `_id`).
 *
 * `search_after` is the key of the last record of the previous page, written `0=<value>;1=<K number>` as openFDA
 * writes its own (qs.stringify of the sort values with `;`).
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

export function parseSearchAfter(raw: string): string[] {
  const parts = raw.split(';').map((p) => {
    const m = /^(\d+)=(.*)$/.exec(p);
    if (!m) throw new BadQuery(`search_after: "${raw}" is not a key this service wrote (0=<value>;1=<K number>)`);
    return [Number(m[1]), decodeURIComponent(m[2]!)] as const;
  });
  return parts.sort((a, b) => a[0] - b[0]).map((p) => p[1]);
}

const kDigits = (text: string | undefined): number => {
  const m = /^K(\d{6})$/i.exec(text ?? '');
  if (!m) throw new BadQuery(`search_after: its last value must be the K number of the previous page's last record`);
  return Number(m[1]);
};

/** Up to this many wanted, the page is kept in a bounded heap; more (a deep skip) are found by selection. */
const HEAP_MAX = 4096;

/**
 * The page: `limit` matches from `skip`, or after the `search_after` key. Without `sort`, a slice of the matches (ids
 * run in the default order). With `sort`, each match's composite key is read once, counted as work in `budget`, and
 * the page is the `want` smallest keys: a heap while few are wanted, and otherwise a selection (quickselect) of the
 * `skip`-th key and the `limit` after it, whose passes are counted and give the host its turn between them, so a
 * deep skip is a few passes over the keys, never a sort of all of them.
 */
export async function pageOf(set: DocSet, total: number, o: Order, skip: number, limit: number, after: string[] | null, budget: Budget): Promise<number[]> {
  if (!o.sort) {
    budget.charge(set instanceof Bits ? set.words.length : Math.min(set.length, skip + limit));
    if (after === null) return sliceOf(set, skip, limit);
    // The first id past the key: ids run by (decision date desc, undated last, K number desc).
    const day = after[0] === '' || after[0] === undefined ? 0 : Number(after[0]);
    if (!Number.isInteger(day)) throw new BadQuery(`search_after: "${after[0]}" is not a key this service wrote`);
    const k = kDigits(after[1]);
    const from = partitionPoint(0, o.decided.length, (i) => o.decided[i]! > day || (o.decided[i] === day && o.kNumber[i]! >= k));
    return sliceFrom(set, from, limit);
  }
  let floor = -Infinity;
  if (after !== null) {
    const k = kDigits(after[1]);
    const key = o.sort.keyOf(after[0] ?? '');
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
  const heapKeys = new Float64Array(Math.min(want, total));
  const heapDocs = new Uint32Array(heapKeys.length);
  let n = 0;
  const cap = heapKeys.length;
  const siftDown = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < n && heapKeys[l]! > heapKeys[m]!) m = l;
      if (r < n && heapKeys[r]! > heapKeys[m]!) m = r;
      if (m === i) return;
      [heapKeys[i], heapKeys[m]] = [heapKeys[m]!, heapKeys[i]!];
      [heapDocs[i], heapDocs[m]] = [heapDocs[m]!, heapDocs[i]!];
      i = m;
    }
  };
  await eachDocSliced(set, budget, (d) => {
    const c = composite(o, d);
    if (c <= floor) return 1;
    if (n < cap) {
      let i = n++;
      heapKeys[i] = c;
      heapDocs[i] = d;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (heapKeys[p]! >= heapKeys[i]!) break;
        [heapKeys[i], heapKeys[p]] = [heapKeys[p]!, heapKeys[i]!];
        [heapDocs[i], heapDocs[p]] = [heapDocs[p]!, heapDocs[i]!];
        i = p;
      }
    } else if (c < heapKeys[0]!) {
      heapKeys[0] = c;
      heapDocs[0] = d;
      siftDown(0);
    }
    return 1;
  });
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => heapKeys[a]! - heapKeys[b]!);
  const sorted = order.map((i) => heapDocs[i]!);
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
  const at = partitionPoint(0, set.length, (i) => set[i]! < from);
  return sliceOf(set, at, limit);
}

/** The `search_after` value that resumes after document `d`. */
export function afterKeyOf(o: Order, d: number): string {
  const k = `K${String(o.kNumber[d]!).padStart(6, '0')}`;
  const first = o.sort ? o.sort.keyText(o.sort.key(d)) : o.decided[d] === 0 ? '' : String(o.decided[d]!);
  return `0=${encodeURIComponent(first)};1=${k}`;
}
