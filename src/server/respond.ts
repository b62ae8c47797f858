import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, gzip, gzipSync } from 'node:zlib';
import { brotliOptions, gzipOptions } from './coding-levels.ts';
import { gzipPieces } from './gzip-pieces.ts';
import { encodingWeights, pickEncoding, type Encoding } from './media.ts';
import { answerHeaders } from './head-writer.ts';
import type { Sendable } from '../api/dispatch.ts';
import { sendStream } from './stream.ts';


/** Answers at or under this size go out as they are (the contract's section 1: larger ones are compressed). */
export const COMPRESS_MIN_BYTES = 1024;
/** Larger answers are compressed on the thread pool so that one big catalog page does not stall every request. */
const SYNC_COMPRESS_MAX_BYTES = 32 * 1024;

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);


/** Bytes compressed for sending now: quick settings, and off the main thread when they are large. */
export async function compress(encoding: 'br' | 'gzip', raw: Uint8Array): Promise<Buffer> {
  if (encoding === 'br') {
    return raw.length > SYNC_COMPRESS_MAX_BYTES ? brotliAsync(raw, brotliOptions(raw.length)) : brotliCompressSync(raw, brotliOptions(raw.length));
  }
  return raw.length > SYNC_COMPRESS_MAX_BYTES ? gzipAsync(raw, gzipOptions(raw.length)) : gzipSync(raw, gzipOptions(raw.length));
}


/** The coding of a JSON answer in one piece: br or gzip when over 1 KiB and the client accepts one of them. */
export function jsonEncoding(raw: Uint8Array, acceptEncoding: string | undefined): Encoding {
  return raw.length > COMPRESS_MIN_BYTES ? pickEncoding(acceptEncoding) : 'identity';
}

/** A JSON answer as it goes on the wire: its headers (`answerHeaders`, with the coding applied) and its body's pieces. */
export type EncodedAnswer = { readonly headers: Record<string, string | number>; readonly pieces: readonly Uint8Array[] };

/**
 * A JSON answer's body, encoded as the client accepts, and its headers: what `sendBytes` sends on Node's HTTP server
 * and the fast lane writes itself, so that both send the same bytes. The body may come in pieces (a cached answer
 * around the part written for this request): kept as pieces when no coding applies, and gzipped piece by piece
 * (gzip-pieces.ts) so that a cached answer is not compressed again per request. Made at once when nothing is
 * compressed: no promise to wait for, whose cost is a real share of a small answer's.
 */
export function encodeAnswer(body: Uint8Array | readonly Uint8Array[], own: Readonly<Record<string, string>>, acceptEncoding: string | undefined): EncodedAnswer | Promise<EncodedAnswer> {
  const pieces = body instanceof Uint8Array ? null : body;
  if (pieces !== null && pieces.length > 1) {
    let length = 0;
    for (const piece of pieces) length += piece.length;
    const encoding = length > COMPRESS_MIN_BYTES ? piecesEncoding(acceptEncoding) : 'identity';
    if (encoding === 'br') return encodeAnswer(Buffer.concat(pieces), own, acceptEncoding);
    if (encoding === 'gzip') {
      // The pieces' own compressed blocks, kept with them: a cached answer is not compressed again per request.
      return gzipPieces(pieces).then((coded) => {
        let codedLength = 0;
        for (const piece of coded) codedLength += piece.length;
        return { headers: answerHeaders(codedLength, 'gzip', own), pieces: coded };
      });
    }
    return { headers: answerHeaders(length, encoding, own), pieces };
  }
  const raw = pieces === null ? (body as Uint8Array) : (pieces[0] ?? new Uint8Array(0));
  const encoding = jsonEncoding(raw, acceptEncoding);
  if (encoding === 'identity') return { headers: answerHeaders(raw.length, encoding, own), pieces: [raw] };
  return compress(encoding, raw).then((payload) => ({ headers: answerHeaders(payload.length, encoding, own), pieces: [payload] }));
}

/**
 * Sends the dispatcher's answer (src/api/dispatch.ts) on Node's HTTP server. A JSON answer once part of another is
 * out can only cut the connection: a truncated answer must never look complete.
 */
export function sendAnswer(res: ServerResponse, answer: Sendable): void | Promise<void> {
  if (answer.kind === 'json') {
    if (res.headersSent) return void res.destroy();
    return sendBytes(res.req, res, answer.status, answer.body, answer.headers, answer.head);
  }
  if (answer.kind === 'stream') return sendStream(res, answer.status, answer.headers, answer.chunks, answer.head);
  res.writeHead(answer.status, answer.headers);
  res.end();
}

/** Sends a JSON answer that is already bytes, encoded by `encodeAnswer`. */
export async function sendBytes(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  body: Uint8Array | readonly Uint8Array[],
  headers: Readonly<Record<string, string>> = {},
  head = req.method === 'HEAD',
): Promise<void> {
  const encoded = await encodeAnswer(body, headers, req.headers['accept-encoding']);
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, encoded.headers);
  const pieces = encoded.pieces;
  if (head) return void res.end();
  if (pieces.length === 1) return void res.end(pieces[0]);
  // Corked, the head and the pieces leave in one write (writev), as one buffer would.
  res.cork();
  for (let i = 0; i < pieces.length - 1; i++) res.write(pieces[i]);
  res.end(pieces[pieces.length - 1]);
  res.uncork();
}

/**
 * The coding of a body in pieces: gzip wherever the client takes it at least as gladly as br, since its pieces'
 * compressed blocks can be kept and joined (gzip-pieces.ts) while br's cannot; br only when preferred.
 */
function piecesEncoding(acceptEncoding: string | undefined): Encoding {
  const { br, gzip } = encodingWeights(acceptEncoding);
  if (gzip > 0 && gzip >= br) return 'gzip';
  return pickEncoding(acceptEncoding);
}
