import { pipeline, type Writable } from 'node:stream';
import { constants, createBrotliCompress, createGzip, type BrotliCompress, type Gzip } from 'node:zlib';
import type { Encoding } from './media.ts';

/**
 * An export's chunks written to its response, compressed or not, never faster than the client reads.
 *
 * The next chunk is asked for only once the one before has left the process (the kernel took it), so an export holds
 * one batch whatever its length and however slowly its client reads. Chunks are lent (src/operations/export.ts): the
 * next reuses the memory of the one before, which is why a chunk must be consumed before the next is asked for.
 *
 * Compressed, a chunk goes into zlib in slices of `SLICE_BYTES`, each when the one before was consumed; zlib holds
 * back a slice's completion while its output waits unread, and its output is piped to the response, which stops
 * taking it while the socket is full. Besides the batch, an export then holds at most a slice, zlib's window and
 * output buffer, and what the response holds unsent: a couple of hundred KiB, whatever the client does. zlib works
 * on the thread pool, so compressing takes no time from the event loop.
 */

/** What an export holds on its way out, for tests and measurements. */
export type ExportFlow = {
  /** Chunks asked of the export so far. */
  pulled: number;
  /** Bytes handed on so far (uncompressed). */
  bytesIn: number;
  /** Bytes between the export and the socket now: unsent in the response, and in zlib (its input and its output). */
  buffered: number;
  /** The most `buffered` has been. */
  peak: number;
};

export const newExportFlow = (): ExportFlow => ({ pulled: 0, bytesIn: 0, buffered: 0, peak: 0 });

/** Bytes written to zlib at once: small enough that what zlib holds stays small, large enough to cost little. */
export const SLICE_BYTES = 64 * 1024;

/**
 * br at quality 4 with a 1 MiB window: about gzip's ratio on CSV and NDJSON for a fraction of the higher qualities'
 * time, and a window that bounds the encoder's memory (the default 4 MiB window costs more for each export at once).
 * gzip at zlib's default level, as JSON answers are.
 */
function compressor(encoding: 'br' | 'gzip'): BrotliCompress | Gzip {
  if (encoding === 'gzip') return createGzip();
  return createBrotliCompress({
    params: {
      [constants.BROTLI_PARAM_QUALITY]: 4,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_LGWIN]: 20,
    },
  });
}

/**
 * Writes every chunk `next` gives to `res`, encoded with `encoding`, then ends it. Resolves true once the whole body
 * is handed on, false when the response closed first (the client left, or the connection was cut for stalling); a
 * failure of `next` rejects, with the response left for the caller to cut.
 */
export async function pumpExport(
  next: () => Promise<IteratorResult<Uint8Array>>,
  res: Writable,
  encoding: Encoding,
  flow: ExportFlow = newExportFlow(),
): Promise<boolean> {
  let closed = false;
  const gone = new Promise<false>((resolve) =>
    res.once('close', () => {
      closed = true;
      resolve(false);
    }),
  );
  const zip = encoding === 'identity' ? null : compressor(encoding);
  const note = () => {
    flow.buffered = res.writableLength + (zip ? zip.writableLength + zip.readableLength : 0);
    if (flow.buffered > flow.peak) flow.peak = flow.buffered;
  };
  const into = zip ?? res;
  // zlib's output goes to the response as the socket takes it; either side closing or failing destroys the other.
  const finished = zip ? new Promise<void>((resolve) => pipeline(zip, res, () => resolve())) : null;
  // Resolves once `bytes` left the writer (its callback), or false once the response closed.
  const write = (bytes: Uint8Array) =>
    Promise.race([new Promise<boolean>((resolve) => into.write(bytes, (err) => resolve(!err))), gone]);
  try {
    for (;;) {
      if (closed || res.destroyed) return false;
      const got = await next();
      if (got.done) break;
      flow.pulled++;
      const chunk = got.value;
      const step = zip ? SLICE_BYTES : chunk.length;
      for (let at = 0; at < chunk.length; at += step) {
        const piece = chunk.subarray(at, Math.min(chunk.length, at + step));
        const sent = write(piece);
        note();
        if (!(await sent)) return false;
        flow.bytesIn += piece.length;
      }
      note();
    }
    if (closed || res.destroyed) return false;
    into.end();
    if (finished) await Promise.race([finished, gone]);
    return !closed;
  } finally {
    if (!closed && zip && !zip.destroyed && !zip.writableEnded) zip.destroy();
  }
}
