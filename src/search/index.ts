export { foldText, tokenize, queryWords, applicantKey, kNumberRange } from './tokenize.ts';
export { encodeSearchIndex, decodeSearchIndex, SearchIndexFormatError, type SearchIndexData } from './codec.ts';
export { openSearchIndex, findApplicant, findCode, yearRange, type SearchIndex } from './model.ts';
export { Tier, prepareWord, tierOf, scanWord, matchDocuments, pointsFor, newScratch, release, type Matches, type MatchRequest, type PreparedWord, type TierSet } from './match.ts';
export { pageOf } from './rank.ts';
export { countFacets, topCounts, FACET_SIZE, type DocSet } from './facets.ts';
export { runSearch, kNumberText, type SearchRequest, type SearchOutcome } from './query.ts';
export { loadSearchIndex, type ReadSnapshotFile } from './load.ts';
