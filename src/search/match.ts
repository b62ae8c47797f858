import { NO_APPLICANT, NO_CODE } from '../contract/search-index.ts';
import { partitionPoint } from '../utils/bisect.ts';
import { sliceSpent, sliceSteps, stepsLeft } from './budget.ts';
import { runSteps, type Steps } from './slices.ts';
import { findApplicant, findCode, yearRange, type SearchIndex } from './model.ts';
import { ascendingIds, idsByBits } from './sort.ts';
import { kNumberRange } from './tokenize.ts';
import { idRange } from '../utils/id-range.ts';

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
  if (word.length <= 3) {
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
  for (const c of codeSet.ids) scanCost += index.codeDocs.offsets[c + 1]! - index.codeDocs.offsets[c]!;
  for (const a of applicantSet.ids) scanCost += index.applicantDocs.offsets[a + 1]! - index.applicantDocs.offsets[a]!;
  return { word, termLo, termHi, exact, k, codes: codeSet, applicants: applicantSet, scanCost, dense: null };
}

function denseTiers(set: TierSet, size: number): Uint8Array | null {
  if (set.ids.length === 0) return null;
  const out = new Uint8Array(size);
  for (let i = 0; i < set.ids.length; i++) out[set.ids[i]!] = set.tiers[i]!;
  return out;
}

/** Drops the word's per-id arrays once the query is done with it. */
export function release(w: PreparedWord): void {
  w.dense = null;
}

/** The best tier of `w` on document `d`, read from the document's own columns and terms. */
export function tierOf(index: SearchIndex, w: PreparedWord, d: number): Tier {
  w.dense ??= { codes: denseTiers(w.codes, index.codes.length), applicants: denseTiers(w.applicants, index.applicants.length) };
  const { codes, applicants } = w.dense;
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
    const { offsets, values } = index.docTerms;
    for (let i = offsets[d]!, end = offsets[d + 1]!; i < end; i++) {
      const t = values[i]!;
      if (t >= w.termHi) break;
      if (t >= w.termLo) {
        if (t === w.exact) return Tier.primaryWhole;
        if (best < Tier.primaryPrefix) best = Tier.primaryPrefix;
      }
    }
  }
  if (best < Tier.secondaryWhole && applicants) {
    const a = index.docApplicant[d]!;
    if (a !== NO_APPLICANT && applicants[a]! > best) best = applicants[a]!;
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
  w.dense ??= { codes: denseTiers(w.codes, index.codes.length), applicants: denseTiers(w.applicants, index.applicants.length) };
  const codes = w.dense.codes;
  const applicants = w.dense.applicants;
  const { offsets, values } = index.docTerms;
  const { docCode, docApplicant, docKNumber } = index;
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
        if (a !== NO_APPLICANT && applicants[a]! > best) best = applicants[a]!;
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
      i = partitionPoint(i, end, (x) => list[x]! < lo);
      end = partitionPoint(i, end, (x) => list[x]! < hi);
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
  const rows: [TierSet, SearchIndex['codeDocs']][] = [
    [w.codes, index.codeDocs],
    [w.applicants, index.applicantDocs],
  ];
  for (const [set, docs] of rows) {
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
    const a = partitionPoint(from, to, (x) => list[x]! < lo);
    return partitionPoint(a, to, (x) => list[x]! < hi) - a;
  };
  const { termDocOffsets, termDocs } = index;
  let cost = w.k ? w.k.hi - w.k.lo : 0;
  for (let t = w.termLo; t < w.termHi; t++) cost += within(termDocs, termDocOffsets[t]!, termDocOffsets[t + 1]!);
  for (const [set, rows] of [
    [w.codes, index.codeDocs],
    [w.applicants, index.applicantDocs],
  ] as const) {
    for (let j = 0; j < set.ids.length; j++) cost += within(rows.values, rows.offsets[set.ids[j]!]!, rows.offsets[set.ids[j]! + 1]!);
  }
  return cost;
}

