import type { SearchInput } from '../contract/index.ts';
import { SEARCH_INDEX_PATH, type SearchSectionName } from '../contract/search-index.ts';
import { SearchIndexFormatError } from '../search/codec.ts';
import type { ParsedQuery } from '../search/grammar.ts';
import { LazySearchIndex, OlderSearchIndex, type BlockSource } from '../search/load.ts';
import type { SearchIndex } from '../search/model.ts';
import { sectionsFor } from '../search/needs.ts';
import { runSearchSliced } from '../search/engine.ts';
import { platformPause } from '../search/slices.ts';
import { UNREADABLE, type Snapshot } from '../snapshot/snapshot.ts';
import { toHex } from '../snapshot/storage.ts';
import { queryOverLimit, SearchUnavailable } from './errors.ts';
import { QueryCostError } from '../search/cost.ts';
import { parseSearchQuery } from './search-query.ts';
import { FACET_VALUES_AT_ONCE, facetsJson, facetValueCount } from './facets-json.ts';
import { JsonBytes, type DataOf, type OperationContext, type OperationResult } from './types.ts';

type Opened = { lazy: LazySearchIndex } | { unavailable: string };
type Loaded = { index: SearchIndex } | { unavailable: string };

const DAMAGED = "This snapshot's search index cannot be read; every other operation is available.";
const OLDER = "This snapshot's search index is of an older format; build the snapshot again with npm run build. Every other operation is available.";

/** Each snapshot's search index (or why it has none), opened once and kept for the snapshot's life. */
const indexes = new WeakMap<Snapshot, Promise<Opened>>();

/** The snapshot's files as the lazy index reads them: whole checked files, ranges of parts, the storage's hash. */
function blockSource(snapshot: Snapshot): BlockSource {
  return {
    readFile: (path) => snapshot.readFile(path),
    readRange: (path, offset, length) => snapshot.storage.readRange(path, offset, length).catch(() => snapshot.reportCorrupt(path, UNREADABLE)),
    sha256: (bytes) => (snapshot.storage.sha256Async ? snapshot.storage.sha256Async(bytes) : snapshot.storage.sha256(bytes)),
    // Reported as the whole part against the manifest, as every damaged file is (the log line names its sha256 now).
    corrupt: async (path) => {
      const bytes = await snapshot.storage.read(path).catch(() => null);
      const digest = bytes === null ? null : await (snapshot.storage.sha256Async ? snapshot.storage.sha256Async(bytes) : snapshot.storage.sha256(bytes));
      return snapshot.reportCorrupt(path, digest === null ? UNREADABLE : toHex(digest));
    },
  };
}

function openIndex(snapshot: Snapshot): Promise<Opened> {
  const known = indexes.get(snapshot);
  if (known) return known;
  const opening = (async (): Promise<Opened> => {
    if (!snapshot.fileEntry(SEARCH_INDEX_PATH)) {
      return { unavailable: 'This snapshot was built without a search index; every other operation is available.' };
    }
    try {
      return { lazy: await LazySearchIndex.open(blockSource(snapshot)) };
    } catch (err) {
      if (err instanceof OlderSearchIndex) return { unavailable: OLDER };
      if (err instanceof SearchIndexFormatError) return { unavailable: DAMAGED };
      throw err;
    }
  })();
  indexes.set(snapshot, opening);
  opening.catch(() => {
    if (indexes.get(snapshot) === opening) indexes.delete(snapshot);
  });
  return opening;
}

/**
 * The snapshot's search index with `sections` loaded (every section when not given), each read on first need and
 * kept for the snapshot's life. A snapshot without an index, or with a damaged header or section, answers 503 at
 * once and keeps doing so (it will not get better); a read error or a block that does not match its digest is not
 * remembered, and the next request reads again.
 */
export async function searchIndexOf(snapshot: Snapshot, sections?: Iterable<SearchSectionName>): Promise<Loaded> {
  const opened = await openIndex(snapshot);
  if ('unavailable' in opened) return opened;
  try {
    return { index: await (sections ? opened.lazy.ensure(sections) : opened.lazy.ensureAll()) };
  } catch (err) {
    if (err instanceof SearchIndexFormatError) return { unavailable: DAMAGED };
    throw err;
  }
}

/** Bytes of the snapshot's index sections loaded so far (for measurements). */
export async function searchIndexBytes(snapshot: Snapshot): Promise<number> {
  const opened = await openIndex(snapshot);
  return 'lazy' in opened ? opened.lazy.loadedBytes : 0;
}

/**
 * Reads the index ahead of the first search (for example right after a snapshot switch): its header and block table,
 * and the sections every search reads (those of a query with no words).
 */
export async function warmSearch(snapshot: Snapshot): Promise<void> {
  await searchIndexOf(snapshot, sectionsFor({ query: '', applicant: null, productCode: null, yearFrom: null, yearTo: null }));
}

/** A search's input with its query parsed, once, before the server looks for a snapshot. */
export type PreparedSearch = SearchInput & { parsed: ParsedQuery };

export function prepareSearch(input: SearchInput): PreparedSearch {
  return { ...input, parsed: parseSearchQuery(input.query, 'input.query') };
}

/**
 * device-510k.search (the contract's section 6): the engine gives the page's K numbers, exact total and three
 * facets; the page's records are sent as their bytes, cut from their shards.
 */
export async function search(input: PreparedSearch, ctx: OperationContext): Promise<OperationResult<DataOf<'device-510k.search'>>> {
  const loaded = await searchIndexOf(ctx.snapshot, sectionsFor(input));
  if ('unavailable' in loaded) throw new SearchUnavailable(loaded.unavailable);
  // In slices that give the loop back (the host's turns), stopped at the deadline.
  const pause = ctx.pause ?? platformPause;
  const outcome = await runSearchSliced(loaded.index, input, { pause, ...(ctx.cancel && { cancel: ctx.cancel }) }).catch((err: unknown) => {
    throw err instanceof QueryCostError ? queryOverLimit(err) : err;
  });
  const items = await ctx.snapshot.recordsJson(outcome.kNumbers);
  const offset = (input.page - 1) * input.pageSize;
  return {
    data: JsonBytes.join('{"items":[', items, outcome.stats ? `],"stats":${JSON.stringify(outcome.stats)}}` : ']}'),
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
