import { NO_CODE } from '../contract/search-index.ts';
import { noApplicantIn } from './codec.ts';
import { partitionPoint, lowerBound } from '../utils/bisect.ts';
import type { SearchIndex } from './model.ts';
import { idsByBits } from './docset.ts';
import { kNumberRange } from './tokenize.ts';
import { kept } from './kept.ts';

/**
 * How well one query word matches one document, best first. The field decides before the kind of match: a prefix
 * match in deviceName, kNumber or productCode beats a whole-word match in the applicant or the device type.
 */
export const Tier = {
  none: 0,
  secondaryPrefix: 1,
  secondaryWhole: 2,
  primaryPrefix: 3,
  primaryWhole: 4,
} as const;
export type Tier = (typeof Tier)[keyof typeof Tier];

/** Tiers of a few ids (product codes or applicant groups), kept sparse: a query may have many words. */
export type TierSet = { ids: Uint32Array; tiers: Uint8Array };

/** One query word resolved against the index: which terms, K numbers, product codes and applicants it reaches. */
export type PreparedWord = {
  word: string;
  /** Terms starting with the word: ids [termLo, termHi); `exact` is the id of the word itself, or -1. */
  termLo: number;
  termHi: number;
  exact: number;
  /** K numbers starting with the word, as a range of `byKNumber`, and the tier they score. */
  k: { lo: number; hi: number; from: number; to: number; tier: Tier } | null;
  /** Product codes: the best of the code itself (primary) and its device type's words (secondary). */
  codes: TierSet;
  /** Applicant groups, through their words (secondary). */
  applicants: TierSet;
  /** How many postings scanning this word visits. */
  scanCost: number;
  /** Per-id tiers for checking documents one by one; made on first use, dropped with `release`. */
  dense: { codes: Uint8Array | null; applicants: Uint8Array | null } | null;
  /** Per document, the word's terms (see `termMarks`), on an index without forward lists; dropped with `release`. */
  marks: Uint8Array | null;
};

/** Zeroed per-id arrays a query lends to each word in turn while it collects its tiers. */
export type Scratch = { codes: Uint8Array; applicants: Uint8Array };

export const newScratch = (index: SearchIndex): Scratch => ({
  codes: new Uint8Array(index.codes.length),
  applicants: new Uint8Array(index.applicants.length),
});

/** Collects the best tier per id in `scratch`, then hands it back zeroed. */
class TierCollector {
  private readonly ids: number[] = [];
  constructor(private readonly scratch: Uint8Array) {}
  raise(id: number, tier: Tier): void {
    const old = this.scratch[id]!;
    if (old === 0) this.ids.push(id);
    if (tier > old) this.scratch[id] = tier;
  }
  take(): TierSet {
    const ids = Uint32Array.from(this.ids);
    const tiers = new Uint8Array(ids.length);
    for (let i = 0; i < ids.length; i++) {
      tiers[i] = this.scratch[ids[i]!]!;
      this.scratch[ids[i]!] = 0;
    }
    return { ids, tiers };
  }
}

/** A word of at most this many letters also reaches the product codes that start with it. */
const SHORT_WORD = 3;

export function prepareWord(index: SearchIndex, word: string, scratch: Scratch = newScratch(index)): PreparedWord {
  const { terms } = index;
  const termLo = partitionPoint(0, terms.length, (i) => terms[i]! < word);
  const termHi = termLo + partitionPoint(0, terms.length - termLo, (i) => terms[termLo + i]!.startsWith(word));
  const exact = termLo < termHi && terms[termLo] === word ? termLo : -1;
  let scanCost = index.termDocOffsets[termHi]! - index.termDocOffsets[termLo]!;

  let k: PreparedWord['k'] = null;
  const kr = kNumberRange(word);
  if (kr) {
    const { byKNumber, docKNumber } = index;
    const lo = partitionPoint(0, byKNumber.length, (i) => docKNumber[byKNumber[i]!]! < kr.from);
    const hi = partitionPoint(0, byKNumber.length, (i) => docKNumber[byKNumber[i]!]! <= kr.to);
    if (hi > lo) {
      k = { lo, hi, from: kr.from, to: kr.to, tier: kr.whole ? Tier.primaryWhole : Tier.primaryPrefix };
      scanCost += hi - lo;
    }
  }

  const codes = new TierCollector(scratch.codes);
  const applicants = new TierCollector(scratch.applicants);
  if (word.length <= SHORT_WORD) {
    const lower = index.codesLower;
    for (let c = partitionPoint(0, lower.length, (i) => lower[i]! < word); c < lower.length && lower[c]!.startsWith(word); c++) {
      codes.raise(c, lower[c] === word ? Tier.primaryWhole : Tier.primaryPrefix);
    }
  }
  for (let t = termLo; t < termHi; t++) {
    const tier = t === exact ? Tier.secondaryWhole : Tier.secondaryPrefix;
    for (let i = index.termCodeOffsets[t]!, end = index.termCodeOffsets[t + 1]!; i < end; i++) codes.raise(index.termCodes[i]!, tier);
    for (let i = index.termApplicantOffsets[t]!, end = index.termApplicantOffsets[t + 1]!; i < end; i++) {
      applicants.raise(index.termApplicants[i]!, tier);
    }
  }
  const codeSet = codes.take();
  const applicantSet = applicants.take();
  const w: PreparedWord = { word, termLo, termHi, exact, k, codes: codeSet, applicants: applicantSet, scanCost, dense: null, marks: null };
  for (const [set, rows] of rowsOf(index, w)) for (const id of set.ids) w.scanCost += rows.offsets[id + 1]! - rows.offsets[id]!;
  return w;
}

