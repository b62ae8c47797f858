import type { Facet } from '../contract/envelope.ts';
import { countFacets } from './facets.ts';
import { matchDocuments } from './match.ts';
import type { SearchIndex } from './model.ts';
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
  const matches = matchDocuments(index, {
    words: queryWords(req.query),
    applicant: req.applicant,
    productCode: req.productCode,
    yearFrom: req.yearFrom,
    yearTo: req.yearTo,
  });
  const offset = (req.page - 1) * req.pageSize;
  const page = pageOf(matches.docs, matches.scores, offset, req.pageSize);
  return {
    total: matches.docs.length,
    kNumbers: Array.from(page, (d) => kNumberText(index.docKNumber[d]!)),
    facets: countFacets(index, matches.docs),
  };
}

export const kNumberText = (digits: number): string => `K${String(digits).padStart(6, '0')}`;
