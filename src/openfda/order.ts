import { partitionPoint } from '../utils/bisect.ts';
import { Bits, eachDoc, popcount, sliceOf, type DocSet } from './docset.ts';
import { BadQuery } from './plan.ts';

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

/** The page: `limit` matches from `skip`, or after the `search_after` key. */
export function pageOf(set: DocSet, total: number, o: Order, skip: number, limit: number, after: string[] | null): number[] {
  if (!o.sort) {
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
  // The `want` smallest composite keys above the floor: a bounded max-heap, or one sort when most are wanted.
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
  eachDoc(set, (d) => {
    const c = composite(o, d);
    if (c <= floor) return;
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
  });
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => heapKeys[a]! - heapKeys[b]!);
  const sorted = order.map((i) => heapDocs[i]!);
  return after === null ? sorted.slice(skip, skip + limit) : sorted.slice(0, limit);
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