function denseTiers(set: TierSet, size: number): Uint8Array | null {
  if (set.ids.length === 0) return null;
  const out = new Uint8Array(size);
  for (let i = 0; i < set.ids.length; i++) out[set.ids[i]!] = set.tiers[i]!;
  return out;
}

/** The word's per-id tiers, made on first use. */
function denseOf(index: SearchIndex, w: PreparedWord): NonNullable<PreparedWord['dense']> {
  return (w.dense ??= { codes: denseTiers(w.codes, index.codes.length), applicants: denseTiers(w.applicants, index.applicants.length) });
}

/**
 * The product codes and the applicant groups the word reaches, each with rows holding the documents of every code or
 * group it reaches: those its terms reach (`wordCodeDocs`, `wordApplicantDocs`), and for a short word, which reaches
 * codes by their letters too, the whole `codeDocs`.
 */
function rowsOf(index: SearchIndex, w: PreparedWord): readonly (readonly [TierSet, SearchIndex['codeDocs']])[] {
  return [
    [w.codes, w.word.length <= SHORT_WORD ? index.codeDocs : index.wordCodeDocs],
    [w.applicants, index.wordApplicantDocs],
  ];
}

/**
 * Drops the word's per-id arrays once the query is done with it; its marks (`termMarks`), made over `index`, go back
 * zeroed to the index's pool.
 */
export function release(w: PreparedWord, index: SearchIndex): void {
  w.dense = null;
  if (w.marks) giveBackMarks(index, w.marks, w.termLo, w.termHi);
  w.marks = null;
}

/**
 * Zeroed arrays of a byte per document kept per index, at most two, lent to one search (one word) at a time. An array
 * is counted for the index (kept.ts) from when it first goes in until it is let go of, lent or not, so that what is
 * counted is what is held: one given back to a full pool goes, and its count with it.
 */
class ArrayPool {
  private readonly pools = new WeakMap<SearchIndex, Uint8Array[]>();
  private readonly counted = new WeakSet<Uint8Array>();

  take(index: SearchIndex): Uint8Array | undefined {
    return this.pools.get(index)?.pop();
  }

  /** `array`, zeroed, back to the index's pool, or let go of when two are there. */
  giveBack(index: SearchIndex, array: Uint8Array): void {
    let pool = this.pools.get(index);
    if (!pool) this.pools.set(index, (pool = []));
    const counted = this.counted.has(array);
    if (pool.length >= 2 || array.length !== index.docCount) {
      if (counted) kept(index, array, -array.byteLength);
      this.counted.delete(array);
      return;
    }
    if (!counted) {
      kept(index, array, array.byteLength);
      this.counted.add(array);
    }
    pool.push(array);
  }
}

/**
 * Mark arrays (`termMarks`): a megabyte each at a million documents, made for every word a query checks rather than
 * scans, on an index without forward lists (a chunked one).
 */
const markPool = new ArrayPool();

/** Mark arrays lent to a word (`termMarks`) and those of them made rather than taken from a pool: for measurements and tests. */
export const markArrays = { lent: 0, made: 0 };

