import { NO_SMALL } from '../contract/search-index.ts';
import { LEGAL_SUFFIXES, type Clause, type ParsedQuery, type Qualifier, type Range, type Term } from './grammar.ts';
import { matchDocumentsSteps, newScratch, pointsFor, prepareWord, scanWord, Tier, tierOf, type Condition, type PreparedWord, type Keep, type Mark, type Matches, type MatchRequest, type Scan } from './match.ts';
import { partitionPoint } from '../utils/bisect.ts';
import { sliceSteps, spend } from './budget.ts';
import { runSteps, type Steps } from './slices.ts';
import { findApplicant, findCode, type SearchIndex } from './model.ts';
import { ascendingIds, idsByBits, rangeSpan } from './sort.ts';
import { rowsByValue } from './csr.ts';
import { foldText } from './tokenize.ts';
import { idRange } from '../utils/id-range.ts';

/**
 * A parsed query with qualifiers, phrases, OR or exclusions, turned into conditions for `matchDocuments`:
 * - positive plain words stay words (they may give the first candidates, and score as always);
 * - a positive `decided:` range narrows the id range (ids run in decision date order);
 * - every other clause is a condition: its points are the best of its terms (OR), -1 when none matches.
 * Scoring units (n of `pointsFor`) are the distinct plain words plus each clause that can score (a phrase, or an OR
 * group with a word or phrase in it), so one primary match still outweighs every secondary one.
 */
export function matchParsed(index: SearchIndex, parsed: ParsedQuery, filters: Omit<MatchRequest, 'words' | 'extra' | 'units' | 'ids'>): Matches {
  return runSteps(matchParsedSteps(index, parsed, filters));
}

/** `matchParsed` with the yield points of `matchDocumentsSteps` (slices.ts). */
export function* matchParsedSteps(index: SearchIndex, parsed: ParsedQuery, filters: Omit<MatchRequest, 'words' | 'extra' | 'units' | 'ids'>): Steps<Matches> {
  const words: string[] = [];
  const rest: Clause[] = [];
  let ids = { lo: 0, hi: index.docCount };
  for (const clause of parsed.clauses) {
    const only = clause.length === 1 ? clause[0]! : null;
    if (only && !only.negate && only.kind === 'words') {
      for (const w of only.words) if (!words.includes(w)) words.push(w);
    } else if (only && !only.negate && only.kind === 'field' && only.qualifier.field === 'decided') {
      const r = decidedIds(index, only.qualifier.range);
      ids = { lo: Math.max(ids.lo, r.lo), hi: Math.min(ids.hi, r.hi) };
    } else rest.push(clause);
  }
  const scoring = rest.filter((c) => c.some((t) => !t.negate && t.kind !== 'field')).length;
  const units = words.length + scoring;
  const extra: Condition[] = [];
  for (const c of rest) extra.push(yield* clauseCondition(index, c, units));
  return yield* matchDocumentsSteps(index, { ...filters, words, ids, extra, units });
}

/** Documents decided within the range: one id range, since docDecided does not increase over ids (0 last). */
export function decidedIds(index: SearchIndex, range: Range): { lo: number; hi: number } {
  const decided = index.docDecided;
  const dated = partitionPoint(0, index.docCount, (d) => decided[d]! !== 0);
  const lo = partitionPoint(0, dated, (d) => decided[d]! > range.hi);
  const hi = partitionPoint(0, dated, (d) => decided[d]! >= range.lo);
  return { lo, hi: Math.max(lo, hi) };
}

/** A clause's condition; an OR group's words are resolved against the index one at a time, with a yield point after each. */
function* clauseCondition(index: SearchIndex, clause: Clause, units: number): Steps<Condition> {
  const singles = clause.filter((t) => !t.negate && t.kind === 'words' && t.words.length === 1);
  if (clause.length > 1 && singles.length >= 2) {
    const others = clause.filter((t) => !singles.includes(t)).map((t) => termCondition(index, t, units));
    const scratch = newScratch(index);
    const prepared: PreparedWord[] = [];
    for (const t of singles) {
      // A short prefix reaches thousands of index words, each with its codes and applicants.
      const w = prepareWord(index, (t as { words: string[] }).words[0]!, scratch);
      if (w.scanCost > 0) prepared.push(w);
      yield;
    }
    return orOfWords(index, prepared, others, units);
  }
  const terms = clause.map((t) => termCondition(index, t, units));
  if (terms.length === 1) return terms[0]!;
  const listable = terms.every((t) => t.list !== null);
  const marks = terms.every((t) => t.mark !== undefined) ? terms.map((t) => t.mark!) : null;
  return {
    ...(marks && {
      mark: (docs: Uint32Array, n: number, out: Uint8Array) => {
        // A column test is a few times cheaper than a word's: a step per 8 records per branch.
        spend((n >> 3) * marks.length);
        for (const m of marks) m(docs, n, out);
      },
    }),
    cost: listable ? terms.reduce((sum, t) => sum + t.cost, 0) : Infinity,
    list: listable ? () => union(terms.map((t) => t.list!()), index.docCount) : null,
    points: (d) => {
      let best = -1;
      for (const t of terms) {
        const p = t.points(d);
        if (p > best) best = p;
      }
      return best;
    },
  };
}

/**
 * An OR group whose branches include single words (`catheter OR stent OR ba`): each word's postings are read once
 * into one byte per record holding the best tier any of them reaches there, so the group costs its words' postings
 * plus one read per candidate, not a test of every word against every candidate (a group of prefixes over most of
 * the index made that candidates × branches). The other branches (phrases, qualifiers, exclusions) are tested as
 * usual. The points are the best branch's, as for any OR group; a single word's are those of its tier.
 */
