import { idRange } from '../utils/id-range.ts';
import type { Budget } from './budget.ts';

/**
 * The set algebra of document ids, one for every engine (/v1/query's matching and facets, the openFDA planner).
 *
 * A DocSet is a sorted list when the set is small and a bitmap (one bit per document) when it is not. Both are typed
 * arrays; nothing is an object per document. A search's matches with no words to test are an id range instead
 * (`ListOrRange`), which its facet counts and slices read without making a list.
 */
export class Bits {
  readonly words: Uint32Array;
  readonly size: number;
  constructor(size: number, words?: Uint32Array) {
    this.size = size;
    this.words = words ?? new Uint32Array((size + 31) >>> 5);
  }
  has(d: number): boolean {
    return ((this.words[d >>> 5]! >>> (d & 31)) & 1) === 1;
  }
  add(d: number): void {
    this.words[d >>> 5]! |= 1 << (d & 31);
  }
  addRange(lo: number, hi: number): void {
    for (let d = lo; d < hi && (d & 31) !== 0; d++) this.add(d);
    let d = lo + ((32 - (lo & 31)) & 31);
    for (; d + 32 <= hi; d += 32) this.words[d >>> 5] = 0xffffffff;
    for (; d < hi; d++) this.add(d);
  }
  count(): number {
    let n = 0;
    for (let i = 0; i < this.words.length; i++) n += popcount(this.words[i]!);
    return n;
  }
}

export type DocSet = Uint32Array | Bits;

/** The 32-bit words of a bitmap of `docCount` documents: the steps a pass over it costs. */
export const wordCount = (docCount: number): number => (docCount + 31) >>> 5;

/** The ids lo..hi-1. */
export type DocRange = { lo: number; hi: number };

/** Matches as an ascending list of document ids, or as one id range (no query words and at most a year filter). */
export type ListOrRange = Uint32Array | DocRange;

export function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/** Lists this short (a share of the documents) stay lists; longer sets become bitmaps. */
export const listLimit = (docCount: number): number => Math.max(64, docCount >>> 5);

export function countOf(set: DocSet): number {
  return set instanceof Bits ? set.count() : set.length;
}

export function toBits(set: DocSet, docCount: number): Bits {
  if (set instanceof Bits) return set;
  const bits = new Bits(docCount);
  for (let i = 0; i < set.length; i++) bits.add(set[i]!);
  return bits;
}

export function hasDoc(set: DocSet, d: number): boolean {
  return set instanceof Bits ? set.has(d) : listHas(set, d);
}

/** Whether the ascending list holds d (a binary search). */
export function listHas(list: Uint32Array, d: number): boolean {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]! < d) lo = mid + 1;
    else hi = mid;
  }
  return lo < list.length && list[lo] === d;
}

/** The members of a bitmap as an ascending list. */
export function listOfBits(bits: Bits): Uint32Array {
  const out = new Uint32Array(bits.count());
  let n = 0;
  const w = bits.words;
  for (let i = 0; i < w.length; i++) {
    let x = w[i]!;
    while (x !== 0) {
      const low = x & -x;
      out[n++] = (i << 5) + (31 - Math.clz32(low));
      x ^= low;
    }
  }
  return out;
}

export function rangeSet(lo: number, hi: number, docCount: number): DocSet {
  if (hi <= lo) return new Uint32Array(0);
  if (hi - lo <= listLimit(docCount)) return idRange(lo, hi);
  const bits = new Bits(docCount);
  bits.addRange(lo, hi);
  return bits;
}

/** Calls `f` for every member in ascending order until it returns false. */
export function eachDoc(set: DocSet, f: (d: number) => boolean | void): void {
  if (set instanceof Bits) {
    const w = set.words;
    for (let i = 0; i < w.length; i++) {
      let x = w[i]!;
      while (x !== 0) {
        const low = x & -x;
        const d = (i << 5) + (31 - Math.clz32(low));
        if (f(d) === false) return;
        x ^= low;
      }
    }
    return;
  }
  for (let i = 0; i < set.length; i++) if (f(set[i]!) === false) return;
}

/** Documents (or bitmap words) handled between two checks of the turn in a pass: well under a slice of work. */
export const PASS_CHUNK = 16_384;

/** The steps a set costs to make or to read once: its members when a list, its words when a bitmap. */
export const costOf = (set: DocSet): number => (set instanceof Bits ? set.words.length : set.length);

/**
 * Calls `f` for every member in ascending order, a chunk at a time with the host's turn given back when a slice of
 * work is spent; `f` returns the steps its document cost (1 for a plain read).
 */
export async function eachDocSliced(set: DocSet, budget: Budget, f: (d: number) => number): Promise<void> {
  if (set instanceof Bits) {
    const w = set.words;
    const step = PASS_CHUNK >>> 5;
    for (let lo = 0; lo < w.length; lo += step) {
      const hi = Math.min(w.length, lo + step);
      let steps = hi - lo;
      for (let i = lo; i < hi; i++) {
        let x = w[i]!;
        while (x !== 0) {
          const low = x & -x;
          steps += f((i << 5) + (31 - Math.clz32(low)));
          x ^= low;
        }
      }
      budget.charge(steps);
      await budget.turn();
    }
    return;
  }
  for (let lo = 0; lo < set.length; lo += PASS_CHUNK) {
    const hi = Math.min(set.length, lo + PASS_CHUNK);
    let steps = 0;
    for (let i = lo; i < hi; i++) steps += f(set[i]!);
    budget.charge(steps);
    await budget.turn();
  }
}

