import { constants, crc32 as zlibCrc32, deflateRaw } from 'node:zlib';
import { gzipOptions } from './coding-levels.ts';

/**
 * A gzip body made of pieces compressed one by one, so that the large pieces an answer shares with later answers (a
 * cached openFDA answer around the few bytes written for each request) are compressed once, not for every request.
 *
 * RFC 1951 lets one deflate stream be any sequence of blocks. Each large piece is compressed on its own and ended with
 * a sync flush (byte-aligned, no final block), so its blocks can follow any earlier piece's; a small piece goes as
 * stored blocks; an empty final stored block ends the stream. The gzip trailer's CRC-32 of the whole is combined from
 * the pieces' own (zlib's crc32_combine), so a shared piece is never read again after its first use.
 */

/** Pieces of at least this many bytes are compressed and the result kept with the piece; smaller ones are stored. */
export const SHARED_PIECE_MIN_BYTES = 4096;

/** A piece as it goes into the stream: its deflate blocks (no final block, ending byte-aligned), CRC-32 and length. */
type Coded = { readonly blocks: Uint8Array; readonly crc: number; readonly length: number };

/** Compressed pieces by the piece: kept as long as the piece is (a cached answer's parts), and no longer. */
const coded = new WeakMap<Uint8Array, Promise<Coded>>();

/** gzip's header: magic, deflate, no flags, no time, no extra flags, unknown OS (RFC 1952 section 2.3). */
const HEADER = Uint8Array.of(0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff);
/** An empty stored block with BFINAL set: the end of the deflate stream. */
const FINAL = Uint8Array.of(1, 0, 0, 0xff, 0xff);

/** The gzip member of `pieces` joined, as pieces to send in order (the large pieces' blocks shared between answers). */
export async function gzipPieces(pieces: readonly Uint8Array[]): Promise<Uint8Array[]> {
  const parts = await Promise.all(pieces.map(codedPiece));
  const out: Uint8Array[] = [HEADER];
  let crc = 0;
  let length = 0;
  for (const p of parts) {
    if (p.blocks.length > 0) out.push(p.blocks);
    crc = crc32Combine(crc, p.crc, p.length);
    length = (length + p.length) >>> 0;
  }
  const trailer = new Uint8Array(8);
  const view = new DataView(trailer.buffer);
  view.setUint32(0, crc >>> 0, true);
  view.setUint32(4, length, true);
  out.push(FINAL, trailer);
  return out;
}

function codedPiece(piece: Uint8Array): Promise<Coded> {
  if (piece.length < SHARED_PIECE_MIN_BYTES) return Promise.resolve({ blocks: stored(piece), crc: crc32(piece), length: piece.length });
  let done = coded.get(piece);
  if (!done) {
    done = new Promise<Coded>((resolve, reject) => {
      // On the thread pool: a date count's timeseries at a million records is hundreds of KB.
      deflateRaw(piece, { ...gzipOptions(piece.length), finishFlush: constants.Z_SYNC_FLUSH }, (err, blocks) => (err ? reject(err) : resolve({ blocks, crc: crc32(piece), length: piece.length })));
    });
    coded.set(piece, done);
    // A failure is not kept: the next answer tries again.
    done.catch(() => coded.delete(piece));
  }
  return done;
}

/** `bytes` as stored (uncompressed) deflate blocks, none final: a 5-byte header for each 65,535 bytes. */
function stored(bytes: Uint8Array): Uint8Array {
  const blocks = Math.ceil(bytes.length / 0xffff);
  const out = new Uint8Array(bytes.length + blocks * 5);
  let at = 0;
  for (let from = 0; from < bytes.length; from += 0xffff) {
    const n = Math.min(0xffff, bytes.length - from);
    out[at] = 0; // BFINAL 0, BTYPE 00 (stored), padded to the byte
    out[at + 1] = n & 0xff;
    out[at + 2] = n >>> 8;
    out[at + 3] = ~n & 0xff;
    out[at + 4] = (~n >>> 8) & 0xff;
    out.set(bytes.subarray(from, from + n), at + 5);
    at += 5 + n;
  }
  return out;
}

/** The reflected CRC-32 polynomial of gzip (and zip, PNG). */
const POLY = 0xedb88320;

/** CRC-32 as gzip's trailer holds it (zlib's own, as build/sync/zip.ts uses). */
export const crc32 = (bytes: Uint8Array): number => zlibCrc32(bytes) >>> 0;

/** a times b modulo the CRC polynomial, in its reflected bit order (x^0 is the top bit). */
function multModP(a: number, b: number): number {
  if (a === 0) return 0;
  let m = 0x80000000;
  let p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) === 0) break;
    }
    m >>>= 1;
    b = b & 1 ? (b >>> 1) ^ POLY : b >>> 1;
  }
  return p >>> 0;
}

/** x^(2^k) modulo the polynomial, for k = 0..31 (x^1 is 1 << 30 in the reflected order). */
const X2N = (() => {
  const t = new Uint32Array(32);
  let p = 1 << 30;
  t[0] = p;
  for (let k = 1; k < 32; k++) t[k] = p = multModP(p, p);
  return t;
})();

/** x^(n * 2^k) modulo the polynomial. */
function x2nModP(n: number, k: number): number {
  let p = 0x80000000;
  while (n) {
    if (n & 1) p = multModP(X2N[k & 31]!, p);
    n = Math.floor(n / 2);
    k++;
  }
  return p;
}

/** The CRC-32 of A followed by B, from A's CRC, B's CRC and B's length in bytes. */
export function crc32Combine(crcA: number, crcB: number, lengthB: number): number {
  return (multModP(x2nModP(lengthB, 3), crcA) ^ crcB) >>> 0;
}
