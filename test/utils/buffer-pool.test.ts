import { describe, expect, it } from 'vitest';
import { BufferPool } from '../../src/utils/buffer-pool.ts';

describe('BufferPool', () => {
  it('gives a buffer of the smallest class that holds the size, and takes back one given', () => {
    const pool = new BufferPool(1024, 8192, 2, 8192);
    const a = pool.take(1000);
    const b = pool.take(1500);
    const c = pool.take(5000);
    expect([a.byteLength, b.byteLength, c.byteLength]).toEqual([1024, 2048, 8192]);
    pool.give(b);
    expect(pool.take(1025)).toBe(b);
    expect(pool.take(1025)).not.toBe(b);
    // A size past the largest class gets a buffer of its own, never kept.
    const huge = pool.take(10_000);
    expect(huge.byteLength).toBe(10_000);
    pool.give(huge);
    expect(pool.kept).toBe(0);
  });

  it('keeps at most its count of the smallest class and its bytes of each larger one, and no buffer of another size', () => {
    const pool = new BufferPool(1024, 8192, 2, 8192);
    for (let i = 0; i < 5; i++) pool.give(new ArrayBuffer(1024));
    expect(pool.kept).toBe(2);
    for (let i = 0; i < 5; i++) pool.give(new ArrayBuffer(4096));
    expect(pool.kept).toBe(4);
    for (let i = 0; i < 5; i++) pool.give(new ArrayBuffer(8192));
    expect(pool.kept).toBe(5);
    pool.give(new ArrayBuffer(3000));
    expect(pool.kept).toBe(5);
    expect(() => new BufferPool(0, 10, 1, 1)).toThrow();
  });
});
