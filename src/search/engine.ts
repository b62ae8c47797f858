import type { Facet } from '../contract/envelope.ts';
import { SLICE_STEPS, stepsLeft, WORK_BUDGET, withWorkBudget } from './budget.ts';
import { checkQueryCost } from './cost.ts';
import { denseSearch } from './dense.ts';
import { matchParsedSteps } from './plan.ts';
import { countFacetFieldsSteps, type FacetOut, type FacetRequest } from './facet-fields.ts';
import type { ListOrRange } from './docset.ts';
import { countFacets } from './facets.ts';
import { parseQuery, type ParsedQuery } from './grammar.ts';
import type { Matches } from './conditions.ts';
import { matchDocuments, matchDocumentsSteps } from './match.ts';
import { yearRange, type SearchIndex } from './model.ts';
import { rankedPage } from './page.ts';
import { orderPage, orderRange, type Sort } from './sort.ts';
import { runSliced, runSteps, SLICE_DOCS, type Slicing, type Steps } from './slices.ts';
import { reviewStats, type ReviewStats } from './stats.ts';
import { queryWords } from './tokenize.ts';
import { idRange } from '../utils/id-range.ts';
import { kNumberText } from './k-number.ts';

export type SearchRequest = {
  query: string;
  applicant: string | null;
  productCode: string | null;
  yearFrom: number | null;
  yearTo: number | null;
  page: number;
  pageSize: number;
  /** Extensions (docs/search.md); each absent means today's answer. */
  sort?: Sort;
  facets?: readonly FacetRequest[];
  stats?: boolean;
  /**
   * The values one facet may list (the host's bound, docs/limits.md); FACET_VALUES_MAX when absent. A facet over it
   * throws FacetValuesError.
   */
  facetValuesMax?: number;
  /**
   * `query` as the grammar parsed it, from the caller that checked it where the request entered (the server does, once
   * a request); when absent, the engine parses `query` once and hands the parse on.
   */
  parsed?: ParsedQuery;
};

/** A request whose query is parsed. */
type Parsed<R extends { query: string; parsed?: ParsedQuery }> = R & { parsed: ParsedQuery };

/** The request with its query's parse: the one it carries, or a new one. Throws QueryError on a bad query. */
function withParse<R extends { query: string; parsed?: ParsedQuery }>(req: R): Parsed<R> {
  return req.parsed ? (req as Parsed<R>) : { ...req, parsed: parseQuery(req.query) };
}

export type SearchOutcome = {
  /** The exact number of matches. */
  total: number;
  /** The page's K numbers, in answer order. */
  kNumbers: string[];
  facets: Facet[] | FacetOut[];
  stats?: ReviewStats;
};

/** Every match, ascending by id, with relevance points (null without scoring words, or under a sort); or one id range. */
export type MatchSet = { docs: Uint32Array; scores: Uint32Array | null } | { lo: number; hi: number };

/**
 * The matches of a request: plain requests take the paths they always took. Throws QueryError on a bad query, and
 * QueryCostError (a QueryError) on one over a limit of src/search/cost.ts, before evaluating it, or over the work
 * budget (src/search/budget.ts) while evaluating it.
 */
export function matchesOf(index: SearchIndex, req: Omit<SearchRequest, 'page' | 'pageSize'>): MatchSet {
  const parsed = withParse(req).parsed;
  checkQueryCost(parsed, index);
  return withWorkBudget(WORK_BUDGET, () => runSteps(matchesWithin(index, req, parsed)));
}

function* matchesWithin(index: SearchIndex, req: Omit<SearchRequest, 'page' | 'pageSize'>, parsed: ParsedQuery): Steps<MatchSet> {
  // Ordered by a sort: which documents match is all that counts (no relevance scores).
  const unscored = req.sort !== undefined && req.sort !== 'relevance';
  const filters = { applicant: req.applicant, productCode: req.productCode, yearFrom: req.yearFrom, yearTo: req.yearTo, unscored };
  if (parsed.plain) {
    const words = queryWords(req.query);
    if (words.length === 0 && req.applicant === null && req.productCode === null) {
      const { lo, hi } = yearRange(index, req.yearFrom, req.yearTo);
      return { lo, hi: Math.max(lo, hi) };
    }
    return yield* matchDocumentsSteps(index, { words, ...filters });
  }
  return yield* matchParsedSteps(index, parsed, filters);
}