export type MatchRequest = {
  words: readonly string[];
  applicant: string | null;
  productCode: string | null;
  yearFrom: number | null;
  yearTo: number | null;
  /** Documents outside this id range never match (a decision-date qualifier); the whole index when absent. */
  ids?: { lo: number; hi: number };
  /** Further conditions (qualifiers, phrases, OR, exclusions: src/search/evaluate.ts); each adds its points. */
  extra?: readonly Condition[];
  /** The n of `pointsFor`: the number of scoring units (words, phrases, OR groups); `words.length` when absent. */
  units?: number;
  /**
   * The caller orders the matches by a sort other than relevance: only which documents match counts, so no scores
   * are kept (`scores` is null), and a word that gives the candidates lists its documents without their tiers.
   */
  unscored?: boolean;
};

/**
 * One condition on documents beyond the words: `points(d)` is -1 when `d` fails it, else the points it adds.
 * `list` gives, ascending, a superset of the documents that pass (null when only a scan of candidates can tell), in an
 * array of its own that the caller may change (candidates are filtered in place);
 * `cost` is its length, used to pick the cheapest source of candidates.
 */
export type Condition = {
  /**
   * Makes, in slices, what `list` and `points` read (an OR group's tiers): the matching runs it where it first needs
   * either, so that no single slice makes all of it. Optional: `list` and `points` make it themselves when not warmed.
   */
  warm?: () => Steps<void>;
  cost: number;
  list: (() => Uint32Array) | null;
  points: (d: number) => number;
  mark?: Mark;
  /** The same filter as `mark`, in one pass: keeps the candidates that pass, in place (no marks to compact). */
  keep?: Keep;
  scan?: Scan;
  /** How many ids `scan` visits over lo..hi-1 (hi - lo when absent): a receipt date range skips the ids it cannot pass. */
  extent?: (lo: number, hi: number) => number;
  /** For filters: about which share of all documents passes (0..1), so the most selective runs first; 1 when unknown. */
  share?: number;
  /** `list` gives exactly the documents that pass: when it gives the candidates, they need no `mark`. */
  exact?: boolean;
};

/**
 * A condition that only filters (it adds no points), run over many candidates at once: sets marks[i] to 1 for each
 * docs[i] (i < n) that passes and leaves the other marks alone. A tight loop over a column instead of a call per
 * candidate; an OR of filters is one pass per term over the same marks.
 */
export type Mark = (docs: Uint32Array, n: number, marks: Uint8Array) => void;

/** A filter over candidates in place: keeps docs[i] (i < n) that pass, in order, at the front; returns how many. */
export type Keep = (docs: Uint32Array, n: number) => number;

/** The same filter over the ids lo..hi-1 with no list made: writes those that pass to `out`, ascending; returns how many. */
export type Scan = (lo: number, hi: number, out: Uint32Array) => number;

/** Every matching document, ascending by id (the tie order), and its relevance score when there are query words. */
export type Matches = { docs: Uint32Array; scores: Uint32Array | null };

/** Relevance points of one word's tier when the query has `n` distinct words (see docs/search.md). */
export function pointsFor(tier: Tier, n: number): number {
  switch (tier) {
    case Tier.primaryWhole:
      return n + 2;
    case Tier.primaryPrefix:
      return n + 1;
    case Tier.secondaryWhole:
      return 1;
    default:
      return 0;
  }
}

/** `pointsFor` of every tier, indexed by tier: one read per document in the loops over many. */
function pointsByTier(n: number): Uint32Array {
  const out = new Uint32Array(5);
  for (let t = Tier.none; t <= Tier.primaryWhole; t++) out[t] = pointsFor(t as Tier, n);
  return out;
}

/**
 * What one check of a word against a candidate costs, relative to visiting one posting. A check reads the candidate's
 * code, terms (two arrays) and applicant, each a cache miss at a million documents; a posting is one write. Measured
 * on the bench's queries at a million documents: 8 to 16 all ran two-word queries about 1.6 times as fast as 4.
 */
const CHECK_COST = 12;

/**
 * The documents matching every query word and every filter. The cheapest source (a word's postings, or a filter's
 * documents) gives the first candidates; each other word then either checks the candidates one by one or, when its
 * postings are fewer than that, scans them and intersects.
 */
export function matchDocuments(index: SearchIndex, req: MatchRequest): Matches {
  return runSteps(matchDocumentsSteps(index, req));
}

/**
 * `matchDocuments` with yield points (slices.ts) once a slice's steps of the work budget are spent (budget.ts):
 * between the filters, and within the loop that tests each candidate against the conditions that score (phrases, OR
 * groups, exclusions read one record at a time). Nothing it reads changes between two slices: the index is read-only,
 * and what it borrows (tier arrays) stays lent to it until it ends.
 */
