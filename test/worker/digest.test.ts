import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AssetsStorage, R2Storage } from '../../src/worker/storage.ts';

describe("the Worker storages' hashes", () => {
  const bytes = new Uint8Array(200_000).map((_, i) => (i * 31 + (i >> 7)) & 0xff);
  const want = createHash('sha256').update(bytes.subarray(1000, 150_000)).digest('hex');
  const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

  it('give the same SHA-256 synchronously and through Web Crypto, over a view into a larger buffer', async () => {
    const storages = [new R2Storage({ get: async () => null }, ''), new AssetsStorage({ fetch: async () => new Response('') }, '')];
    for (const s of storages) {
      const view = bytes.subarray(1000, 150_000);
      expect(hex(s.sha256(view))).toBe(want);
      expect(hex(await s.sha256Async(view))).toBe(want);
    }
  });

  it('copy a range out of a whole file sent by a host that ignores Range', async () => {
    const s = new AssetsStorage({ fetch: async () => new Response(bytes) }, 'snapshot/');
    const range = await s.readRange('search/part-000.bin', 64, 128);
    expect(Array.from(range)).toEqual(Array.from(bytes.subarray(64, 192)));
    expect(range.buffer.byteLength).toBe(128);
  });
});