/** Marks of the terms [lo, hi) (`termMarks`) zeroed and given back to the index's pool. */
function giveBackMarks(index: SearchIndex, marks: Uint8Array, lo: number, hi: number): void {
  const { termDocOffsets: offsets, termDocs: docs } = index;
  // The exact word is one of the range's terms: its documents are among those cleared.
  if ((offsets[hi]! - offsets[lo]!) * 8 < marks.length) for (let i = offsets[lo]!, end = offsets[hi]!; i < end; i++) marks[docs[i]!] = 0;
  else marks.fill(0);
  markPool.giveBack(index, marks);
}

/** What `termMarks` writes for a document: one of the range's terms, or the exact word itself. */
const IN_RANGE = 1;
const EXACT = 2;

/**
 * Per document, whether it holds a term in [lo, hi) (IN_RANGE) or the term `exact` (EXACT), from the terms' postings:
 * what a document's forward list tells about one word, for an index without forward lists
 * (`SearchIndex.withoutForward`). A pass over the word's postings, where reading the forward lists would be a pass
 * over the candidates: the engine chooses a check over a scan when the postings are many, but a chunked index that
 * made forward lists would pay a pass over every document whenever its loaded files change.
 */
export function termMarks(index: SearchIndex, lo: number, hi: number, exact: number): Uint8Array {
  let marks = markPool.take(index);
  markArrays.lent++;
  if (!marks) {
    marks = new Uint8Array(index.docCount);
    markArrays.made++;
  }
  const { termDocOffsets: offsets, termDocs: docs } = index;
  for (let i = offsets[lo]!, end = offsets[hi]!; i < end; i++) marks[docs[i]!] = IN_RANGE;
  if (exact >= 0) for (let i = offsets[exact]!, end = offsets[exact + 1]!; i < end; i++) marks[docs[i]!] = EXACT;
  return marks;
}

/** The tier a document's own terms give the word (none, primaryPrefix or primaryWhole). */
function termTier(index: SearchIndex, w: PreparedWord, d: number): Tier {
  if (index.withoutForward) {
    const m = (w.marks ??= termMarks(index, w.termLo, w.termHi, w.exact))[d]!;
    return m === EXACT ? Tier.primaryWhole : m === IN_RANGE ? Tier.primaryPrefix : Tier.none;
  }
  const { offsets, values } = index.docTerms;
  let best: Tier = Tier.none;
  for (let i = offsets[d]!, end = offsets[d + 1]!; i < end; i++) {
    const t = values[i]!;
    if (t >= w.termHi) break;
    if (t >= w.termLo) {
      if (t === w.exact) return Tier.primaryWhole;
      best = Tier.primaryPrefix;
    }
  }
  return best;
}

/** The best tier of `w` on document `d`, read from the document's own columns and terms. */
export function tierOf(index: SearchIndex, w: PreparedWord, d: number): Tier {
  const { codes, applicants } = denseOf(index, w);
  let best: number = Tier.none;
  if (codes) {
    const c = index.docCode[d]!;
    if (c !== NO_CODE) best = codes[c]!;
  }
  if (best === Tier.primaryWhole) return best;
  if (w.k) {
    const kn = index.docKNumber[d]!;
    if (kn >= w.k.from && kn <= w.k.to && w.k.tier > best) best = w.k.tier;
  }
  if (best === Tier.primaryWhole) return best;
  if (w.termLo < w.termHi) {
    const t = termTier(index, w, d);
    if (t === Tier.primaryWhole) return t;
    if (best < t) best = t;
  }
  if (best < Tier.secondaryWhole && applicants) {
    const a = index.docApplicant[d]!;
    if (a !== noApplicantIn(index.docApplicant) && applicants[a]! > best) best = applicants[a]!;
  }
  return best as Tier;
}

/**
 * `tierOf` over candidates, in place: keeps docs[i] that the word matches, in order, at the front, adding its points
 * (by tier) to their scores; returns how many. One loop with the index's columns in locals, and the document's terms
 * read first: a whole-word match there is the best tier, and then its code, K number and applicant are not read
 * (each a cache miss at a million documents).
 */