export function* matchDocumentsSteps(index: SearchIndex, req: MatchRequest): Steps<Matches> {
  const loans = new TierLoans(index);
  try {
    return yield* matchWith(index, req, loans);
  } finally {
    loans.giveBack();
  }
}

const tierPools = new WeakMap<SearchIndex, Uint8Array[]>();

/**
 * Zeroed tier arrays (a byte per document) kept per index and lent to one search at a time, given back zeroed: a
 * megabyte made for each word of a query at a million documents was most of the garbage that set off the collector
 * (whose pauses, a few milliseconds each, fell inside queries).
 */
function tierPool(index: SearchIndex): Uint8Array[] {
  let pool = tierPools.get(index);
  if (!pool) tierPools.set(index, (pool = []));
  return pool;
}

/**
 * The tier arrays one search borrows, each filled by one word's scan. Given back zeroed through the documents the
 * scan touched when they are few: clearing the whole megabyte at a million documents cost more than most queries'
 * matching.
 */
class TierLoans {
  private readonly lent: { tiers: Uint8Array; touched: Uint32Array | null }[] = [];
  constructor(private readonly index: SearchIndex) {}

  /**
   * The word's best tier per document within ids [lo, hi) in a lent array, and the documents it touched (in no
   * particular order).
   */
  scan(w: PreparedWord, lo: number, hi: number): { tiers: Uint8Array; touched: Uint32Array } {
    const tiers = tierPool(this.index).pop() ?? new Uint8Array(this.index.docCount);
    const loan: { tiers: Uint8Array; touched: Uint32Array | null } = { tiers, touched: null };
    this.lent.push(loan);
    const touched = scanWord(this.index, w, tiers, lo, hi);
    loan.touched = touched;
    return { tiers, touched };
  }

  giveBack(): void {
    const pool = tierPool(this.index);
    for (const { tiers, touched } of this.lent) {
      // Nothing writes a touched list after its scan (the candidates are sorted into an array of their own).
      if (touched !== null && touched.length * 8 < tiers.length) for (let i = 0; i < touched.length; i++) tiers[touched[i]!] = 0;
      else tiers.fill(0);
      if (pool.length < 2) pool.push(tiers);
    }
  }
}

