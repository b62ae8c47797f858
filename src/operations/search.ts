import type { SearchInput } from '../contract/index.ts';
import type { ChunkedIndex } from '../search/chunked.ts';
import { ChunkCache } from '../search/chunk-cache.ts';
import type { ParsedQuery } from '../search/grammar.ts';
import { chunkedOf, chunkedUnavailable, searchFromChunks, searchIndexOf } from '../search/snapshot-index.ts';
import { sectionsFor } from '../search/needs.ts';
import { runSearchSliced, type SearchOutcome, type SearchRequest } from '../search/engine.ts';
import type { SearchIndex } from '../search/model.ts';
import { spellingOverIndex, type SpellingSuggestion } from '../search/spelling.ts';
import { platformPause, type Slicing } from '../search/slices.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import { facetOverLimit, queryOverLimit, SearchUnavailable } from './errors.ts';
import { FacetValuesError } from '../search/facet-fields.ts';
import { QueryCostError } from '../search/cost.ts';
import { parseSearchQuery } from './search-query.ts';
import { FACET_VALUES_AT_ONCE, facetsJson, facetValueCount } from './facets-json.ts';
import { JsonBytes, type DataOf, type OperationContext, type OperationResult } from './types.ts';

/** The whole index of a snapshot, as the operations read it (src/search/snapshot-index.ts). */
export { searchIndexBytes, searchIndexOf } from '../search/snapshot-index.ts';

/**
 * Reads the index ahead of the first search (for example right after a snapshot switch): its header and block table,
 * and the sections every search reads (those of a query with no words).
 */
export async function warmSearch(snapshot: Snapshot): Promise<void> {
  await searchIndexOf(snapshot, sectionsFor({ query: '', applicant: null, productCode: null, yearFrom: null, yearTo: null }));
}

/** The cache a host gives searchFromChunks: one per process (a Worker isolate), bounded by bytes. */
export { ChunkCache };

/**
 * Has a snapshot's searches read its chunked index through a cache bounded by bytes (src/search/snapshot-index.ts);
 * openFDA's endpoints read it too, by the sections they need, and export and feeds through `matchIndexOf`.
 */
export { searchFromChunks };

/** The chunked index a snapshot's searches read, or null (they read the whole index). */
export async function chunkedIndexOf(snapshot: Snapshot): Promise<ChunkedIndex | null> {
  const opened = await chunkedOf(snapshot);
  if (!opened) return null;
  if ('unavailable' in opened) throw new SearchUnavailable(opened.unavailable);
  return opened.chunked;
}

/** A request over every match of a query (an export's, a feed's): no page, no facet counts. */
export type MatchRequest = Omit<SearchRequest, 'page' | 'pageSize' | 'facets' | 'stats'>;

/**
 * The index an operation over every match of a query reads (an export, a feed): on a snapshot whose searches read the
 * chunked index, the files the query and its order read plus the whole decision date and K number columns (every
 * match's order and K number), held until `release`; else the whole index. The arrays stay valid after `release`
 * (a file let go of is only no longer counted by the cache), so a caller may go on reading them while it streams.
 */
export async function matchIndexOf(snapshot: Snapshot, req: MatchRequest): Promise<{ index: SearchIndex; release: () => void }> {
  const chunked = await chunkedIndexOf(snapshot);
  if (!chunked) {
    const loaded = await searchIndexOf(snapshot);
    if ('unavailable' in loaded) throw new SearchUnavailable(loaded.unavailable);
    return { index: loaded.index, release: () => {} };
  }
  const lease = chunked.lease();
  try {
    const files = chunked.directory.files;
    await Promise.all([chunked.ensure(req, false, undefined, lease), chunked.load([files.decided.path, files.docKNumber.path, ...(req.sort?.startsWith('receivedDate') ? [files.docReceived.path] : [])], lease)]);
    // The view over both, once every file is in.
    return { index: await chunked.ensure(req, false, undefined, lease), release: () => lease.release() };
  } catch (err) {
    lease.release();
    throw chunkedFailure(err);
  }
}

/** A chunked index's failure as the operations say it: a damaged file, or predicates it lacks, is a 503. */
function chunkedFailure(err: unknown): unknown {
  const why = chunkedUnavailable(err);
  return why === null ? err : new SearchUnavailable(why);
}