function orOfWords(index: SearchIndex, prepared: readonly PreparedWord[], others: readonly Condition[], units: number): Condition {
  const postingsCost = prepared.reduce((sum, w) => sum + w.scanCost, 0);
  const byTier = new Int32Array(5);
  for (let t = Tier.none + 1; t <= Tier.primaryWhole; t++) byTier[t] = pointsFor(t as Tier, units);
  byTier[Tier.none] = -1;
  let best: Uint8Array | null = null;
  let touched: Uint32Array[] = [];
  // scanWord keeps the best tier per record and lists a record only when it first touches it: the lists are disjoint.
  // In slices: a yield point after each word once a slice's steps (budget.ts) of postings are read.
  const filling = function* (): Steps<Uint8Array> {
    spend(Math.ceil(postingsCost / POSTINGS_A_STEP));
    const tiers = new Uint8Array(index.docCount);
    let read = 0;
    for (const w of prepared) {
      touched.push(scanWord(index, w, tiers));
      read += w.scanCost;
      if (read >= sliceSteps() * POSTINGS_A_STEP) {
        read = 0;
        yield;
      }
    }
    return (best = tiers);
  };
  const fill = (): Uint8Array => best ?? runSteps(filling());
  const listable = others.every((t) => t.list !== null);
  return {
    warm: function* () {
      if (!best) yield* filling();
    },
    cost: listable ? others.reduce((sum, t) => sum + t.cost, postingsCost) : Infinity,
    list: listable
      ? () => {
          fill();
          return union([...touched, ...others.map((t) => t.list!())], index.docCount);
        }
      : null,
    points: (d) => {
      let p = byTier[(best ?? fill())[d]!]!;
      for (const o of others) {
        const q = o.points(d);
        if (q > p) p = q;
      }
      return p;
    },
  };
}

/** Index entries (postings) read in a loop over a list cost a step per this many: each is one write, not a test. */
const POSTINGS_A_STEP = 4;

function termCondition(index: SearchIndex, term: Term, units: number): Condition {
  const positive = positiveCondition(index, term, units);
  if (!term.negate) return positive;
  const negated: Condition = { cost: Infinity, list: null, points: (d) => (positive.points(d) < 0 ? 0 : -1) };
  const test = term.kind === 'field' ? qualifierTest(index, term.qualifier) : null;
  if (test) {
    negated.share = 1 - shareOf(index, test);
    negated.mark = markOf(test, true, negated.share);
    negated.keep = keepOf(test, true);
    negated.scan = scanOf(test, true, negated.share);
  } else negated.mark = exclusionMark(index, positive);
  return negated;
}

/**
 * NOT of a condition that tests documents one by one (words, a phrase, device:): when the documents it can pass
 * (its list) are fewer than the candidates, they are marked in a bitmap first, and only candidates in the bitmap
 * are tested; the others pass at once.
 */
function exclusionMark(index: SearchIndex, positive: Condition): Mark {
  return (docs, n, marks) => {
    if (positive.list && positive.cost < n * 4) {
      const list = positive.list();
      // One bitmap per index, lent to one exclusion at a time and given back zeroed through the list: a megabyte made
      // per exclusion at a million records was most of the cost of a query of many.
      const may = exclusionMaps.get(index) ?? new Uint8Array(index.docCount);
      exclusionMaps.delete(index);
      for (let i = 0; i < list.length; i++) may[list[i]!] = 1;
      if (positive.exact) {
        // The list is exactly the records the term matches: no test.
        for (let i = 0; i < n; i++) marks[i]! |= may[docs[i]!]! ^ 1;
      } else {
        for (let i = 0; i < n; i++) {
          const d = docs[i]!;
          if (may[d] === 0 || positive.points(d) < 0) marks[i] = 1;
        }
      }
      for (let i = 0; i < list.length; i++) may[list[i]!] = 0;
      exclusionMaps.set(index, may);
    } else {
      for (let i = 0; i < n; i++) if (positive.points(docs[i]!) < 0) marks[i] = 1;
    }
  };
}

const exclusionMaps = new WeakMap<SearchIndex, Uint8Array>();

const NOTHING: Condition = { cost: 0, list: () => new Uint32Array(0), points: () => -1, mark: () => {} };

function positiveCondition(index: SearchIndex, term: Term, units: number): Condition {
  switch (term.kind) {
    case 'words':
      return wordsCondition(index, term.words, units);
    case 'phrase':
      return phraseCondition(index, term.words, units + 2);
    case 'field':
      return qualifierCondition(index, term.qualifier);
  }
}

/** All the words must match, as plain words do; the points are the weakest word's. */
function wordsCondition(index: SearchIndex, words: readonly string[], units: number): Condition {
  const scratch = newScratch(index);
  const prepared = words.map((w) => prepareWord(index, w, scratch));
  if (prepared.some((w) => w.scanCost === 0)) return NOTHING;
  const cheapest = prepared.reduce((a, b) => (b.scanCost < a.scanCost ? b : a));
  return {
    cost: cheapest.scanCost,
    // One word: its postings, codes, applicants and K numbers are exactly the records it matches.
    exact: prepared.length === 1,
    list: () => {
      spend(Math.ceil(cheapest.scanCost / POSTINGS_A_STEP));
      const tiers = new Uint8Array(index.docCount);
      return scanWord(index, cheapest, tiers).sort();
    },
    points: (d) => {
      spend(prepared.length);
      let least = Infinity;
      for (const w of prepared) {
        const t = tierOf(index, w, d);
        if (t === Tier.none) return -1;
        least = Math.min(least, pointsFor(t, units));
      }
      return least;
    },
  };
}

