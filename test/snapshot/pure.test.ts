import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ShardIndex } from '../../src/contract/index.ts';
import { pageAfter, pageItems } from '../../src/operations/catalog.ts';
import { findSorted, firstShardAfter, lowerBound, shardHolding } from '../../src/snapshot/keys.ts';
import { LruCache } from '../../src/utils/lru.ts';
import { indexLines } from '../../src/snapshot/lines.ts';
import { jsonLinesBytes } from '../../build/write/json.ts';
import { parseSyncState } from '../../src/contract/sync-status.ts';
import { safeRelPath } from '../../src/snapshot/paths.ts';

/** The snapshot's pure parts, with tables of cases and properties: keyset walks over shards, the cache, the sync state, paths. */

/** A shard of entries `{"id": key}`, one per line, as the build writes them. */
const linesOf = (keys: readonly string[]) => indexLines(jsonLinesBytes(keys.map((id) => ({ id }))).bytes);

describe('keyset helpers', () => {
  const sortedKeys = fc.uniqueArray(fc.stringMatching(/^K\d{3}$/), { minLength: 0, maxLength: 60 }).map((a) => a.sort());

  /** Cuts sorted keys into shards of random sizes, as an index and its shards. */
  const sharded = sortedKeys.chain((keys) =>
    fc.array(fc.integer({ min: 1, max: 7 }), { minLength: keys.length, maxLength: keys.length }).map((sizes) => {
      const shards: string[][] = [];
      for (let i = 0, s = 0; i < keys.length; i += sizes[s++] ?? 1) shards.push(keys.slice(i, i + (sizes[s] ?? 1)));
      const index: ShardIndex = {
        total: keys.length,
        shards: shards.map((items, n) => ({ id: String(n), path: `${n}.json`, count: items.length, first: items[0] as string, last: items[items.length - 1] as string })),
      };
      return { keys, shards, index };
    }),
  );

  it('lowerBound and findSorted agree with a scan', () => {
    fc.assert(
      fc.property(sortedKeys, fc.stringMatching(/^K\d{3}$/), fc.boolean(), (keys, key, inclusive) => {
        const expected = keys.findIndex((k) => (inclusive ? k >= key : k > key));
        expect(lowerBound(keys, key, (k) => k, inclusive)).toBe(expected === -1 ? keys.length : expected);
        expect(findSorted(keys, key, (k) => k)).toBe(keys.includes(key) ? key : undefined);
      }),
    );
  });

  it('shardHolding finds the shard of a key, and only then', () => {
    fc.assert(
      fc.property(sharded, fc.stringMatching(/^K\d{3}$/), ({ shards, index }, key) => {
        const holder = shards.findIndex((s) => (s[0] as string) <= key && key <= (s[s.length - 1] as string));
        expect(shardHolding(index, key)?.id).toBe(holder === -1 ? undefined : String(holder));
        const after = shards.findIndex((s) => (s[s.length - 1] as string) > key);
        expect(firstShardAfter(index, key)).toBe(after === -1 ? shards.length : after);
      }),
    );
  });

  it('pageAfter returns the next entries after any key, for any limit', async () => {
    await fc.assert(
      fc.asyncProperty(sharded, fc.option(fc.stringMatching(/^K\d{3}$/), { nil: null }), fc.integer({ min: 1, max: 20 }), async ({ keys, shards, index }, after, limit) => {
        const loads: number[] = [];
        const page = await pageAfter(index, async (i) => (loads.push(i), linesOf(shards[i] ?? [])), after, limit);
        const rest = after === null ? keys : keys.filter((k) => k > after);
        expect(pageItems(page).map((b) => (JSON.parse(new TextDecoder().decode(b)) as { id: string }).id)).toEqual(rest.slice(0, limit));
        expect(page.hasMore).toBe(rest.length > limit);
        expect(new Set(loads).size).toBe(loads.length);
      }),
      { numRuns: 300 },
    );
  });
});

describe('LruCache', () => {
  it('keeps the most recently used entries', () => {
    const lru = new LruCache<string, number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    expect(lru.get('a')).toBe(1);
    lru.set('c', 3);
    expect(lru.get('b')).toBeUndefined();
    expect(lru.get('a')).toBe(1);
    expect(lru.get('c')).toBe(3);
    expect(lru.size).toBe(2);
    expect(() => new LruCache(0)).toThrow(/capacity/);
  });

  it('tells onEvict of what the bound pushes out, on set, resize and evictAll, and not of what is deleted', () => {
    const evicted: string[] = [];
    const lru = new LruCache<string, number>(3, () => 1, (key, value) => evicted.push(`${key}=${value}`));
    lru.set('a', 1);
    lru.set('b', 2);
    lru.set('c', 3);
    lru.get('a');
    lru.set('d', 4);
    expect(evicted).toEqual(['b=2']);
    lru.delete('c');
    lru.set('a', 10);
    expect(evicted).toEqual(['b=2']);
    lru.resize(1);
    expect(lru.capacity).toBe(1);
    expect(evicted).toEqual(['b=2', 'd=4']);
    expect(lru.get('a')).toBe(10);
    lru.evictAll();
    expect(evicted).toEqual(['b=2', 'd=4', 'a=10']);
    expect(lru.size).toBe(0);
    expect(lru.weight).toBe(0);
    expect(() => lru.resize(0)).toThrow(/capacity/);
  });
});

describe('parseSyncState', () => {
  it('reads the members the server needs and ignores the rest', () => {
    expect(parseSyncState(JSON.stringify({ lastAttemptAt: '2026-08-20T02:00:00+02:00', lastSuccessfulSyncAt: null, lastFailure: { at: '2026-08-20T00:00:00Z', reason: 'r', code: 5 }, files: {} }))).toEqual({
      lastAttemptAt: '2026-08-20T00:00:00.000Z',
      lastSuccessfulSyncAt: null,
      lastFailure: { at: '2026-08-20T00:00:00.000Z', reason: 'r' },
    });
    expect(parseSyncState('{}')).toEqual({ lastAttemptAt: null, lastSuccessfulSyncAt: null, lastFailure: null });
  });

  it.each(['', '{', '[]', '{"lastAttemptAt":"yesterday"}', '{"lastFailure":{"at":"2026-08-20T00:00:00Z"}}'])('%j is not usable', (text) => {
    expect(typeof parseSyncState(text)).toBe('string');
  });
});

describe('safeRelPath', () => {
  it.each([
    ['records/K1234.json', 'records/K1234.json'],
    ['manifest.json', 'manifest.json'],
    ['../x', null],
    ['records/../../x', null],
    ['/etc/passwd', null],
    ['records//x', null],
    ['./x', null],
    ['a\\b', null],
    ['a\0b', null],
    ['', null],
    ['.', null],
  ])('safeRelPath(%j) → %j', (path, expected) => {
    expect(safeRelPath(path)).toBe(expected);
  });
});
