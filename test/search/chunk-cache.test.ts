import { describe, expect, it } from 'vitest';
import { ChunkCache, Lease } from '../../src/search/chunk-cache.ts';

/** The byte-bounded cache of the chunked index's files: what it lets go of first, and what it counts. */
const file = () => new Map();

describe('the chunk cache', () => {
  it('lets go of the file least recently read by a request, not the one loaded first: a file every request holds stays', () => {
    const cache = new ChunkCache(250);
    cache.set('column', file(), 100);
    cache.set('word-a', file(), 100);
    // A request holds the column (found in the cache, not loaded) and a new word's file.
    const lease = new Lease(cache);
    lease.hold('column');
    cache.set('word-b', file(), 100);
    lease.hold('word-b');
    lease.release();
    expect([cache.has('column'), cache.has('word-a'), cache.has('word-b')]).toEqual([true, false, true]);
    expect(cache.bytes).toBeLessThanOrEqual(cache.budget);
  });

  it('keeps a request’s files until it is answered, then goes back under its budget', () => {
    const cache = new ChunkCache(150);
    const lease = new Lease(cache);
    for (const name of ['a', 'b', 'c']) {
      cache.set(name, file(), 100);
      lease.hold(name);
    }
    cache.trim();
    expect(cache.size).toBe(3);
    lease.release();
    expect(cache.bytes).toBeLessThanOrEqual(150);
    expect(cache.has('c')).toBe(true);
  });
});
