import type { Clause, ParsedQuery, Qualifier, Term } from './grammar.ts';
import type { Condition, Mark, Matches } from './conditions.ts';
import { matchDocumentsSteps, type MatchRequest } from './match.ts';
import { pointsFor } from './score.ts';
import { newScratch, prepareWord, scanWord, termMarks, Tier, tierOf, type PreparedWord } from './words.ts';
import { decidedIds, passes, qualifierTest, shareOf } from './column-tests.ts';
import { keepOf, markOf, scanOf } from './column-kernels.ts';
import { partitionPoint } from '../utils/bisect.ts';
import { sliceSteps, spend } from './budget.ts';
import { runSteps, type Steps } from './slices.ts';
import type { SearchIndex } from './model.ts';
import { idsByBits } from './docset.ts';
import { ascendingIds, rangeSpan } from './sort.ts';
import { rowsByValue } from './csr.ts';
import { idRange } from '../utils/id-range.ts';
import { predicateCondition } from './predicates.ts';
import { kept } from './kept.ts';

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
      exclusionMaps.set(index, kept(index, may, may.byteLength));
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

/** Filters only: a qualifier passes (0 points) or fails (-1); it never changes the order. */
function qualifierCondition(index: SearchIndex, q: Qualifier): Condition {
  if (q.field === 'device') return q.phrase ? phraseCondition(index, q.words, 0) : deviceWords(index, q.words);
  if (q.field === 'predicate') return predicateCondition(index, q.number, q.kinds);
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

/** Every word is a word of the device name or the start of one. */
function deviceWords(index: SearchIndex, words: readonly string[]): Condition {
  const ranges = words.map((word) => {
    const lo = partitionPoint(0, index.terms.length, (t) => index.terms[t]! < word);
    const hi = lo + partitionPoint(0, index.terms.length - lo, (t) => index.terms[lo + t]!.startsWith(word));
    return { lo, hi, cost: index.termDocOffsets[hi]! - index.termDocOffsets[lo]! };
  });
  if (ranges.some((r) => r.cost === 0)) return NOTHING;
  const cheapest = ranges.reduce((a, b) => (b.cost < a.cost ? b : a));
  const list = () => {
    spend(Math.ceil(cheapest.cost / POSTINGS_A_STEP));
    return union([index.termDocs.subarray(index.termDocOffsets[cheapest.lo]!, index.termDocOffsets[cheapest.hi]!)], index.docCount);
  };
  if (index.withoutForward) {
    // Each range's documents from its postings (words.ts termMarks), made on the first document checked.
    let marks: Uint8Array[] | null = null;
    return {
      cost: cheapest.cost,
      list,
      points: (d) => {
        spend(ranges.length);
        marks ??= ranges.map((r) => termMarks(index, r.lo, r.hi, -1));
        for (const m of marks) if (m[d] === 0) return -1;
        return 0;
      },
    };
  }
  const { offsets, values } = index.docTerms;
  return {
    cost: cheapest.cost,
    list,
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