export function checkWord(index: SearchIndex, w: PreparedWord, docs: Uint32Array, scores: Uint32Array, points: Uint32Array): number {
  if (index.withoutForward) return checkWordByMarks(index, w, docs, scores, points);
  const { codes, applicants } = denseOf(index, w);
  const { offsets, values } = index.docTerms;
  const { docCode, docApplicant, docKNumber } = index;
  const noApplicant = noApplicantIn(docApplicant);
  const { termLo, termHi, exact, k } = w;
  let kept = 0;
  for (let i = 0; i < docs.length; i++) {
    const d = docs[i]!;
    let best: number = Tier.none;
    if (termLo < termHi) {
      for (let j = offsets[d]!, end = offsets[d + 1]!; j < end; j++) {
        const t = values[j]!;
        if (t >= termHi) break;
        if (t >= termLo) {
          if (t === exact) {
            best = Tier.primaryWhole;
            break;
          }
          best = Tier.primaryPrefix;
        }
      }
    }
    if (best !== Tier.primaryWhole) {
      if (codes) {
        const c = docCode[d]!;
        if (c !== NO_CODE && codes[c]! > best) best = codes[c]!;
      }
      if (k && best !== Tier.primaryWhole) {
        const kn = docKNumber[d]!;
        if (kn >= k.from && kn <= k.to && k.tier > best) best = k.tier;
      }
      if (best < Tier.secondaryWhole && applicants) {
        const a = docApplicant[d]!;
        if (a !== noApplicant && applicants[a]! > best) best = applicants[a]!;
      }
      if (best === Tier.none) continue;
    }
    docs[kept] = d;
    scores[kept++] = scores[i]! + points[best]!;
  }
  return kept;
}

/**
 * `checkWord` on an index without forward lists: the document's terms read from the word's marks (`termMarks`). The
 * code, K number and applicant lines repeat checkWord's on purpose: one helper called from both loops made this one
 * about a fifth slower.
 */
function checkWordByMarks(index: SearchIndex, w: PreparedWord, docs: Uint32Array, scores: Uint32Array, points: Uint32Array): number {
  const { codes, applicants } = denseOf(index, w);
  const marks = w.termLo < w.termHi ? (w.marks ??= termMarks(index, w.termLo, w.termHi, w.exact)) : null;
  const { docCode, docApplicant, docKNumber } = index;
  const noApplicant = noApplicantIn(docApplicant);
  const { k } = w;
  let kept = 0;
  for (let i = 0; i < docs.length; i++) {
    const d = docs[i]!;
    const m = marks === null ? 0 : marks[d]!;
    let best: number = m === EXACT ? Tier.primaryWhole : m === IN_RANGE ? Tier.primaryPrefix : Tier.none;
    if (best !== Tier.primaryWhole) {
      if (codes) {
        const c = docCode[d]!;
        if (c !== NO_CODE && codes[c]! > best) best = codes[c]!;
      }
      if (k && best !== Tier.primaryWhole) {
        const kn = docKNumber[d]!;
        if (kn >= k.from && kn <= k.to && k.tier > best) best = k.tier;
      }
      if (best < Tier.secondaryWhole && applicants) {
        const a = docApplicant[d]!;
        if (a !== noApplicant && applicants[a]! > best) best = applicants[a]!;
      }
      if (best === Tier.none) continue;
    }
    docs[kept] = d;
    scores[kept++] = scores[i]! + points[best]!;
  }
  return kept;
}

/**
 * Every document the word matches within the ids [lo, hi) (every id when not given), with its best tier, written into
 * `tiers` (indexed by document, zero on entry). Returns the documents touched, in no particular order.
 */
export function scanWord(index: SearchIndex, w: PreparedWord, tiers: Uint8Array, lo = 0, hi = index.docCount): Uint32Array {
  const whole = lo <= 0 && hi >= index.docCount;
  const touched = new Uint32Array(whole ? w.scanCost : scanCostWithin(index, w, lo, hi));
  let n = 0;
  const mark = (d: number, tier: number): void => {
    const old = tiers[d]!;
    if (old === 0) touched[n++] = d;
    if (tier > old) tiers[d] = tier;
  };
  // Each term's documents and each code's or applicant's ascend: those within [lo, hi) are one stretch of each.
  const markWithin = (list: Uint32Array, from: number, to: number, tier: number): void => {
    let i = from;
    let end = to;
    if (!whole) {
      i = lowerBound(list, lo, i, end);
      end = lowerBound(list, hi, i, end);
    }
    for (; i < end; i++) mark(list[i]!, tier);
  };
  // The index's sections in locals: each is a getter on the index, not worth a call per posting.
  const { termDocOffsets, termDocs, byKNumber } = index;
  for (let t = w.termLo; t < w.termHi; t++) {
    markWithin(termDocs, termDocOffsets[t]!, termDocOffsets[t + 1]!, t === w.exact ? Tier.primaryWhole : Tier.primaryPrefix);
  }
  if (w.k) {
    for (let i = w.k.lo; i < w.k.hi; i++) {
      const d = byKNumber[i]!;
      if (d >= lo && d < hi) mark(d, w.k.tier);
    }
  }
  for (const [set, docs] of rowsOf(index, w)) {
    const { offsets, values } = docs;
    for (let j = 0; j < set.ids.length; j++) {
      const id = set.ids[j]!;
      markWithin(values, offsets[id]!, offsets[id + 1]!, set.tiers[j]!);
    }
  }
  return touched.subarray(0, n);
}

