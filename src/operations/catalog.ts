import type { CatalogInput, CatalogKind, ShardIndex } from '../contract/index.ts';
import { firstShardAfter } from '../snapshot/keys.ts';
import { lineKey, type ShardLines } from '../snapshot/lines.ts';
import type { CursorCodec, CursorPayload } from './cursor.ts';
import { ApiError } from './errors.ts';
import { JsonBytes, type DataOf, type OperationContext, type OperationResult, type PrepareContext } from './types.ts';
import { partitionPoint } from '../utils/bisect.ts';

/**
 * device-510k.catalog: a keyset walk over the record shards (kNumber ascending) or the product-code shards (code
 * ascending). The cursor names the last key returned, so a walk survives rebuilds: it goes on after that key in
 * whatever snapshot is current, and says so in a warning. A page is a run of consecutive entries, sent as the
 * entries' bytes cut from their shards.
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

/** Entries `from` to `to` (exclusive) of one shard's lines, in order. */
export type LineRun = { lines: ShardLines; from: number; to: number };
/** A page as runs of consecutive entries of its shards, copied into the answer without a view per entry. */
export type KeysetPage = { runs: LineRun[]; count: number; lastKey: string | null; hasMore: boolean };

/** Each entry of a page, as its bytes (for tests and tools; answers copy the runs with `JsonBytes.joinRuns`). */
export function pageItems(page: KeysetPage): Uint8Array[] {
  const items: Uint8Array[] = [];
  for (const { lines, from, to } of page.runs) for (let i = from; i < to; i++) items.push(lines.bytes.subarray(lines.starts[i], lines.ends[i]));
  return items;
}

/** Position of the first line whose key is after `key`. */
function firstLineAfter(lines: ShardLines, key: string): number {
  return partitionPoint(0, lines.starts.length, (i) => lineKey(lines, i) <= key);
}

/**
 * The `limit` entries after `after` (from the start when null) over sorted shards. The shards the page needs are
 * loaded together: as many as the shard counts say the rest of the page spans.
 */
export async function pageAfter(
  index: ShardIndex,
  load: (position: number) => Promise<ShardLines>,
  after: string | null,
  limit: number,
): Promise<KeysetPage> {
  const runs: LineRun[] = [];
  let count = 0;
  let lastKey: string | null = null;
  let position = firstShardAfter(index, after);
  let first = true;
  while (position < index.shards.length) {
    // How many shards the rest of the page spans, by their counts (an upper bound for the first, partial one).
    let need = limit - count;
    let end = position;
    while (end < index.shards.length && need > 0) need -= index.shards[end++]?.count ?? 0;
    const loaded = await Promise.all(Array.from({ length: end - position }, (_, i) => load(position + i)));
    for (const lines of loaded) {
      // A walk whose last page ended a shard goes on from the next one's first line: no search needed.
      const from = first && after !== null && index.shards[position - 1]?.last !== after ? firstLineAfter(lines, after) : 0;
      first = false;
      const size = lines.starts.length;
      const to = Math.min(size, from + limit - count);
      if (to > from) {
        runs.push({ lines, from, to });
        count += to - from;
        // Only the page's last key is needed (for the cursor): read it once per shard, not once per entry.
        lastKey = lineKey(lines, to - 1);
      }
      if (count === limit) {
        return { runs, count, lastKey, hasMore: to < size || position + 1 < index.shards.length };
      }
      position++;
    }
  }
  return { runs, count, lastKey, hasMore: false };
}

/** Enough for the envelope's head and, after `data`, sourceState with a warning or two, page and the cursor. */
const ENVELOPE_ROOM = { before: 64, after: 4096 };