function* matchWith(index: SearchIndex, req: MatchRequest, loans: TierLoans): Steps<Matches> {
  const n = req.units ?? req.words.length;
  const scored = n > 0 && req.unscored !== true;
  const extra = req.extra ?? [];
  const empty: Matches = { docs: new Uint32Array(0), scores: scored ? new Uint32Array(0) : null };

  const code = req.productCode === null ? null : findCode(index, req.productCode);
  if (req.productCode !== null && code === null) return empty;
  const applicant = req.applicant === null ? null : findApplicant(index, req.applicant);
  if (req.applicant !== null && applicant === null) return empty;
  const years = yearRange(index, req.yearFrom, req.yearTo);
  if (req.ids) {
    years.lo = Math.max(years.lo, req.ids.lo);
    years.hi = Math.min(years.hi, req.ids.hi);
  }
  if (years.hi <= years.lo) return empty;

  // A word that reaches nothing empties the answer (AND): stop before preparing the rest.
  const scratch = newScratch(index);
  const words: PreparedWord[] = [];
  for (const text of req.words) {
    const w = prepareWord(index, text, scratch);
    if (w.scanCost === 0) return empty;
    words.push(w);
  }
  // Every candidate lies within the id range (a year or decision-date filter): a word's scan visits only the postings
  // there, so that is what it costs.
  const costs = new Map<PreparedWord, number>();
  for (const w of words) costs.set(w, scanCostWithin(index, w, years.lo, years.hi));
  const costOf = (w: PreparedWord): number => costs.get(w)!;
  words.sort((a, b) => costOf(a) - costOf(b));

  // A filter that scans the id range itself (below) visits only the ids it can pass: the range costs that many.
  let extent = years.hi - years.lo;
  let scanner: Condition | undefined;
  if (code === null && applicant === null) {
    for (const c of extra) {
      if (!c.scan || !c.mark || !c.extent) continue;
      const e = c.extent(years.lo, years.hi);
      if (e < extent) {
        extent = e;
        scanner = c;
      }
    }
  }
  type Source = { cost: number; docs: () => Uint32Array; word: PreparedWord | null; condition?: Condition };
  const sources: Source[] = [{ cost: extent, docs: () => idRange(years.lo, years.hi), word: null }];
  if (code !== null) sources.push({ cost: rowLength(index.codeDocs, code), docs: () => row(index.codeDocs, code), word: null });
  if (applicant !== null) {
    sources.push({ cost: rowLength(index.applicantDocs, applicant), docs: () => row(index.applicantDocs, applicant), word: null });
  }
  for (const c of extra) {
    const list = c.list;
    if (list) sources.push({ cost: c.cost, docs: list, word: null, condition: c });
  }
  const firstWord = words[0];
  let firstTiers: Uint8Array | null = null;
  if (firstWord) {
    sources.push({
      cost: costOf(firstWord),
      word: firstWord,
      docs: () => {
        if (!scored) return wordDocs(index, firstWord);
        const { tiers, touched } = loans.scan(firstWord, years.lo, years.hi);
        firstTiers = tiers;
        // In a new array: the candidates are filtered in place, and the touched list is what clears the tiers
        // afterwards. Sorting beats reading the whole tier array a byte a document (a branch each, missed at every
        // match) up to about a tenth of the index, measured at a million documents.
        return ascendingIds(touched, tiers.length, 10);
      },
    });
  }
  // Ties go to the earlier source: the year range, then the filters, then the word.
  const source = sources.reduce((best, s) => (s.cost < best.cost ? s : best));
  const plainRange = source === sources[0] && code === null && applicant === null;
  // From a plain id range, the first filter that can scans the range's column itself: no list of every id is made.
  // Filters run most selective first: each later one reads only what the earlier ones kept.
  const filters = extra.filter((c) => c.mark && !(c.exact && c === source.condition)).sort((a, b) => (a.share ?? 1) - (b.share ?? 1));
  const fused = plainRange ? (scanner ?? filters.find((c) => c.scan)) : undefined;
  let docs: Uint32Array;
  let kept = 0;
  let mark = stepsLeft();
  const warmed = new Set<Condition>();
  /** Makes a condition's state in slices before its first use. */
  const warm = function* (c: Condition | undefined): Steps<void> {
    if (!c?.warm || warmed.has(c)) return;
    warmed.add(c);
    yield* c.warm();
    mark = stepsLeft();
  };
  if (!fused) yield* warm(source.condition);
  if (fused) {
    // The scan writes at most one id per id it visits.
    docs = new Uint32Array(fused === scanner ? extent : years.hi - years.lo);
    kept = fused.scan!(years.lo, years.hi, docs);
  } else {
    docs = source.docs();
    // Every id passes the id range, product code and applicant when none narrows them: no pass to make.
    const open = years.lo === 0 && years.hi === index.docCount && code === null && applicant === null;
    if (plainRange || open) kept = docs.length;
    else if (code === null && applicant === null) {
      // Only the id range narrows: the candidates ascend, so those within it are one stretch, found by binary search.
      const list = docs;
      const from = partitionPoint(0, list.length, (i) => list[i]! < years.lo);
      const to = partitionPoint(from, list.length, (i) => list[i]! < years.hi);
      docs = list.subarray(from, to);
      kept = docs.length;
    } else {
      // Filters first: they are one comparison each, then the conditions that only filter, as passes over columns.
      const codeCol = index.docCode;
      const applicantCol = index.docApplicant;
      for (let i = 0; i < docs.length; i++) {
        const d = docs[i]!;
        if (d < years.lo || d >= years.hi) continue;
        if (code !== null && codeCol[d] !== code) continue;
        if (applicant !== null && applicantCol[d] !== applicant) continue;
        docs[kept++] = d;
      }
    }
  }
  const marks = filters.some((c) => c !== fused && !c.keep) ? new Uint8Array(kept) : null;
  for (const c of filters) {
    if (c === fused || kept === 0) continue;
    if (sliceSpent(mark)) {
      yield;
      mark = stepsLeft();
    }
    if (c.keep) {
      kept = c.keep(docs, kept);
      continue;
    }
    const m = marks!;
    m.fill(0, 0, kept);
    c.mark!(docs, kept, m);
    kept = compact(docs, kept, m);
  }
  const scoring = extra.filter((c) => !c.mark);
  if (kept < docs.length && kept * 4 < docs.length) docs = docs.slice(0, kept); // let a large list go
  let scores: Uint32Array | null = scored ? new Uint32Array(kept) : null;
  if (scoring.length > 0 && kept > 0) {
    for (const c of scoring) yield* warm(c);
    let out = 0;
    // A candidate tested counts as a step towards the slice even when its conditions charge none (an OR group's
    // tiers are one read), though it is not charged to the budget.
    const slice = sliceSteps();
    let tested = 0;
    outer: for (let i = 0; i < kept; i++) {
      if (++tested >= slice || sliceSpent(mark)) {
        yield;
        mark = stepsLeft();
        tested = 0;
      }
      const d = docs[i]!;
      let points = 0;
      for (const c of scoring) {
        const p = c.points(d);
        if (p < 0) continue outer;
        points += p;
      }
      if (scores) scores[out] = points;
      docs[out++] = d;
    }
    kept = out;
  }
  docs = docs.subarray(0, kept);

  for (const w of words) {
    if (docs.length === 0) break;
    kept = 0;
    if (!scores) {
      // Only which documents match: the source word's documents all do, the others are checked.
      if (w === source.word) continue;
      for (let i = 0; i < docs.length; i++) {
        const d = docs[i]!;
        docs[kept] = d;
        kept += tierOf(index, w, d) === Tier.none ? 0 : 1;
      }
      release(w);
      docs = docs.subarray(0, kept);
      continue;
    }
    const s = scores;
    if (w === source.word) {
      const points = pointsByTier(n);
      const tiers = firstTiers!;
      for (let i = 0; i < docs.length; i++) s[i]! += points[tiers[docs[i]!]!]!;
      continue;
    }
    if (costOf(w) < docs.length * CHECK_COST) {
      const { tiers } = loans.scan(w, years.lo, years.hi);
      for (let i = 0; i < docs.length; i++) {
        const t = tiers[docs[i]!]! as Tier;
        if (t === Tier.none) continue;
        docs[kept] = docs[i]!;
        s[kept++] = s[i]! + pointsFor(t, n);
      }
    } else {
      kept = checkWord(index, w, docs, s, pointsByTier(n));
      release(w);
    }
    docs = docs.subarray(0, kept);
  }
  return { docs, scores: scores === null ? null : scores.subarray(0, docs.length) };
}

