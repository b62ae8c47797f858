import { lowerBound } from '../utils/bisect.ts';
import { runSteps, type Steps } from './slices.ts';
import { findApplicant, findCode, yearRange, type SearchIndex } from './model.ts';
import { ascendingIds } from './sort.ts';
import { idRange } from '../utils/id-range.ts';
import { Pace, type Condition, type Matches } from './conditions.ts';
import { scoreByConditions, scoreByWords, type SourceWord } from './score.ts';
import { newScratch, prepareWord, scanCostWithin, TierLoans, wordDocs, type PreparedWord } from './words.ts';

export type MatchRequest = {
  words: readonly string[];
  applicant: string | null;
  productCode: string | null;
  yearFrom: number | null;
  yearTo: number | null;
  /** Documents outside this id range never match (a decision-date qualifier); the whole index when absent. */
  ids?: { lo: number; hi: number };
  /** Further conditions (qualifiers, phrases, OR, exclusions: src/search/plan.ts); each adds its points. */
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


/**
 * The matching in four steps: resolve the filters (`boundsOf`) and the words (`wordsWithin`), choose where the first
 * candidates come from (`chooseSource`, `candidatesOf`), drop those the filters fail (`filterSteps`), then score them
 * (score.ts).
 */
function* matchWith(index: SearchIndex, req: MatchRequest, loans: TierLoans): Steps<Matches> {
  const n = req.units ?? req.words.length;
  const scored = n > 0 && req.unscored !== true;
  const extra = req.extra ?? [];
  const empty: Matches = { docs: new Uint32Array(0), scores: scored ? new Uint32Array(0) : null };

  const bounds = boundsOf(index, req);
  if (!bounds) return empty;
  const prepared = wordsWithin(index, req.words, bounds.lo, bounds.hi);
  if (!prepared) return empty;
  const { words, costOf } = prepared;

  const choice = chooseSource(index, bounds, words[0], costOf, extra, scored, loans);
  // From a plain id range, the first filter that can scans the range's column itself: no list of every id is made.
  // Filters run most selective first: each later one reads only what the earlier ones kept.
  const filters = extra.filter((c) => c.mark && !(c.exact && c === choice.source.condition)).sort((a, b) => (a.share ?? 1) - (b.share ?? 1));
  const fused = choice.plainRange ? (choice.scanner ?? filters.find((c) => c.scan)) : undefined;
  const pace = new Pace();
  let { docs, kept } = yield* candidatesOf(index, bounds, choice, fused, pace);
  kept = yield* filterSteps(docs, kept, filters, fused, pace);

  const scoring = extra.filter((c) => !c.mark);
  if (kept < docs.length && kept * 4 < docs.length) docs = docs.slice(0, kept); // let a large list go
  const scores: Uint32Array | null = scored ? new Uint32Array(kept) : null;
  if (scoring.length > 0 && kept > 0) kept = yield* scoreByConditions(docs, kept, scoring, scores, pace);
  docs = scoreByWords(index, docs.subarray(0, kept), scores, words, costOf, choice.source, n, loans, bounds.lo, bounds.hi);
  return { docs, scores: scores === null ? null : scores.subarray(0, docs.length) };
}

/** What narrows the matches before any word: an id range (years, decision dates), a product code, an applicant. */
type Bounds = { lo: number; hi: number; code: number | null; applicant: number | null };

/** The request's filters against the index; null when they leave nothing (an unknown code or applicant, no ids). */
function boundsOf(index: SearchIndex, req: MatchRequest): Bounds | null {
  const code = req.productCode === null ? null : findCode(index, req.productCode);
  if (req.productCode !== null && code === null) return null;
  const applicant = req.applicant === null ? null : findApplicant(index, req.applicant);
  if (req.applicant !== null && applicant === null) return null;
  const years = yearRange(index, req.yearFrom, req.yearTo);
  if (req.ids) {
    years.lo = Math.max(years.lo, req.ids.lo);
    years.hi = Math.min(years.hi, req.ids.hi);
  }
  if (years.hi <= years.lo) return null;
  return { lo: years.lo, hi: years.hi, code, applicant };
}

/**
 * The query's words resolved against the index, cheapest first, with what each costs within the ids [lo, hi); null
 * when a word reaches nothing.
 */
function wordsWithin(index: SearchIndex, texts: readonly string[], lo: number, hi: number): { words: PreparedWord[]; costOf: (w: PreparedWord) => number } | null {
  // A word that reaches nothing empties the answer (AND): stop before preparing the rest.
  const scratch = newScratch(index);
  const words: PreparedWord[] = [];
  for (const text of texts) {
    const w = prepareWord(index, text, scratch);
    if (w.scanCost === 0) return null;
    words.push(w);
  }
  // Every candidate lies within the id range (a year or decision-date filter): a word's scan visits only the postings
  // there, so that is what it costs.
  const costs = new Map<PreparedWord, number>();
  for (const w of words) costs.set(w, scanCostWithin(index, w, lo, hi));
  const costOf = (w: PreparedWord): number => costs.get(w)!;
  words.sort((a, b) => costOf(a) - costOf(b));
  return { words, costOf };
}

/** One place the first candidates can come from, and what listing them costs. */
type Source = SourceWord & { cost: number; docs: () => Uint32Array; condition?: Condition };

/**
 * The source of the first candidates, and whether it is the plain id range; `scanner` is the filter whose scan of the
 * id range visits the fewest ids (`extent` of them), when one visits fewer than the range holds.
 */
type Choice = { source: Source; plainRange: boolean; scanner: Condition | undefined; extent: number };

/**
 * The cheapest source of candidates: the id range, the product code's or the applicant's documents, a condition's
 * list, or the cheapest word's postings (its tiers kept on the source when scored).
 */
function chooseSource(
  index: SearchIndex,
  bounds: Bounds,
  firstWord: PreparedWord | undefined,
  costOf: (w: PreparedWord) => number,
  extra: readonly Condition[],
  scored: boolean,
  loans: TierLoans,
): Choice {
  const { lo, hi, code, applicant } = bounds;
  // A filter that scans the id range itself (candidatesOf) visits only the ids it can pass: the range costs that many.
  let extent = hi - lo;
  let scanner: Condition | undefined;
  if (code === null && applicant === null) {
    for (const c of extra) {
      if (!c.scan || !c.mark || !c.extent) continue;
      const e = c.extent(lo, hi);
      if (e < extent) {
        extent = e;
        scanner = c;
      }
    }
  }
  const sources: Source[] = [{ cost: extent, docs: () => idRange(lo, hi), word: null, tiers: null }];
  if (code !== null) sources.push({ cost: rowLength(index.codeDocs, code), docs: () => row(index.codeDocs, code), word: null, tiers: null });
  if (applicant !== null) {
    sources.push({ cost: rowLength(index.applicantDocs, applicant), docs: () => row(index.applicantDocs, applicant), word: null, tiers: null });
  }
  for (const c of extra) {
    const list = c.list;
    if (list) sources.push({ cost: c.cost, docs: list, word: null, tiers: null, condition: c });
  }
  if (firstWord) {
    const wordSource: Source = {
      cost: costOf(firstWord),
      word: firstWord,
      tiers: null,
      docs: () => {
        if (!scored) return wordDocs(index, firstWord);
        const { tiers, touched } = loans.scan(firstWord, lo, hi);
        wordSource.tiers = tiers;
        // In a new array: the candidates are filtered in place, and the touched list is what clears the tiers
        // afterwards. Sorting beats reading the whole tier array a byte a document (a branch each, missed at every
        // match) up to about a tenth of the index, measured at a million documents.
        return ascendingIds(touched, tiers.length, 10);
      },
    };
    sources.push(wordSource);
  }
  // Ties go to the earlier source: the year range, then the filters, then the word.
  const source = sources.reduce((best, s) => (s.cost < best.cost ? s : best));
  return { source, plainRange: source === sources[0] && code === null && applicant === null, scanner, extent };
}

/**
 * The first candidates, ascending, within the bounds: written by the `fused` filter's scan of the id range when there
 * is one, else listed by the source and narrowed to the id range, product code and applicant. The candidates are
 * docs[i] for i < kept.
 */
function* candidatesOf(index: SearchIndex, bounds: Bounds, choice: Choice, fused: Condition | undefined, pace: Pace): Steps<{ docs: Uint32Array; kept: number }> {
  const { lo, hi, code, applicant } = bounds;
  const { source, plainRange, scanner, extent } = choice;
  if (!fused) yield* pace.warm(source.condition);
  if (fused) {
    // The scan writes at most one id per id it visits.
    const docs = new Uint32Array(fused === scanner ? extent : hi - lo);
    return { docs, kept: fused.scan!(lo, hi, docs) };
  }
  let docs = source.docs();
  let kept = 0;
  // Every id passes the id range, product code and applicant when none narrows them: no pass to make.
  const open = lo === 0 && hi === index.docCount && code === null && applicant === null;
  if (plainRange || open) kept = docs.length;
  else if (code === null && applicant === null) {
    // Only the id range narrows: the candidates ascend, so those within it are one stretch, found by binary search.
    const list = docs;
    const from = lowerBound(list, lo);
    const to = lowerBound(list, hi, from);
    docs = list.subarray(from, to);
    kept = docs.length;
  } else {
    // Filters first: they are one comparison each, then the conditions that only filter, as passes over columns.
    const codeCol = index.docCode;
    const applicantCol = index.docApplicant;
    for (let i = 0; i < docs.length; i++) {
      const d = docs[i]!;
      if (d < lo || d >= hi) continue;
      if (code !== null && codeCol[d] !== code) continue;
      if (applicant !== null && applicantCol[d] !== applicant) continue;
      docs[kept++] = d;
    }
  }
  return { docs, kept };
}

/**
 * The conditions that only filter, in the order given, over docs[i] (i < kept) in place, but `fused` (its scan wrote
 * the candidates): each keeps those that pass at the front, in order; returns how many are left. Yields between two
 * filters once a slice's steps are spent.
 */
function* filterSteps(docs: Uint32Array, candidates: number, filters: readonly Condition[], fused: Condition | undefined, pace: Pace): Steps<number> {
  let kept = candidates;
  const marks = filters.some((c) => c !== fused && !c.keep) ? new Uint8Array(kept) : null;
  for (const c of filters) {
    if (c === fused || kept === 0) continue;
    if (pace.spent()) {
      yield;
      pace.restart();
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
  return kept;
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