/**
 * How many postings `scanWord` visits within the ids [lo, hi): at most `scanCost`. Two binary searches per list of
 * the word; past a few hundred lists (a short prefix), `scanCost` itself.
 */
export function scanCostWithin(index: SearchIndex, w: PreparedWord, lo: number, hi: number): number {
  if (lo <= 0 && hi >= index.docCount) return w.scanCost;
  if (w.termHi - w.termLo + w.codes.ids.length + w.applicants.ids.length > 256) return w.scanCost;
  const within = (list: Uint32Array, from: number, to: number): number => {
    const a = lowerBound(list, lo, from, to);
    return lowerBound(list, hi, a, to) - a;
  };
  const { termDocOffsets, termDocs } = index;
  let cost = w.k ? w.k.hi - w.k.lo : 0;
  for (let t = w.termLo; t < w.termHi; t++) cost += within(termDocs, termDocOffsets[t]!, termDocOffsets[t + 1]!);
  for (const [set, rows] of rowsOf(index, w)) {
    for (let j = 0; j < set.ids.length; j++) cost += within(rows.values, rows.offsets[set.ids[j]!]!, rows.offsets[set.ids[j]! + 1]!);
  }
  return cost;
}

/**
 * Tier arrays (a byte per document), one per word a search scans: a megabyte made for each word of a query at a
 * million documents was most of the garbage that set off the collector (whose pauses, a few milliseconds each, fell
 * inside queries).
 */
const tierPool = new ArrayPool();

/**
 * The tier arrays one search borrows, each filled by one word's scan. Given back zeroed through the documents the
 * scan touched when they are few: clearing the whole megabyte at a million documents cost more than most queries'
 * matching.
 */
export class TierLoans {
  private readonly lent: { tiers: Uint8Array; touched: Uint32Array | null }[] = [];
  constructor(private readonly index: SearchIndex) {}

  /**
   * The word's best tier per document within ids [lo, hi) in a lent array, and the documents it touched (in no
   * particular order).
   */
  scan(w: PreparedWord, lo: number, hi: number): { tiers: Uint8Array; touched: Uint32Array } {
    const tiers = tierPool.take(this.index) ?? new Uint8Array(this.index.docCount);
    const loan = { tiers, touched: null as Uint32Array | null };
    this.lent.push(loan);
    const touched = scanWord(this.index, w, tiers, lo, hi);
    loan.touched = touched;
    return { tiers, touched };
  }

  giveBack(): void {
    for (const { tiers, touched } of this.lent) {
      // Nothing writes a touched list after its scan (the candidates are sorted into an array of their own).
      if (touched !== null && touched.length * 8 < tiers.length) for (let i = 0; i < touched.length; i++) tiers[touched[i]!] = 0;
      else tiers.fill(0);
      tierPool.giveBack(this.index, tiers);
    }
  }
}

/**
 * Every document the word matches, ascending, without tiers: its terms' postings, its K numbers, and the documents of
 * the product codes and applicants it reaches, set as bits and read back.
 */
export function wordDocs(index: SearchIndex, w: PreparedWord): Uint32Array {
  const lists: Uint32Array[] = [];
  const { termDocOffsets, termDocs } = index;
  if (w.termHi > w.termLo) lists.push(termDocs.subarray(termDocOffsets[w.termLo]!, termDocOffsets[w.termHi]!));
  if (w.k) lists.push(index.byKNumber.subarray(w.k.lo, w.k.hi));
  for (const [set, rows] of rowsOf(index, w)) {
    for (const id of set.ids) lists.push(rows.values.subarray(rows.offsets[id]!, rows.offsets[id + 1]!));
  }
  if (lists.length === 1 && w.termHi - w.termLo === 1) return lists[0]!.slice();
  return idsByBits(index.docCount, lists);
}