/** Keeps docs[i] (i < n) whose mark is 1, in order, at the front; returns how many. Its own function, so it is optimized alone. */
function compact(docs: Uint32Array, n: number, marks: Uint8Array): number {
  let kept = 0;
  for (let i = 0; i < n; i++) {
    docs[kept] = docs[i]!;
    kept += marks[i]!;
  }
  return kept;
}

const rowLength = (rows: { offsets: Uint32Array }, r: number): number => rows.offsets[r + 1]! - rows.offsets[r]!;
/** A copy, since candidates are filtered in place. */
const row = (rows: { offsets: Uint32Array; values: Uint32Array }, r: number): Uint32Array =>
  rows.values.slice(rows.offsets[r]!, rows.offsets[r + 1]!);

/**
 * Every document the word matches, ascending, without tiers: its terms' postings, its K numbers, and the documents of
 * the product codes and applicants it reaches, set as bits and read back.
 */
function wordDocs(index: SearchIndex, w: PreparedWord): Uint32Array {
  const lists: Uint32Array[] = [];
  const { termDocOffsets, termDocs } = index;
  if (w.termHi > w.termLo) lists.push(termDocs.subarray(termDocOffsets[w.termLo]!, termDocOffsets[w.termHi]!));
  if (w.k) lists.push(index.byKNumber.subarray(w.k.lo, w.k.hi));
  for (const [set, rows] of [
    [w.codes, index.codeDocs],
    [w.applicants, index.applicantDocs],
  ] as const) {
    for (const id of set.ids) lists.push(rows.values.subarray(rows.offsets[id]!, rows.offsets[id + 1]!));
  }
  if (lists.length === 1 && w.termHi - w.termLo === 1) return lists[0]!.slice();
  return idsByBits(index.docCount, lists);
}