/** Members in ascending order from the `skip`-th, at most `limit` of them. */
export function sliceOf(set: DocSet, skip: number, limit: number): number[] {
  const out: number[] = [];
  if (limit <= 0) return out;
  if (!(set instanceof Bits)) {
    for (let i = skip; i < set.length && out.length < limit; i++) out.push(set[i]!);
    return out;
  }
  // Whole words are skipped by their bit counts, so a deep skip costs a pass over the bitmap, not a walk of its bits.
  const w = set.words;
  let left = skip;
  let i = 0;
  for (; i < w.length; i++) {
    const c = popcount(w[i]!);
    if (c > left) break;
    left -= c;
  }
  for (; i < w.length && out.length < limit; i++) {
    let x = w[i]!;
    while (x !== 0 && out.length < limit) {
      const low = x & -x;
      if (left > 0) left--;
      else out.push((i << 5) + (31 - Math.clz32(low)));
      x ^= low;
    }
  }
  return out;
}

/** All 0: the bits `idsByBits` lends itself from call to call (a 128 kB array each time was garbage). */
let spareBits: Uint32Array | null = null;

/**
 * The distinct ids of the lists (in any order), ascending: set as bits (a bit per document: 128 kB at a million,
 * small enough to stay in cache while ids in any order are set) and read back in id order.
 */
export function idsByBits(docCount: number, lists: readonly Uint32Array[]): Uint32Array {
  const words = (docCount + 31) >>> 5;
  // The bits are read back word by word and each word zeroed as it is read, so one array serves every call.
  const bits = spareBits !== null && spareBits.length === words ? spareBits : new Uint32Array(words);
  spareBits = null;
  let total = 0;
  for (const ids of lists) {
    total += ids.length;
    for (let i = 0; i < ids.length; i++) {
      const d = ids[i]!;
      bits[d >>> 5]! |= 1 << (d & 31);
    }
  }
  const out = new Uint32Array(total);
  let n = 0;
  for (let w = 0; w < bits.length; w++) {
    let word = bits[w]!;
    if (word === 0) continue;
    bits[w] = 0;
    while (word !== 0) {
      const low = word & -word;
      out[n++] = (w << 5) + 31 - Math.clz32(low);
      word ^= low;
    }
  }
  spareBits = bits;
  return n === total ? out : out.slice(0, n);
}

/** The union of sorted lists, as a list when small and a bitmap when not. */
export function unionOf(sets: readonly DocSet[], docCount: number): DocSet {
  let total = 0;
  for (const s of sets) total += s instanceof Bits ? docCount : s.length;
  if (sets.length === 1) return sets[0]!;
  if (total <= listLimit(docCount)) {
    const all = new Uint32Array(total);
    let at = 0;
    for (const s of sets) {
      all.set(s as Uint32Array, at);
      at += (s as Uint32Array).length;
    }
    all.sort();
    let n = 0;
    for (let i = 0; i < all.length; i++) if (n === 0 || all[n - 1] !== all[i]) all[n++] = all[i]!;
    return all.subarray(0, n);
  }
  const bits = new Bits(docCount);
  for (const s of sets) {
    if (s instanceof Bits) for (let i = 0; i < s.words.length; i++) bits.words[i]! |= s.words[i]!;
    else for (let i = 0; i < s.length; i++) bits.add(s[i]!);
  }
  return bits;
}

/** Adds the members of `set` to `acc`. */
export function unionInto(acc: Bits, set: DocSet): void {
  if (set instanceof Bits) for (let i = 0; i < set.words.length; i++) acc.words[i]! |= set.words[i]!;
  else for (let i = 0; i < set.length; i++) acc.add(set[i]!);
}

/** Documents not in the set. */
export function complementOf(set: DocSet, docCount: number): Bits {
  const src = toBits(set, docCount);
  const out = new Bits(docCount);
  for (let i = 0; i < out.words.length; i++) out.words[i] = ~src.words[i]!;
  const tail = docCount & 31;
  if (tail !== 0) out.words[out.words.length - 1]! &= (1 << tail) - 1;
  return out;
}

/** The intersection of two sets; a list stays a list. */
export function intersectionOf(a: DocSet, b: DocSet, docCount: number): DocSet {
  if (!(a instanceof Bits) || !(b instanceof Bits)) {
    const [list, other] = !(a instanceof Bits) ? [a, b] : [b as Uint32Array, a];
    const out = new Uint32Array(list.length);
    let n = 0;
    for (let i = 0; i < list.length; i++) if (hasDoc(other, list[i]!)) out[n++] = list[i]!;
    return out.subarray(0, n);
  }
  const out = new Bits(docCount);
  for (let i = 0; i < out.words.length; i++) out.words[i] = a.words[i]! & b.words[i]!;
  return out;
}

/** The rows of `rows` for each selected key, merged into one set. */
export function rowsUnion(offsets: Uint32Array, values: Uint32Array, keys: Iterable<number>, docCount: number): DocSet {
  const parts: Uint32Array[] = [];
  for (const k of keys) {
    const lo = offsets[k]!;
    const hi = offsets[k + 1]!;
    if (hi > lo) parts.push(values.subarray(lo, hi));
  }
  if (parts.length === 0) return new Uint32Array(0);
  return unionOf(parts, docCount);
}
