import { gunzipSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { crc32, crc32Combine, gzipPieces, SHARED_PIECE_MIN_BYTES } from '../../src/server/gzip-pieces.ts';

const join = (pieces: readonly Uint8Array[]): Buffer => Buffer.concat(pieces.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength)));

/** The CRC-32 gzip's own trailer holds for these bytes (zlib's, independent of the code under test). */
const zlibCrc = (bytes: Uint8Array): number => gzipSync(bytes).readUInt32LE(gzipSync(bytes).length - 8);

/** JSON-like text: compressible, as answers are, in lengths on both sides of the size where pieces are compressed. */
const piece = fc.oneof(
  fc.uint8Array({ maxLength: 300 }),
  fc.string({ maxLength: 20_000 }).map((s) => new TextEncoder().encode(s)),
  fc.integer({ min: 0, max: 3 * 0xffff }).map((n) => new TextEncoder().encode('{"time":"19760105","count":3},'.repeat(Math.ceil(n / 30)).slice(0, n))),
);

describe('gzip of a body in pieces', () => {
  it('decodes (with zlib) to the pieces joined, for any pieces: empty, stored and compressed, over 65,535 bytes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { maxLength: 5 }), async (pieces) => {
        const coded = join(await gzipPieces(pieces));
        // gunzip checks the trailer's CRC-32 and length against what it decoded.
        expect(gunzipSync(coded).equals(join(pieces))).toBe(true);
      }),
      { numRuns: 60, seed: 510 },
    );
  });

  it('CRC-32 and its combination agree with zlib', () => {
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 5000 }), fc.uint8Array({ maxLength: 5000 }), (a, b) => {
        expect(crc32(a)).toBe(zlibCrc(a));
        expect(crc32Combine(crc32(a), crc32(b), b.length)).toBe(zlibCrc(join([a, b])));
      }),
      { numRuns: 200, seed: 510 },
    );
  });

  it('compresses a large piece once and keeps it with the piece; a small one is sent stored', async () => {
    const shared = new TextEncoder().encode('{"term":"DQY","count":12},'.repeat(2000));
    expect(shared.length).toBeGreaterThanOrEqual(SHARED_PIECE_MIN_BYTES);
    const first = await gzipPieces([new Uint8Array([1, 2, 3]), shared]);
    const second = await gzipPieces([new Uint8Array([4, 5]), shared]);
    // [header, stored small piece, the shared piece's blocks, final block, trailer]
    expect(second[2]).toBe(first[2]);
    expect(first[2]!.length).toBeLessThan(shared.length / 4);
    expect(first[1]!.length).toBe(3 + 5);
  });
});
