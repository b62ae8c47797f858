import type { SearchInput } from '../contract/index.ts';
import { SEARCH_INDEX_PATH } from '../contract/search-index.ts';
import { SearchIndexFormatError } from '../search/codec.ts';
import { loadSearchIndex } from '../search/load.ts';
import type { SearchIndex } from '../search/model.ts';
import { runSearch } from '../search/query.ts';
import type { Snapshot } from '../snapshot/index.ts';
import { SearchUnavailable } from './errors.ts';
import { JsonBytes, type DataOf, type OperationContext, type OperationResult } from './types.ts';

type Loaded = { index: SearchIndex } | { unavailable: string };

/** Each snapshot's search index (or why it has none), loaded once and kept for the snapshot's life. */
const indexes = new WeakMap<Snapshot, Promise<Loaded>>();

/**
 * The snapshot's search index, loaded once per snapshot on first use and kept for the snapshot's life. A snapshot
 * without an index, or with a damaged one, is remembered as such (it will not get better), so search answers 503 at
 * once instead of re-reading the parts on every request; a read error is not remembered and the next request retries.
 */
export function searchIndexOf(snapshot: Snapshot): Promise<Loaded> {
  const known = indexes.get(snapshot);
  if (known) return known;
  const loading = (async (): Promise<Loaded> => {
    if (!snapshot.fileEntry(SEARCH_INDEX_PATH)) {
      return { unavailable: 'This snapshot was built without a search index; every other operation is available.' };
    }
    try {
      return { index: await loadSearchIndex((path) => snapshot.readFile(path)) };
    } catch (err) {
      if (err instanceof SearchIndexFormatError) {
        return { unavailable: "This snapshot's search index cannot be read; every other operation is available." };
      }
      throw err;
    }
  })();
  indexes.set(snapshot, loading);
  loading.catch(() => {
    if (indexes.get(snapshot) === loading) indexes.delete(snapshot);
  });
  return loading;
}

/** Loads the index ahead of the first search (for example right after a snapshot switch). */
export async function warmSearch(snapshot: Snapshot): Promise<void> {
  await searchIndexOf(snapshot);
}

/**
 * device-510k.search (the contract's section 6): the engine gives the page's K numbers, exact total and three
 * facets; the page's records are sent as their bytes, cut from their shards.
 */
export async function search(input: SearchInput, ctx: OperationContext): Promise<OperationResult<DataOf<'device-510k.search'>>> {
  const loaded = await searchIndexOf(ctx.snapshot);
  if ('unavailable' in loaded) throw new SearchUnavailable(loaded.unavailable);
  const outcome = runSearch(loaded.index, input);
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
    facets: outcome.facets,
  };
}