/** The term id of a whole word, or -1. */
function termId(index: SearchIndex, word: string): number {
  const t = partitionPoint(0, index.terms.length, (i) => index.terms[i]! < word);
  return index.terms[t] === word ? t : -1;
}

/** The words, whole and consecutive, in the device name. */
function phraseCondition(index: SearchIndex, words: readonly string[], points: number): Condition {
  const ids = words.map((w) => termId(index, w));
  if (ids.some((t) => t < 0)) return NOTHING;
  let rarest = ids[0]!;
  for (const t of ids) if (postings(index, t) < postings(index, rarest)) rarest = t;
  const { docTermOffsets, docTermIds, docSeqOffsets, docSeq } = index;
  const at = new Int32Array(ids.length);
  return {
    cost: postings(index, rarest),
    list: () => {
      spend(Math.ceil(postings(index, rarest) / POSTINGS_A_STEP));
      return index.termDocs.slice(index.termDocOffsets[rarest]!, index.termDocOffsets[rarest + 1]!);
    },
    points: (d) => {
      spend(ids.length);
      const lo = docTermOffsets[d]!;
      const hi = docTermOffsets[d + 1]!;
      for (let k = 0; k < ids.length; k++) {
        const p = partitionPoint(0, hi - lo, (i) => docTermIds[lo + i]! < ids[k]!);
        if (lo + p >= hi || docTermIds[lo + p] !== ids[k] || p >= 255) return -1;
        at[k] = p;
      }
      const start = docSeqOffsets[d]!;
      const end = docSeqOffsets[d + 1]!;
      for (let s = start; s + ids.length <= end; s++) {
        let k = 0;
        while (k < ids.length && docSeq[s + k] === at[k]) k++;
        if (k === ids.length) return points;
      }
      return -1;
    },
  };
}

const postings = (index: SearchIndex, t: number): number => index.termDocOffsets[t + 1]! - index.termDocOffsets[t]!;

/** A per-id mask of a dictionary: the ids whose value passes `test`. */
function mask(values: readonly string[], test: (v: string) => boolean): Uint8Array {
  const out = new Uint8Array(values.length + 1);
  values.forEach((v, i) => {
    if (test(v)) out[i] = 1;
  });
  return out;
}

type Column = Uint8Array | Uint16Array | Uint32Array;

/**
 * What a qualifier asks of one document, as data rather than a function, so that it runs as a tight loop over a
 * column (one kernel per kind below) instead of a call per candidate:
 * - `set`: the column's value v passes when v < ok.length and ok[v] is 1 (a column's "none" is always past the end);
 * - `range`: the column holds a day number, 0 for none, and passes within [lo, hi]; no document outside the id
 *   ranges `within` (two, [a, b) and [c, d)) passes, when given;
 * - `review`: docDecided - docReceived, both present, within [lo, hi];
 * - `ids`: the document id is within [lo, hi).
 * Null for the qualifiers that read a document's terms (device:).
 */
export type Test =
  | { kind: 'set'; col: Column; ok: Uint8Array }
  | { kind: 'range'; col: Uint32Array; lo: number; hi: number; within?: readonly [number, number, number, number] }
  | { kind: 'review'; decided: Uint32Array; received: Uint32Array; lo: number; hi: number }
  | { kind: 'ids'; lo: number; hi: number };

export function qualifierTest(index: SearchIndex, q: Qualifier): Test | null {
  let known = knownTests.get(index);
  if (!known) knownTests.set(index, (known = new Map()));
  const key = JSON.stringify(q);
  let test = known.get(key);
  if (test === undefined) {
    test = makeTest(index, q);
    if (known.size >= 64) known.delete(known.keys().next().value!);
    known.set(key, test);
  }
  return test;
}

/**
 * The last 64 distinct qualifiers' tests of each index: a query's dense attempt and its general path ask for the same
 * ones, and the same filters come back (class:2 widens a table over 3,216 codes, 0.2 ms at a million documents).
 * Tests are only read once made.
 */
const knownTests = new WeakMap<SearchIndex, Map<string, Test | null>>();

