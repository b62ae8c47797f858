import type { Facet } from '../contract/envelope.ts';
import { countFacets } from './facets.ts';
import { matchDocuments } from './match.ts';
import { yearRange, type SearchIndex } from './model.ts';
import { pageOf } from './rank.ts';
import { queryWords } from './tokenize.ts';

export type SearchRequest = {
  query: string;
  applicant: string | null;
  productCode: string | null;
  yearFrom: number | null;
  yearTo: number | null;
  page: number;
  pageSize: number;
};

export type SearchOutcome = {
  /** The exact number of matches. */
  total: number;
  /** The page's K numbers, in answer order. */
  kNumbers: string[];
  facets: Facet[];
};

/** One search over a loaded index: pure, synchronous, and the same request always gives the same outcome. */
export function runSearch(index: SearchIndex, req: SearchRequest): SearchOutcome {
  const words = queryWords(req.query);
  const offset = (req.page - 1) * req.pageSize;
  if (words.length === 0 && req.applicant === null && req.productCode === null) return browse(index, req, offset);

  const matches = matchDocuments(index, {
    words,
    applicant: req.applicant,
    productCode: req.productCode,
    yearFrom: req.yearFrom,
    yearTo: req.yearTo,
  });
  const page = pageOf(matches.docs, matches.scores, offset, req.pageSize);
  return {
    total: matches.docs.length,
    kNumbers: Array.from(page, (d) => kNumberText(index.docKNumber[d]!)),
    facets: countFacets(index, matches.docs),
  };
}

/**
 * No query words and no applicant or product code: the matches are one range of document ids (all of them, or one
 * range of decision years), so nothing is listed, and the facets of "everything" are counted once per index.
 */
function browse(index: SearchIndex, req: SearchRequest, offset: number): SearchOutcome {
  const { lo, hi } = yearRange(index, req.yearFrom, req.yearTo);
  const total = Math.max(0, hi - lo);
  const kNumbers: string[] = [];
  for (let d = lo + offset; d < hi && kNumbers.length < req.pageSize; d++) kNumbers.push(kNumberText(index.docKNumber[d]!));
  const everything = lo === 0 && hi === index.docCount;
  const facets = everything ? structuredClone(facetsOfEverything(index)) : countFacets(index, { lo, hi: lo + total });
  return { total, kNumbers, facets };
}

const everythingFacets = new WeakMap<SearchIndex, Facet[]>();

function facetsOfEverything(index: SearchIndex): Facet[] {
  let facets = everythingFacets.get(index);
  if (!facets) everythingFacets.set(index, (facets = countFacets(index, { lo: 0, hi: index.docCount })));
  return facets;
}

export const kNumberText = (digits: number): string => `K${String(digits).padStart(6, '0')}`;