const asListOrRange = (m: MatchSet): ListOrRange => ('docs' in m ? m.docs : m);

/** Matches as a list, in id order (a range becomes its ids). */
export function matchList(m: MatchSet): Matches {
  if ('docs' in m) return m;
  return { docs: idRange(m.lo, m.hi), scores: null };
}

const isExtended = (req: Parsed<SearchRequest>): boolean =>
  (req.sort !== undefined && req.sort !== 'relevance') || req.facets !== undefined || req.stats === true || !req.parsed.plain;

/**
 * One search over a loaded index: pure, synchronous, and the same request always gives the same outcome. Refuses a
 * query over a limit as `matchesOf` does; `budget` is the work budget's steps (tests give smaller ones).
 */
export function runSearch(index: SearchIndex, req: SearchRequest, budget: number = WORK_BUDGET): SearchOutcome {
  return runSteps(searchSteps(index, req, budget, Infinity, Infinity, null));
}

/**
 * `runSearch` in slices (slices.ts): the same outcome, with the event loop given back between the phases of the
 * search and between slices of its facet counts, and stopped at the first yield point after `slicing.cancel` is
 * aborted (it then rejects with the cancellation's reason).
 */
export function runSearchSliced(index: SearchIndex, req: SearchRequest, slicing: Slicing, budget: number = WORK_BUDGET): Promise<SearchOutcome> {
  return runSliced(searchSteps(index, req, budget, slicing.sliceDocs ?? SLICE_DOCS, slicing.sliceSteps ?? SLICE_STEPS, slicing.onPage ?? null), slicing);
}

/**
 * The work budget across the synchronous phases of one search. The budget's counter is the evaluation running now,
 * so it is set around each phase (never across a yield point, where another search may run) and what is left carried
 * to the next.
 */
function budgeted(steps: number, sliceSteps: number): Charged {
  let left = steps;
  return (phase) =>
    withWorkBudget(
      left,
      () => {
        const out = phase();
        left = stepsLeft();
        return out;
      },
      sliceSteps,
    );
}

type Charged = <T>(phase: () => T) => T;

/** A phase with yield points of its own, charged to the budget one slice at a time (each resumed inside it). */
function* chargedSteps<T>(charged: Charged, steps: Steps<T>): Steps<T> {
  try {
    for (;;) {
      const next = charged(() => steps.next());
      if (next.done) return next.value;
      yield;
    }
  } finally {
    // Stopped early (cancelled): the phase's own `finally` blocks give back what it borrowed.
    charged(() => steps.return(undefined as never));
  }
}

/**
 * Told the document ids of the answer's page, in answer order, by a reader that holds K numbers apart (chunked.ts):
 * it reads the page's K numbers itself, so the outcome's `kNumbers` is left empty.
 */
type OnPage = ((docs: Uint32Array) => void) | null;

function* searchSteps(index: SearchIndex, request: SearchRequest, budget: number, sliceDocs: number, sliceSteps: number, onPage: OnPage): Steps<SearchOutcome> {
  const req = withParse(request);
  checkQueryCost(req.parsed, index);
  const charged = budgeted(budget, sliceSteps);
  if (isExtended(req)) return yield* extendedSteps(index, req, charged, sliceDocs, onPage);
  const words = queryWords(req.query);
  const offset = (req.page - 1) * req.pageSize;
  if (words.length === 0 && req.applicant === null && req.productCode === null) return browse(index, req, offset, onPage);

  const matches = charged(() =>
    matchDocuments(index, {
      words,
      applicant: req.applicant,
      productCode: req.productCode,
      yearFrom: req.yearFrom,
      yearTo: req.yearTo,
    }),
  );
  yield;
  const page = rankedPage(matches.docs, matches.scores, offset, req.pageSize);
  onPage?.(page);
  yield;
  return {
    total: matches.docs.length,
    kNumbers: onPage ? [] : kNumbersOf(index, page),
    facets: countFacets(index, matches.docs),
  };
}