function makeTest(index: SearchIndex, q: Qualifier): Test | null {
  // u8 and u16 columns get a table over every value they can hold, so the kernels need no bounds check.
  const set = (col: Column, ok: Uint8Array): Test => {
    const span = col instanceof Uint8Array ? 0x100 : col instanceof Uint16Array ? 0x10000 : 0;
    if (ok.length >= span) return { kind: 'set', col, ok };
    return { kind: 'set', col, ok: fullTable(col, ok, span) };
  };
  switch (q.field) {
    case 'applicant': {
      const ok = new Uint8Array(index.applicants.length + 1);
      if ('exact' in q) {
        const g = findApplicant(index, q.exact);
        if (g !== null) ok[g] = 1;
      } else applicantMask(index, q.words, ok);
      return set(index.docApplicant, ok);
    }
    case 'code': {
      const c = findCode(index, q.code);
      const ok = new Uint8Array(index.codes.length + 1);
      if (c !== null) ok[c] = 1;
      return set(index.docCode, ok);
    }
    case 'device':
      return null;
    case 'class': {
      const classes = mask(index.classes, (v) => v.toUpperCase() === q.deviceClass);
      const ok = new Uint8Array(index.codes.length + 1);
      for (let c = 0; c < index.codes.length; c++) {
        const k = index.codeClass[c]!;
        if (k !== NO_SMALL && classes[k]) ok[c] = 1;
      }
      return set(index.docCode, ok);
    }
    case 'panel':
      return set(index.docPanel, mask(index.panels, (v) => startsWithText(v, q.text)));
    case 'type':
      return set(index.docType, mask(index.types, (v) => startsWithText(v, q.text)));
    case 'decision': {
      const ok = mask(index.decisions, (v) => v.toLowerCase() === q.text);
      index.decisionNames.forEach((name, i) => {
        if (startsWithText(name, q.text)) ok[i] = 1;
      });
      return set(index.docDecision, ok);
    }
    case 'country':
      return set(index.docCountry, mask(index.countries, (v) => v === q.code));
    case 'state':
      return set(index.docState, mask(index.states, (v) => v === q.code));
    case 'thirdparty':
    case 'expedited':
    case 'summary': {
      // Every value of the flags byte that has this flag as asked.
      const shift = q.field === 'thirdparty' ? 0 : q.field === 'expedited' ? 2 : 4;
      const want = q.yes ? 2 : 1;
      const ok = new Uint8Array(256);
      for (let b = 0; b < 256; b++) if (((b >> shift) & 3) === want) ok[b] = 1;
      return set(index.docFlags, ok);
    }
    case 'decided': {
      const r = decidedIds(index, q.range);
      return { kind: 'ids', lo: r.lo, hi: r.hi };
    }
    case 'received':
      // Day numbers are below 2^22 (see src/search/sort.ts): bounds clamped to small integers keep the kernels in
      // integer arithmetic.
      return { kind: 'range', col: index.docReceived, lo: clamp(q.range.lo, 1, DAY_BOUND), hi: clamp(q.range.hi, 0, DAY_BOUND), within: receivedWithin(index, q.range.lo) };
    case 'reviewdays':
      return { kind: 'review', decided: index.docDecided, received: index.docReceived, lo: clamp(q.range.lo, -DAY_BOUND, DAY_BOUND), hi: clamp(q.range.hi, -DAY_BOUND - 1, DAY_BOUND) };
  }
}

const fullTables = new WeakMap<Column, Map<string, Uint8Array>>();

/**
 * `ok` widened to every value a column can hold (64 kB for a u16 column), kept for the last few distinct tables of
 * each column: a table made per query was garbage for the collector, and the same filters come back (class:2).
 * Tables are only read once made.
 */
function fullTable(col: Column, ok: Uint8Array, span: number): Uint8Array {
  let known = fullTables.get(col);
  if (!known) fullTables.set(col, (known = new Map()));
  const passing: number[] = [];
  for (let v = 0; v < ok.length; v++) if (ok[v] === 1) passing.push(v);
  const key = passing.join(',');
  let full = known.get(key);
  if (!full) {
    full = new Uint8Array(span);
    full.set(ok);
    if (known.size >= 16) known.delete(known.keys().next().value!);
    known.set(key, full);
  }
  return full;
}

/** Past every day number and every review time (day numbers stay below 2^22). */
const DAY_BOUND = 2 ** 23;
const clamp = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, x));

const leads = new WeakMap<SearchIndex, number>();

/**
 * Where the documents received on or after day `lo` can be: a document is decided at most `lead` days before it is
 * received (lead is the largest received - decided of the index, 0 or less in practice, made once per index), so
 * those dated ones are decided on or after lo - lead, the first ids (ids run in decision date order); and the
 * undated documents (the last ids) may have any receipt date.
 */
function receivedWithin(index: SearchIndex, lo: number): [number, number, number, number] {
  const { docDecided, docReceived, docCount } = index;
  const dated = partitionPoint(0, docCount, (d) => docDecided[d]! !== 0);
  let lead = leads.get(index);
  if (lead === undefined) {
    lead = -DAY_BOUND;
    for (let d = 0; d < dated; d++) {
      const r = docReceived[d]!;
      if (r !== 0 && r - docDecided[d]! > lead) lead = r - docDecided[d]!;
    }
    leads.set(index, lead);
  }
  const from = lo - lead;
  const p = partitionPoint(0, dated, (d) => docDecided[d]! >= from);
  return [0, p, dated, docCount];
}

const histograms = new WeakMap<Column, Uint32Array>();

/** How many documents hold each value of a u8 or u16 column: one pass, once per index. */
function histogramOf(col: Uint8Array | Uint16Array): Uint32Array {
  let counts = histograms.get(col);
  if (!counts) {
    counts = new Uint32Array(col instanceof Uint8Array ? 0x100 : 0x10000);
    for (let d = 0; d < col.length; d++) counts[col[d]!]!++;
    histograms.set(col, counts);
  }
  return counts;
}

const shares = new WeakMap<Test, number>();

/** About which share of all documents passes the test: exact for u8 and u16 columns and id ranges, else 1/2. */
export function shareOf(index: SearchIndex, t: Test): number {
  let share = shares.get(t);
  if (share === undefined) shares.set(t, (share = shareOfNew(index, t)));
  return share;
}

function shareOfNew(index: SearchIndex, t: Test): number {
  if (index.docCount === 0) return 1;
  if (t.kind === 'ids') return (t.hi - t.lo) / index.docCount;
  // Exact, from where the range is in that sort's order of every document (made once per index).
  if (t.kind === 'range' || t.kind === 'review') {
    const { above, within } = rangeSpan(index, t);
    return (within - above) / index.docCount;
  }
  if (t.kind !== 'set' || t.col instanceof Uint32Array) return 0.5;
  const counts = histogramOf(t.col);
  let n = 0;
  for (let v = 0; v < counts.length; v++) if (t.ok[v]) n += counts[v]!;
  return n / index.docCount;
}

