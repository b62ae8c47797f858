/**
 * What the browser page needs of the engine, bundled into public/js/search-engine.js (npm run build:page) so that the
 * static page answers with the same code, the same index and therefore the same totals and order as the API.
 */
export { loadSearchIndex, type ReadSnapshotFile } from './load.ts';
export { runSearch, type SearchRequest, type SearchOutcome } from './engine.ts';
export { kNumberText } from './k-number.ts';
export type { SearchIndex } from './model.ts';
export { yearCounts } from './years.ts';
export { ChunkedIndex, type FirstPage } from './chunked.ts';
export { spellingOverIndex, type SpellingSuggestion } from './spelling.ts';
export { parseChunkDirectory, ChunkFormatError, type ReadChunk } from './chunk-directory.ts';
