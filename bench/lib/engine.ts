import type { Facet, RequestedFacet, SearchInput } from '../../src/contract/index.ts';

/**
 * What each search engine computes for one request: the exact total, the three facets over every match, and the
 * page's K numbers. Both engines answer the same requests, and their totals and facets are compared one by one.
 */
export type Answer = { total: number; facets: Facet[] | RequestedFacet[]; kNumbers: string[] };

export type SearchEngine = {
  run(input: SearchInput): Answer;
  close(): void;
};

export type EngineName = 'ours' | 'sqlite';