/** Whether document d passes the test (one call; the kernels below do the same over many documents). */
export function passes(t: Test, d: number): boolean {
  switch (t.kind) {
    case 'set': {
      const v = t.col[d]!;
      return v < t.ok.length && t.ok[v] === 1;
    }
    case 'range': {
      const v = t.col[d]!;
      return v !== 0 && v >= t.lo && v <= t.hi;
    }
    case 'review': {
      const a = t.received[d]!;
      const b = t.decided[d]!;
      return a !== 0 && b !== 0 && b - a >= t.lo && b - a <= t.hi;
    }
    case 'ids':
      return d >= t.lo && d < t.hi;
  }
}

/**
 * Whether a filter that passes this share of the documents is mostly one way: then a branch per document is almost
 * always predicted, and is faster than the branch-free form, which writes every document.
 */
const skewed = (share: number): boolean => share < 0.1 || share > 0.9;

/**
 * The test as a batch: sets marks[i] to 1 for each docs[i] (i < n) that passes (that fails, when `negate`), and
 * leaves the other marks as they are, so that an OR group is one pass per term over the same marks. `share` is about
 * which share of the documents the batch marks (see `skewed`).
 */
export function markOf(t: Test, negate: boolean, share = 0.5): Mark {
  const want = negate ? 0 : 1;
  const flip = want ^ 1;
  switch (t.kind) {
    case 'set': {
      const { col, ok } = t;
      if (col instanceof Uint8Array) return skewed(share) ? (docs, n, marks) => markSet8Branch(col, ok, want, docs, n, marks) : (docs, n, marks) => markSet8(col, ok, flip, docs, n, marks);
      if (col instanceof Uint16Array) return skewed(share) ? (docs, n, marks) => markSet16Branch(col, ok, want, docs, n, marks) : (docs, n, marks) => markSet16(col, ok, flip, docs, n, marks);
      return (docs, n, marks) => markSet32(col, ok, want, docs, n, marks);
    }
    case 'range': {
      const { col, lo, hi } = t;
      if (skewed(share)) return (docs, n, marks) => markRangeBranch(col, lo, hi - lo, want, docs, n, marks);
      return (docs, n, marks) => markRange(col, lo, hi - lo, flip, docs, n, marks);
    }
    case 'review': {
      const { decided, received, lo, hi } = t;
      if (skewed(share)) return (docs, n, marks) => markReviewBranch(decided, received, lo, hi - lo, want, docs, n, marks);
      return (docs, n, marks) => markReview(decided, received, lo, hi - lo, flip, docs, n, marks);
    }
    case 'ids': {
      const { lo, hi } = t;
      return (docs, n, marks) => {
        for (let i = 0; i < n; i++) {
          const d = docs[i]!;
          if ((d >= lo && d < hi ? 1 : 0) === want) marks[i] = 1;
        }
      };
    }
  }
}

// The kernels of `set` tests, one function per column type: each stays monomorphic, so the optimizer keeps it
// compiled (one function seeing u8, u16 and u32 columns in turn was deoptimized and ran several times slower).
// u8 and u16 columns have a table entry for every value (see `qualifierTest`): no bounds check. The branch-free
// forms write every document and count those that pass; the `Branch` forms write only those.
function scanSet8(col: Uint8Array, ok: Uint8Array, flip: number, lo: number, hi: number, out: Uint32Array): number {
  let n = 0;
  for (let d = lo; d < hi; d++) {
    out[n] = d;
    n += ok[col[d]!]! ^ flip;
  }
  return n;
}
function scanSet8Branch(col: Uint8Array, ok: Uint8Array, want: number, lo: number, hi: number, out: Uint32Array): number {
  let n = 0;
  for (let d = lo; d < hi; d++) if (ok[col[d]!] === want) out[n++] = d;
  return n;
}
function scanSet16(col: Uint16Array, ok: Uint8Array, flip: number, lo: number, hi: number, out: Uint32Array): number {
  let n = 0;
  for (let d = lo; d < hi; d++) {
    out[n] = d;
    n += ok[col[d]!]! ^ flip;
  }
  return n;
}
function scanSet16Branch(col: Uint16Array, ok: Uint8Array, want: number, lo: number, hi: number, out: Uint32Array): number {
  let n = 0;
  for (let d = lo; d < hi; d++) if (ok[col[d]!] === want) out[n++] = d;
  return n;
}
function scanSet32(col: Uint32Array, ok: Uint8Array, want: number, lo: number, hi: number, out: Uint32Array): number {
  const size = ok.length;
  let n = 0;
  for (let d = lo; d < hi; d++) {
    const v = col[d]!;
    if ((v < size ? ok[v]! : 0) === want) out[n++] = d;
  }
  return n;
}
function markSet8(col: Uint8Array, ok: Uint8Array, flip: number, docs: Uint32Array, n: number, marks: Uint8Array): void {
  for (let i = 0; i < n; i++) marks[i]! |= ok[col[docs[i]!]!]! ^ flip;
}
function markSet8Branch(col: Uint8Array, ok: Uint8Array, want: number, docs: Uint32Array, n: number, marks: Uint8Array): void {
  for (let i = 0; i < n; i++) if (ok[col[docs[i]!]!] === want) marks[i] = 1;
}
function markSet16(col: Uint16Array, ok: Uint8Array, flip: number, docs: Uint32Array, n: number, marks: Uint8Array): void {
  for (let i = 0; i < n; i++) marks[i]! |= ok[col[docs[i]!]!]! ^ flip;
}
function markSet16Branch(col: Uint16Array, ok: Uint8Array, want: number, docs: Uint32Array, n: number, marks: Uint8Array): void {
  for (let i = 0; i < n; i++) if (ok[col[docs[i]!]!] === want) marks[i] = 1;
}
function markSet32(col: Uint32Array, ok: Uint8Array, want: number, docs: Uint32Array, n: number, marks: Uint8Array): void {
  const size = ok.length;
  for (let i = 0; i < n; i++) {
    const v = col[docs[i]!]!;
    if ((v < size ? ok[v]! : 0) === want) marks[i] = 1;
  }
}

