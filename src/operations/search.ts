import type { SearchInput } from '../contract/index.ts';
import { SEARCH_INDEX_PATH } from '../contract/search-index.ts';
import { SearchIndexFormatError } from '../search/codec.ts';
import { loadSearchIndex } from '../search/load.ts';
import type { SearchIndex } from '../search/model.ts';
import { runSearch } from '../search/query.ts';
import { SearchUnavailable } from '../server/errors.ts';
import type { Snapshot } from '../snapshot/index.ts';
import type { OperationContext, OperationResult } from './index.ts';

const MEMO_KEY = 'search-index';

type Loaded = { index: SearchIndex } | { unavailable: string };

/**
 * The snapshot's search index, loaded once per snapshot on first use and kept for the snapshot's life. A snapshot
 * without an index, or with a damaged one, is remembered as such (it will not get better), so search answers 503 at
 * once instead of re-reading the parts on every request; a read error is not remembered and the next request retries.
 */
export function searchIndexOf(snapshot: Snapshot): Promise<Loaded> {
  return snapshot.memo(MEMO_KEY, async (): Promise<Loaded> => {
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
  });
}

/** Loads the index ahead of the first search (for example right after a snapshot switch). */
export async function warmSearch(snapshot: Snapshot): Promise<void> {
  await searchIndexOf(snapshot);
}

/** device-510k.search (CONTRACT.md section 6): the page's records in answer order, exact total, three facets. */
export async function search(input: SearchInput, ctx: OperationContext): Promise<OperationResult> {
  const loaded = await searchIndexOf(ctx.snapshot);
  if ('unavailable' in loaded) throw new SearchUnavailable(loaded.unavailable);
  const outcome = runSearch(loaded.index, input);
  const items = await ctx.snapshot.getRecords(outcome.kNumbers);
  if (items.length !== outcome.kNumbers.length) {
    throw new Error(`search index of snapshot ${ctx.snapshot.id} names records its shards do not hold`);
  }
  const offset = (input.page - 1) * input.pageSize;
  return {
    data: { items },
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