/**
 * The engine's outcome over the chunked index: the files the request reads are fetched (all at once, in as few
 * rounds as its words allow) and held until it is answered, then its page's K numbers from their blocks.
 */
async function chunkedOutcome(chunked: ChunkedIndex, input: PreparedSearch, slicing: Slicing): Promise<SearchOutcome> {
  const lease = chunked.lease();
  try {
    // A warm cache holds every file: no promise is made for them.
    const index = chunked.ready(input, true, lease) ?? (await chunked.ensure(input, true, undefined, lease));
    let page: Uint32Array = new Uint32Array(0);
    // The engine leaves the page's K numbers to the reader that holds them (the blocks or the whole column).
    const outcome = await runSearchSliced(index, input, { ...slicing, onPage: (docs) => (page = docs) });
    outcome.kNumbers = chunked.kNumbersLoaded(page, lease) ?? (await chunked.kNumbers(page, lease));
    return outcome;
  } catch (err) {
    throw chunkedFailure(err);
  } finally {
    lease.release();
  }
}

/** "Did you mean" over the chunked index, the files it reads held until it is answered. */
async function chunkedSpelling(chunked: ChunkedIndex, input: PreparedSearch, total: number): Promise<SpellingSuggestion[]> {
  const lease = chunked.lease();
  try {
    return await chunked.spelling(input, total, lease);
  } catch (err) {
    throw chunkedFailure(err);
  } finally {
    lease.release();
  }
}

/** A search's input with its query parsed, once, before the server looks for a snapshot. */
export type PreparedSearch = SearchInput & { parsed: ParsedQuery; facetValuesMax?: number };

export function prepareSearch(input: SearchInput): PreparedSearch {
  return { ...input, parsed: parseSearchQuery(input.query, 'input.query') };
}

/**
 * device-510k.search (the contract's section 6): the engine gives the page's K numbers, exact total and three
 * facets; the page's records are sent as their bytes, cut from their shards.
 */
export async function search(input: PreparedSearch, ctx: OperationContext): Promise<OperationResult<DataOf<'device-510k.search'>>> {
  // In slices that give the loop back (the host's turns), stopped at the deadline.
  const pause = ctx.pause ?? platformPause;
  const slicing: Slicing = { pause, ...(ctx.cancel && { cancel: ctx.cancel }) };
  const chunked = await chunkedIndexOf(ctx.snapshot);
  // The host's bound on a facet's values, when it sets one (the engine's default otherwise).
  if (ctx.facetValuesMax !== undefined) input = { ...input, facetValuesMax: ctx.facetValuesMax };
  let running: Promise<SearchOutcome>;
  let spelling: ((total: number) => Promise<SpellingSuggestion[]>) | null = null;
  if (chunked) {
    running = chunkedOutcome(chunked, input, slicing);
    if (input.spelling) spelling = (total) => chunkedSpelling(chunked, input, total);
  } else {
    const loaded = await searchIndexOf(ctx.snapshot, sectionsFor(input));
    if ('unavailable' in loaded) throw new SearchUnavailable(loaded.unavailable);
    running = runSearchSliced(loaded.index, input, slicing);
    if (input.spelling) spelling = async (total) => spellingOverIndex(loaded.index, input, total);
  }
  const outcome = await running.catch((err: unknown) => {
    if (err instanceof QueryCostError) throw queryOverLimit(err);
    if (err instanceof FacetValuesError) throw facetOverLimit(err);
    throw err;
  });
  const items = await ctx.snapshot.recordsJson(outcome.kNumbers);
  const offset = (input.page - 1) * input.pageSize;
  // Appended after the contract's members, and only when asked for: a request without `spelling` answers as before.
  const after = [
    outcome.stats ? `"stats":${JSON.stringify(outcome.stats)}` : null,
    spelling ? `"spelling":${JSON.stringify(await spelling(outcome.total))}` : null,
  ].filter((part) => part !== null);
  return {
    data: JsonBytes.join('{"items":[', items, after.length ? `],${after.join(',')}}` : ']}'),
    page: {
      itemsReturned: items.length,
      total: outcome.total,
      totalRelation: 'exact',
      hasNextPage: offset + items.length < outcome.total,
      nextCursor: null,
      snapshotToken: ctx.snapshot.id,
      consistency: 'live-offset',
    },
    facets: facetValueCount(outcome.facets) > FACET_VALUES_AT_ONCE ? await facetsJson(outcome.facets, pause) : outcome.facets,
  };
}