// Day ranges, branch-free: v in [lo, lo + span] is (v - lo) >>> 0 <= span (below lo wraps past span), and lo >= 1
// rules out "no date" (0). A review time needs both dates: -a >>> 31 is 1 for a day number a, 0 for none.
function scanRange(col: Uint32Array, lo: number, span: number, flip: number, from: number, to: number, out: Uint32Array): number {
  let n = 0;
  for (let d = from; d < to; d++) {
    out[n] = d;
    n += (((col[d]! - lo) >>> 0 <= span ? 1 : 0) ^ flip);
  }
  return n;
}
function markRange(col: Uint32Array, lo: number, span: number, flip: number, docs: Uint32Array, n: number, marks: Uint8Array): void {
  for (let i = 0; i < n; i++) marks[i]! |= ((col[docs[i]!]! - lo) >>> 0 <= span ? 1 : 0) ^ flip;
}
function scanRangeBranch(col: Uint32Array, lo: number, span: number, want: number, from: number, to: number, out: Uint32Array): number {
  let n = 0;
  for (let d = from; d < to; d++) if (((col[d]! - lo) >>> 0 <= span ? 1 : 0) === want) out[n++] = d;
  return n;
}
function markRangeBranch(col: Uint32Array, lo: number, span: number, want: number, docs: Uint32Array, n: number, marks: Uint8Array): void {
  for (let i = 0; i < n; i++) if (((col[docs[i]!]! - lo) >>> 0 <= span ? 1 : 0) === want) marks[i] = 1;
}
function scanReviewBranch(decided: Uint32Array, received: Uint32Array, lo: number, span: number, want: number, from: number, to: number, out: Uint32Array): number {
  let n = 0;
  for (let d = from; d < to; d++) {
    const a = received[d]!;
    const b = decided[d]!;
    if (((-a >>> 31) & (-b >>> 31) & ((b - a - lo) >>> 0 <= span ? 1 : 0)) === want) out[n++] = d;
  }
  return n;
}
function markReviewBranch(decided: Uint32Array, received: Uint32Array, lo: number, span: number, want: number, docs: Uint32Array, n: number, marks: Uint8Array): void {
  for (let i = 0; i < n; i++) {
    const d = docs[i]!;
    const a = received[d]!;
    const b = decided[d]!;
    if (((-a >>> 31) & (-b >>> 31) & ((b - a - lo) >>> 0 <= span ? 1 : 0)) === want) marks[i] = 1;
  }
}
function scanReview(decided: Uint32Array, received: Uint32Array, lo: number, span: number, flip: number, from: number, to: number, out: Uint32Array): number {
  let n = 0;
  for (let d = from; d < to; d++) {
    const a = received[d]!;
    const b = decided[d]!;
    out[n] = d;
    n += ((-a >>> 31) & (-b >>> 31) & ((b - a - lo) >>> 0 <= span ? 1 : 0)) ^ flip;
  }
  return n;
}
function markReview(decided: Uint32Array, received: Uint32Array, lo: number, span: number, flip: number, docs: Uint32Array, n: number, marks: Uint8Array): void {
  for (let i = 0; i < n; i++) {
    const d = docs[i]!;
    const a = received[d]!;
    const b = decided[d]!;
    marks[i]! |= ((-a >>> 31) & (-b >>> 31) & ((b - a - lo) >>> 0 <= span ? 1 : 0)) ^ flip;
  }
}

/**
 * The test over candidates in place: keeps docs[i] (i < n) that pass (that fail, when `negate`), in order, at the
 * front, and returns how many. One pass and branch-free whatever the share: each candidate is written where the next
 * kept one goes, and the count moves on only when it passes.
 */
export function keepOf(t: Test, negate: boolean): Keep {
  const flip = negate ? 1 : 0;
  switch (t.kind) {
    case 'set': {
      const { col, ok } = t;
      if (col instanceof Uint8Array) return (docs, n) => keepSet8(col, ok, flip, docs, n);
      if (col instanceof Uint16Array) return (docs, n) => keepSet16(col, ok, flip, docs, n);
      return (docs, n) => keepSet32(col, ok, flip, docs, n);
    }
    case 'range': {
      const { col, lo, hi } = t;
      return (docs, n) => keepRange(col, lo, hi - lo, flip, docs, n);
    }
    case 'review': {
      const { decided, received, lo, hi } = t;
      return (docs, n) => keepReview(decided, received, lo, hi - lo, flip, docs, n);
    }
    case 'ids': {
      const { lo, hi } = t;
      return (docs, n) => {
        let kept = 0;
        for (let i = 0; i < n; i++) {
          const d = docs[i]!;
          docs[kept] = d;
          kept += (d >= lo && d < hi ? 1 : 0) ^ flip;
        }
        return kept;
      };
    }
  }
}