/**
 * No query words and no applicant or product code: the matches are one range of document ids (all of them, or one
 * range of decision years), so nothing is listed, and the facets of "everything" are counted once per index.
 */
function browse(index: SearchIndex, req: SearchRequest, offset: number, onPage: OnPage): SearchOutcome {
  const { lo, hi } = yearRange(index, req.yearFrom, req.yearTo);
  const total = Math.max(0, hi - lo);
  const from = Math.min(hi, lo + offset);
  const page = Uint32Array.from({ length: Math.min(req.pageSize, hi - from) }, (_, i) => from + i);
  onPage?.(page);
  const kNumbers = onPage ? [] : kNumbersOf(index, page);
  const everything = lo === 0 && hi === index.docCount;
  const facets = everything ? structuredClone(facetsOfEverything(index)) : countFacets(index, { lo, hi: lo + total });
  return { total, kNumbers, facets };
}

function* extendedSteps(index: SearchIndex, req: Parsed<SearchRequest>, charged: Charged, sliceDocs: number, onPage: OnPage): Steps<SearchOutcome> {
  const offset = (req.page - 1) * req.pageSize;
  if (req.facets === undefined && req.stats !== true && req.applicant === null && req.productCode === null) {
    const parsed = req.parsed;
    const dense = parsed.plain ? null : charged(() => denseSearch(index, parsed, req, req.sort ?? 'relevance', offset, req.pageSize));
    if (dense) {
      onPage?.(dense.page);
      return { total: dense.total, kNumbers: onPage ? [] : kNumbersOf(index, dense.page), facets: dense.facets };
    }
    yield;
  }
  const matches = yield* chargedSteps(charged, matchesWithin(index, req, req.parsed));
  yield;
  const set = asListOrRange(matches);
  let page: Uint32Array;
  let total: number;
  if ('docs' in matches) {
    total = matches.docs.length;
    page = orderPage(index, matches.docs, matches.scores, req.sort ?? 'relevance', offset, req.pageSize);
  } else {
    total = matches.hi - matches.lo;
    page = orderRange(index, matches.lo, matches.hi, req.sort ?? 'relevance', offset, req.pageSize);
  }
  onPage?.(page);
  yield;
  const everything = !('docs' in matches) && matches.lo === 0 && matches.hi === index.docCount;
  const outcome: SearchOutcome = {
    total,
    kNumbers: onPage ? [] : kNumbersOf(index, page),
    facets:
      req.facets !== undefined
        ? yield* countFacetFieldsSteps(index, set, req.facets, sliceDocs, req.parsed.edgeKinds, req.facetValuesMax)
        : everything
          ? structuredClone(facetsOfEverything(index))
          : countFacets(index, set),
  };
  if (req.stats) {
    yield;
    outcome.stats = reviewStats(index, set);
  }
  return outcome;
}

const everythingFacets = new WeakMap<SearchIndex, Facet[]>();

function facetsOfEverything(index: SearchIndex): Facet[] {
  let facets = everythingFacets.get(index);
  if (!facets) everythingFacets.set(index, (facets = countFacets(index, { lo: 0, hi: index.docCount })));
  return facets;
}

/** The page's K numbers (a loop: Array.from over a typed array with a mapping function is many times slower). */
function kNumbersOf(index: SearchIndex, page: Uint32Array): string[] {
  const out: string[] = [];
  for (let i = 0; i < page.length; i++) out.push(kNumberText(index.docKNumber[page[i]!]!));
  return out;
}