export async function catalog(input: PreparedCatalog, ctx: OperationContext): Promise<OperationResult<DataOf<'device-510k.catalog'>>> {
  const { snapshot, cursors } = ctx;
  const after = input.cursor?.a ?? null;
  const index = input.kind === 'clearance' ? snapshot.recordIndex : snapshot.productCodeIndex;
  const whole = input.kind === 'clearance' ? await wholeShardPage(snapshot, after, input.limit, ctx.allocate) : null;
  if (whole) return answer(whole.data, whole.page, input, ctx);
  // Record shards are lent for the page (product-code shards stay in the cache): given back once the page's bytes
  // have been copied out of them.
  const releases: (() => void)[] = [];
  const load = async (i: number) => {
    if (input.kind !== 'clearance') return snapshot.shardLines(input.kind, i);
    const { lines, release } = await snapshot.lendShardLines(input.kind, i);
    releases.push(release);
    return lines;
  };
  let result: KeysetPage;
  let data: JsonBytes<DataOf<'device-510k.catalog'>>;
  try {
    result = await pageAfter(index, load, after, input.limit);
    // With room around it for the envelope, which is then written in place rather than the page copied into it.
    data = JsonBytes.joinRuns('{"items":[', result.runs, result.count, ']}', ENVELOPE_ROOM, ctx.allocate);
  } finally {
    for (const release of releases) release();
  }
  return answer(data, result, input, ctx);
}

/**
 * A page that is exactly one whole record shard (the walk enters the shard at its first entry, and the limit is the
 * shard's count, or more when it is the last), made by reading the shard straight into the answer's buffer and
 * taking its newlines out there (`Snapshot.recordShardArrayInto`): no lent buffer, no search for its lines, no copy
 * between the read and the answer. Null for any other page, or when the byte cache holds the shard.
 */
async function wholeShardPage(
  snapshot: OperationContext['snapshot'],
  after: string | null,
  limit: number,
  allocate: OperationContext['allocate'],
): Promise<{ data: JsonBytes<DataOf<'device-510k.catalog'>>; page: Pick<KeysetPage, 'count' | 'lastKey' | 'hasMore'> } | null> {
  const index = snapshot.recordIndex;
  const position = firstShardAfter(index, after);
  const shard = index.shards[position];
  if (!shard || (after !== null && index.shards[position - 1]?.last !== after)) return null;
  const last = position + 1 === index.shards.length;
  if (!(limit === shard.count || (last && limit > shard.count))) return null;
  const prefix = ITEMS.length - 1; // the shard's `[` is the array's
  let buffer: Uint8Array = new Uint8Array(0);
  const length = await snapshot.recordShardArrayInto(position, (fileBytes) => {
    // The file after `{"items":`, then `}`: the array is shorter than the file by its newlines.
    buffer = (allocate ?? ((n: number) => new Uint8Array(n)))(ENVELOPE_ROOM.before + prefix + fileBytes + 1 + ENVELOPE_ROOM.after);
    return buffer.subarray(ENVELOPE_ROOM.before + prefix);
  });
  if (length === null) return null;
  const out = buffer.subarray(ENVELOPE_ROOM.before);
  out.set(ITEMS.subarray(0, prefix), 0);
  out[prefix + length] = 0x7d; // }
  const bytes = out.subarray(0, prefix + length + 1);
  return {
    data: new JsonBytes(bytes, { before: ENVELOPE_ROOM.before, after: buffer.length - ENVELOPE_ROOM.before - bytes.length }),
    page: { count: shard.count, lastKey: shard.last, hasMore: !last },
  };
}

const ITEMS = new TextEncoder().encode('{"items":[');

function answer(
  data: JsonBytes<DataOf<'device-510k.catalog'>>,
  result: Pick<KeysetPage, 'count' | 'lastKey' | 'hasMore'>,
  input: PreparedCatalog,
  ctx: OperationContext,
): OperationResult<DataOf<'device-510k.catalog'>> {
  const { snapshot, cursors } = ctx;
  const index = input.kind === 'clearance' ? snapshot.recordIndex : snapshot.productCodeIndex;
  const nextCursor = result.hasMore && result.lastKey !== null ? encodeCursor(cursors, input.kind, result.lastKey, snapshot.id) : null;
  const warnings: string[] = [];
  if (input.cursor && input.cursor.s !== snapshot.id) {
    warnings.push(
      `The snapshot changed since this cursor was issued (it was ${input.cursor.s}, it is now ${snapshot.id}); the walk goes on after ${input.cursor.a} in the current snapshot, so changes to entries before that key are not revisited.`,
    );
  }
  return {
    data,
    page: {
      itemsReturned: result.count,
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
