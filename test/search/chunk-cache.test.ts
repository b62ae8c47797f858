import { describe, expect, it } from 'vitest';
import { decodeBundle, encodeBundle, valueOf } from '../../src/search/bundle.ts';
import { bundleBytes, ChunkCache, Lease, withoutRawBytes } from '../../src/search/chunk-cache.ts';

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

  it('lets a word chunk’s buffer go once its rows are decoded, and keeps a column’s, whose values are views into it', () => {
    // A word's chunk: many rows (varints) and a few ids; a column: one typed array.
    const offsets = Uint32Array.from({ length: 201 }, (_, i) => i * 50);
    const values = Uint32Array.from({ length: 200 * 50 }, (_, i) => (i % 50) * 7 + Math.floor(i / 50));
    const chunkRaw = encodeBundle({ ids: { u32: Uint32Array.of(3, 5) }, docs: { rows: { offsets, values } }, terms: { json: ['a', 'b'] } });
    const decoded = decodeBundle(chunkRaw);
    const chunk = withoutRawBytes(chunkRaw, decoded);
    expect(valueOf(chunk, 'ids', 'u32')).toEqual(Uint32Array.of(3, 5));
    expect(valueOf(chunk, 'ids', 'u32').buffer).not.toBe(chunkRaw.buffer);
    expect(valueOf(chunk, 'docs', 'rows')).toEqual(valueOf(decoded, 'docs', 'rows'));
    // Counted: the rows decoded, the ids copied out, the JSON; not the buffer.
    expect(bundleBytes(chunkRaw, chunk)).toBe(bundleBytes(chunkRaw, decoded) - chunkRaw.buffer.byteLength + 8);
    const columnRaw = encodeBundle({ values: { u16: new Uint16Array(5000).fill(7) }, meta: { json: { type: 'u16', none: null } } });
    const column = decodeBundle(columnRaw);
    expect(withoutRawBytes(columnRaw, column)).toBe(column);
    expect(valueOf(column, 'values', 'u16').buffer).toBe(columnRaw.buffer);
    expect(bundleBytes(columnRaw, column)).toBeGreaterThanOrEqual(columnRaw.buffer.byteLength);
  });

  it('does not count a file as used when an index over every loaded file reads it, only when a request holds it', () => {
    const cache = new ChunkCache(250);
    cache.set('column-of-a-past-request', file(), 100);
    cache.set('word', file(), 100);
    // A request holds the word; then an index made over everything reads both.
    const lease = new Lease(cache);
    lease.hold('word');
    lease.release();
    cache.peek('column-of-a-past-request');
    cache.derive('column-of-a-past-request', 'made', () => 1, () => 0);
    cache.set('new-word', file(), 100);
    cache.trim();
    expect([cache.has('column-of-a-past-request'), cache.has('word'), cache.has('new-word')]).toEqual([false, true, true]);
  });
});

