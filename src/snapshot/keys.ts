import type { ShardIndex } from '../contract/index.ts';
import { partitionPoint } from '../utils/bisect.ts';

/**
 * Keyset lookups over sorted shards. Keys (K numbers, product codes) are ASCII, so plain string comparison is the
 * order the build sorted them in.
 */
type Shard = ShardIndex['shards'][number];

/** Position of the first element whose key is greater than `key` (or equal, with `inclusive`). */
export function lowerBound<T>(items: readonly T[], key: string, keyOf: (item: T) => string, inclusive = true): number {
  return partitionPoint(0, items.length, (i) => {
    const k = keyOf(items[i] as T);
    return k < key || (!inclusive && k === key);
  });
}

/** The element with exactly this key in a sorted array, or undefined. */
export function findSorted<T>(items: readonly T[], key: string, keyOf: (item: T) => string): T | undefined {
  const at = lowerBound(items, key, keyOf);
  const item = items[at];
  return item !== undefined && keyOf(item) === key ? item : undefined;
}

/** Position of the shard whose key range holds `key`, or -1 when no shard could. */
export function shardPositionHolding(index: ShardIndex, key: string): number {
  const at = lowerBound(index.shards, key, (s) => s.last);
  const shard = index.shards[at];
  return shard !== undefined && shard.first <= key ? at : -1;
}

/** The shard whose key range holds `key`, or undefined when no shard could. */
export function shardHolding(index: ShardIndex, key: string): Shard | undefined {
  const shard = index.shards[lowerBound(index.shards, key, (s) => s.last)];
  return shard !== undefined && shard.first <= key ? shard : undefined;
}

/** Position in `index.shards` of the first shard holding a key after `key` (all of them when `key` is null). */
export function firstShardAfter(index: ShardIndex, key: string | null): number {
  return key === null ? 0 : lowerBound(index.shards, key, (s) => s.last, false);
}
