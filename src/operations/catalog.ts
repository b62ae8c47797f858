import type { CatalogInput, CatalogKind, ShardIndex } from '../contract/index.ts';
import { firstShardAfter, lowerBound } from '../snapshot/index.ts';
import type { CursorCodec, CursorPayload } from '../server/cursor.ts';
import { ApiError } from '../server/errors.ts';
import type { OperationContext, OperationResult, PrepareContext } from './index.ts';

/**
 * device-510k.catalog: a keyset walk over the record shards (kNumber ascending) or the product-code shards (code
 * ascending). The cursor names the last key returned, so a walk survives rebuilds: it goes on after that key in
 * whatever snapshot is current, and says so in a warning.
 */
export type PreparedCatalog = { kind: CatalogKind; limit: number; cursor: CursorPayload | null };

export function prepareCatalog(input: CatalogInput, ctx: PrepareContext): PreparedCatalog {
  if (input.cursor === null) return { kind: input.kind, limit: input.limit, cursor: null };
  const cursor = ctx.cursors.decode(input.cursor);
  if (!cursor) {
    throw new ApiError('invalid_cursor', 'input.cursor was not issued by this service, or it was altered.', {
      details: [{ path: 'input.cursor', message: 'must be a page.nextCursor returned by this service' }],
    });
  }
  if (cursor.k !== input.kind) {
    throw new ApiError('invalid_cursor', `input.cursor continues a walk of kind "${cursor.k}", not "${input.kind}".`, {
      details: [{ path: 'input.cursor', message: `belongs to kind "${cursor.k}"` }],
    });
  }
  return { kind: input.kind, limit: input.limit, cursor };
}

export type KeysetPage<T> = { items: T[]; hasMore: boolean };

/**
 * The `limit` entries after `after` (from the start when null) over sorted shards. The shards the page needs are
 * read in parallel: all of them when the first one is full enough, one more at a time otherwise.
 */
export async function pageAfter<T>(
  index: ShardIndex,
  load: (position: number) => Promise<T[]>,
  keyOf: (item: T) => string,
  after: string | null,
  limit: number,
): Promise<KeysetPage<T>> {
  const items: T[] = [];
  let position = firstShardAfter(index, after);
  let first = true;
  while (position < index.shards.length) {
    // How many shards the rest of the page spans, by their counts (an upper bound for the first, partial one).
    let need = limit - items.length;
    let end = position;
    while (end < index.shards.length && need > 0) need -= index.shards[end++]?.count ?? 0;
    const loaded = await Promise.all(Array.from({ length: end - position }, (_, i) => load(position + i)));
    for (const shard of loaded) {
      let at = first && after !== null ? lowerBound(shard, after, keyOf, false) : 0;
      first = false;
      while (at < shard.length && items.length < limit) items.push(shard[at++] as T);
      if (items.length === limit) {
        return { items, hasMore: at < shard.length || position + 1 < index.shards.length };
      }
      position++;
    }
  }
  return { items, hasMore: false };
}

export async function catalog(input: PreparedCatalog, ctx: OperationContext): Promise<OperationResult> {
  const { snapshot, cursors } = ctx;
  const after = input.cursor?.a ?? null;
  const result =
    input.kind === 'clearance'
      ? await pageAfter(snapshot.recordIndex, (i) => snapshot.recordShard(i), (r) => r.kNumber, after, input.limit)
      : await pageAfter(snapshot.productCodeIndex, (i) => snapshot.productCodeShard(i), (e) => e.productCode, after, input.limit);
  const index = input.kind === 'clearance' ? snapshot.recordIndex : snapshot.productCodeIndex;
  const lastItem = result.items[result.items.length - 1];
  const lastKey = lastItem === undefined ? null : 'kNumber' in lastItem ? lastItem.kNumber : lastItem.productCode;
  const nextCursor =
    result.hasMore && lastKey !== null ? encodeCursor(cursors, input.kind, lastKey, snapshot.id) : null;
  const warnings: string[] = [];
  if (input.cursor && input.cursor.s !== snapshot.id) {
    warnings.push(
      `The snapshot changed since this cursor was issued (it was ${input.cursor.s}, it is now ${snapshot.id}); the walk goes on after ${input.cursor.a} in the current snapshot, so changes to entries before that key are not revisited.`,
    );
  }
  return {
    data: { items: result.items },
    page: {
      itemsReturned: result.items.length,
      total: index.total,
      totalRelation: 'exact',
      hasNextPage: nextCursor !== null,
      nextCursor,
      snapshotToken: snapshot.id,
      consistency: 'keyset',
    },
    warnings,
  };
}

function encodeCursor(cursors: CursorCodec, kind: CatalogKind, key: string, snapshotId: string): string {
  return cursors.encode({ v: 1, k: kind, a: key, s: snapshotId });
}