// The kernels of `keepOf`, one function per column type (monomorphic, as the others above).
function keepSet8(col: Uint8Array, ok: Uint8Array, flip: number, docs: Uint32Array, n: number): number {
  let kept = 0;
  for (let i = 0; i < n; i++) {
    const d = docs[i]!;
    docs[kept] = d;
    kept += ok[col[d]!]! ^ flip;
  }
  return kept;
}
function keepSet16(col: Uint16Array, ok: Uint8Array, flip: number, docs: Uint32Array, n: number): number {
  let kept = 0;
  for (let i = 0; i < n; i++) {
    const d = docs[i]!;
    docs[kept] = d;
    kept += ok[col[d]!]! ^ flip;
  }
  return kept;
}
function keepSet32(col: Uint32Array, ok: Uint8Array, flip: number, docs: Uint32Array, n: number): number {
  const size = ok.length;
  let kept = 0;
  for (let i = 0; i < n; i++) {
    const d = docs[i]!;
    const v = col[d]!;
    docs[kept] = d;
    kept += (v < size ? ok[v]! : 0) ^ flip;
  }
  return kept;
}
function keepRange(col: Uint32Array, lo: number, span: number, flip: number, docs: Uint32Array, n: number): number {
  let kept = 0;
  for (let i = 0; i < n; i++) {
    const d = docs[i]!;
    docs[kept] = d;
    kept += ((col[d]! - lo) >>> 0 <= span ? 1 : 0) ^ flip;
  }
  return kept;
}
function keepReview(decided: Uint32Array, received: Uint32Array, lo: number, span: number, flip: number, docs: Uint32Array, n: number): number {
  let kept = 0;
  for (let i = 0; i < n; i++) {
    const d = docs[i]!;
    const a = received[d]!;
    const b = decided[d]!;
    docs[kept] = d;
    kept += ((-a >>> 31) & (-b >>> 31) & ((b - a - lo) >>> 0 <= span ? 1 : 0)) ^ flip;
  }
  return kept;
}

/** The test over the ids lo..hi-1 (those that fail, when `negate`), written to `out` ascending. */
export function scanOf(t: Test, negate: boolean, share = 0.5): Scan {
  const want = negate ? 0 : 1;
  const flip = want ^ 1;
  switch (t.kind) {
    case 'set': {
      const { col, ok } = t;
      if (col instanceof Uint8Array) return skewed(share) ? (lo, hi, out) => scanSet8Branch(col, ok, want, lo, hi, out) : (lo, hi, out) => scanSet8(col, ok, flip, lo, hi, out);
      if (col instanceof Uint16Array) return skewed(share) ? (lo, hi, out) => scanSet16Branch(col, ok, want, lo, hi, out) : (lo, hi, out) => scanSet16(col, ok, flip, lo, hi, out);
      return (lo, hi, out) => scanSet32(col, ok, want, lo, hi, out);
    }
    case 'range': {
      const { col, lo: from, hi: to, within } = t;
      const scan = skewed(share) ? scanRangeBranch : scanRange;
      const pass = skewed(share) ? want : flip;
      if (negate || !within) return (lo, hi, out) => scan(col, from, to - from, pass, lo, hi, out);
      // Only where a document can pass: the two id ranges of `within`, in order.
      const [a, b, c, d] = within;
      return (lo, hi, out) => {
        const n = scan(col, from, to - from, pass, Math.max(lo, a), Math.min(hi, b), out);
        const rest = out.subarray(n);
        return n + scan(col, from, to - from, pass, Math.max(lo, c), Math.min(hi, d), rest);
      };
    }
    case 'review': {
      const { decided, received, lo: from, hi: to } = t;
      if (skewed(share)) return (lo, hi, out) => scanReviewBranch(decided, received, from, to - from, want, lo, hi, out);
      return (lo, hi, out) => scanReview(decided, received, from, to - from, flip, lo, hi, out);
    }
    case 'ids': {
      const { lo: from, hi: to } = t;
      return (lo, hi, out) => {
        let n = 0;
        for (let d = lo; d < hi; d++) if ((d >= from && d < to ? 1 : 0) === want) out[n++] = d;
        return n;
      };
    }
  }
}

/** Filters only: a qualifier passes (0 points) or fails (-1); it never changes the order. */
function qualifierCondition(index: SearchIndex, q: Qualifier): Condition {
  if (q.field === 'device') return q.phrase ? phraseCondition(index, q.words, 0) : deviceWords(index, q.words);
  const test = qualifierTest(index, q)!;
  const share = shareOf(index, test);
  const condition: Condition = {
    cost: Infinity,
    list: null,
    points: (d) => (passes(test, d) ? 0 : -1),
    mark: markOf(test, false, share),
    keep: keepOf(test, false),
    scan: scanOf(test, false, share),
    share,
  };
  if (test.kind === 'range' && test.within) {
    // Its scan visits only the two id ranges of `within` (see scanOf).
    const [a, b, c, d] = test.within;
    const overlap = (lo: number, hi: number, from: number, to: number) => Math.max(0, Math.min(hi, to) - Math.max(lo, from));
    condition.extent = (lo, hi) => overlap(lo, hi, a, b) + overlap(lo, hi, c, d);
  }
  // Qualifiers with few documents per value also give candidates: the documents of the values that pass.
  const rowsOf = q.field === 'applicant' ? index.applicantDocs : q.field === 'code' || q.field === 'class' ? index.codeDocs : null;
  if (rowsOf && test.kind === 'set') {
    const ok = test.ok;
    let total = 0;
    let parts = 0;
    for (let i = 0; i + 1 < rowsOf.offsets.length; i++) {
      if (ok[i]) {
        total += rowsOf.offsets[i + 1]! - rowsOf.offsets[i]!;
        parts++;
      }
    }
    // Several rows are merged (a pass over every id when they are many): dearer than a scan of a range that long.
    condition.cost = parts <= 1 ? total : total * 16 >= index.docCount ? total + index.docCount : 2 * total;
    condition.list = () => {
      const parts: Uint32Array[] = [];
      for (let i = 0; i + 1 < rowsOf.offsets.length; i++) if (ok[i]) parts.push(rowsOf.values.subarray(rowsOf.offsets[i]!, rowsOf.offsets[i + 1]!));
      return union(parts, index.docCount);
    };
  } else if (test.kind === 'ids') {
    condition.cost = test.hi - test.lo;
    condition.list = () => idRange(test.lo, test.hi);
  } else if (test.kind === 'review') {
    // A review time range's documents are one span of that sort's order of every document: listed from there (put in
    // id order through a bit per document), rather than found by a scan of two columns over every id (reviewdays:>90
    // passes a fifth of them). Exactly those pass: as the candidates, they need no test.
    const { order, above, within } = rangeSpan(index, test);
    condition.cost = within - above;
    condition.list = () => ascendingIds(order.subarray(above, within), index.docCount, 64);
    condition.exact = true;
  } else if (test.kind === 'set' && !(test.col instanceof Uint32Array) && share * 2 < 1) {
    // A value of a small column that under half the documents hold (country:IN, panel:radiology) also gives
    // candidates: its documents, from the column grouped by value (made once per column), instead of a scan of the
    // column; up to four values, merged. Exactly those pass: as the candidates, they need no test.
    const rows = rowsByValue(test.col);
    const parts: Uint32Array[] = [];
    for (let v = 0; v + 1 < rows.offsets.length; v++) {
      if (test.ok[v] === 1 && rows.offsets[v + 1]! > rows.offsets[v]!) parts.push(rows.values.subarray(rows.offsets[v]!, rows.offsets[v + 1]!));
    }
    if (parts.length <= 4) {
      const total = parts.reduce((sum, p) => sum + p.length, 0);
      condition.cost = parts.length <= 1 ? total : 2 * total;
      condition.list = () => (parts.length === 1 ? parts[0]!.slice() : union(parts, index.docCount));
      condition.exact = true;
    }
  }
  return condition;
}

/** Folded `value` starts with `text` (already folded, spaces collapsed). */
function startsWithText(value: string, text: string): boolean {
  return foldText(value).replace(/\s+/g, ' ').startsWith(text);
}

/**
 * Applicant groups whose name, without legal suffixes, has a word starting with each of `words`. A term that is a
 * legal suffix reaches no group: "co" finds Cook and Covidien, not every "Co.".
 */
export function applicantMask(index: SearchIndex, words: readonly string[], ok: Uint8Array): void {
  const hits = new Uint8Array(index.applicants.length);
  words.forEach((word, i) => {
    const lo = partitionPoint(0, index.terms.length, (t) => index.terms[t]! < word);
    for (let t = lo; t < index.terms.length && index.terms[t]!.startsWith(word); t++) {
      if (LEGAL_SUFFIXES.has(index.terms[t]!)) continue;
      for (let j = index.termApplicantOffsets[t]!, end = index.termApplicantOffsets[t + 1]!; j < end; j++) {
        const g = index.termApplicants[j]!;
        if (hits[g] === i) hits[g] = i + 1;
      }
    }
  });
  for (let g = 0; g < hits.length; g++) if (hits[g] === words.length) ok[g] = 1;
}

/** Every word is a word of the device name or the start of one. */
function deviceWords(index: SearchIndex, words: readonly string[]): Condition {
  const ranges = words.map((word) => {
    const lo = partitionPoint(0, index.terms.length, (t) => index.terms[t]! < word);
    const hi = lo + partitionPoint(0, index.terms.length - lo, (t) => index.terms[lo + t]!.startsWith(word));
    return { lo, hi, cost: index.termDocOffsets[hi]! - index.termDocOffsets[lo]! };
  });
  if (ranges.some((r) => r.cost === 0)) return NOTHING;
  const cheapest = ranges.reduce((a, b) => (b.cost < a.cost ? b : a));
  const { offsets, values } = index.docTerms;
  return {
    cost: cheapest.cost,
    list: () => {
      spend(Math.ceil(cheapest.cost / POSTINGS_A_STEP));
      return union([index.termDocs.subarray(index.termDocOffsets[cheapest.lo]!, index.termDocOffsets[cheapest.hi]!)], index.docCount);
    },
    points: (d) => {
      spend(ranges.length);
      for (const r of ranges) {
        let found = false;
        for (let i = offsets[d]!, end = offsets[d + 1]!; i < end && !found; i++) {
          const t = values[i]!;
          if (t >= r.hi) break;
          if (t >= r.lo) found = true;
        }
        if (!found) return -1;
      }
      return 0;
    },
  };
}

/** The distinct documents of several lists, ascending. */
function union(lists: readonly Uint32Array[], docCount: number): Uint32Array {
  let total = 0;
  for (const l of lists) total += l.length;
  if (total * 16 >= docCount) return idsByBits(docCount, lists);
  const all = new Uint32Array(total);
  let at = 0;
  for (const l of lists) {
    all.set(l, at);
    at += l.length;
  }
  all.sort();
  let n = 0;
  for (let i = 0; i < all.length; i++) if (i === 0 || all[i] !== all[i - 1]) all[n++] = all[i]!;
  return all.subarray(0, n);
}
