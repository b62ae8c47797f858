import type { QueryAnswer } from '../api/query-answer.ts';
import { BufferPool } from '../utils/buffer-pool.ts';
import { answerHeaders, headText, plainHead } from './head-writer.ts';
import type { Encoding } from './media.ts';
import { compress, jsonEncoding, type EncodedAnswer } from './respond.ts';

/**
 * The buffers the fast lane makes its answers in, and an answer's bytes on the wire: its head (head-writer.ts) written
 * just before the body in the buffer the body was made in, so the whole goes out without another copy.
 */
/** Room kept before an answer in a buffer of the lane's for its HTTP head (which is about 250 bytes). */
export const HEAD_ROOM = 512;
/** The smallest buffer the lane lends, and the largest: answers bigger than that get one of their own. */
const ANSWER_BUFFER_BYTES = 64 * 1024;
const ANSWER_BUFFER_MAX_BYTES = 1024 * 1024;
/** Buffers kept of the smallest size; of each larger size, as many as fit in ANSWER_BUFFER_CLASS_KEPT_BYTES. */
const ANSWER_BUFFER_KEPT = 8;
const ANSWER_BUFFER_CLASS_KEPT_BYTES = 1024 * 1024;

/**
 * Buffers the lane lends to answers: an answer is written at HEAD_ROOM into one, its HTTP head just before it, and the
 * whole is sent without another copy. A buffer comes back once the socket took all of it at once (nothing of it waits
 * in the stream); one still queued is left to the garbage collector. A new ArrayBuffer for every answer would be
 * work for the allocator and the collector on every request, on top of copying the answer again. Sizes
 * double from 64 KiB to 1 MiB, each kept apart: a catalog page of a shard (about 100 KB) then takes a 128 KiB buffer
 * back from the last page instead of a new, zeroed one that the collector must count and free.
 */
export class AnswerBuffers {
  private readonly pool = new BufferPool(ANSWER_BUFFER_BYTES, ANSWER_BUFFER_MAX_BYTES, ANSWER_BUFFER_KEPT, ANSWER_BUFFER_CLASS_KEPT_BYTES);
  private readonly lent = new WeakSet<ArrayBufferLike>();

  readonly allocate = (size: number): Uint8Array => {
    const buffer = this.pool.take(HEAD_ROOM + size);
    this.lent.add(buffer);
    return new Uint8Array(buffer, HEAD_ROOM, size);
  };

  /** Whether the bytes before `bytes` in its buffer are the lane's to write. */
  owns(bytes: Uint8Array): boolean {
    return this.lent.has(bytes.buffer);
  }

  release(buffer: ArrayBufferLike): void {
    if (this.lent.delete(buffer)) this.pool.give(buffer);
  }

  /**
   * Gives `buffer` back the first time it is called, and does nothing after: for a write's callback (the socket calls
   * it once the bytes have left it, or failed to) that may come after the buffer was given back and lent again.
   */
  giveBackOnce(buffer: ArrayBufferLike): () => void {
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.release(buffer);
    };
  }
}


/**
 * An answer ready to write: its bytes, then `pieces` (a large body's pieces, shared with later answers, written after
 * the head as they are: one writev, no copy), whether the connection closes after it, and the lane's buffer it lies in.
 */
export type Out = { bytes: Buffer; pieces?: readonly Uint8Array[]; size: number; close: boolean; lent: ArrayBufferLike | null };

/**
 * The answer's bytes as Node's `sendBytes` sends them: the same headers in the same order, then the body. Without a
 * coding to apply (most answers: small ones, and any to a client that accepts none), made at once: no promise to wait
 * for, whose cost is a real share of a small answer's.
 */
export function answerBytes(acceptEncoding: string | undefined, answer: QueryAnswer, close: boolean, buffers: AnswerBuffers): Out | Promise<Out> {
  const raw = answer.body;
  const encoding = jsonEncoding(raw, acceptEncoding);
  if (encoding === 'identity') return withHead(answer, raw, encoding, close, buffers);
  return compress(encoding, raw).then(
    (payload) => {
      // Compressed bytes are new ones: the lent buffer is free once they are made.
      if (buffers.owns(raw)) buffers.release(raw.buffer);
      return withHead(answer, payload, encoding, close, buffers);
    },
    (err: unknown) => {
      // Only compressing can fail, and the bytes it read are not sent.
      if (buffers.owns(raw)) buffers.release(raw.buffer);
      throw err;
    },
  );
}

export function withHead(answer: QueryAnswer, payload: Uint8Array, encoding: Encoding, close: boolean, buffers: AnswerBuffers): Out {
  let head: string;
  if (answer.status === 200 && encoding === 'identity' && isEmpty(answer.headers)) {
    head = plainHead(payload.length, close);
  } else {
    ({ head, close } = headText(answer.status, answerHeaders(payload.length, encoding, answer.headers), close));
  }
  // Header values are ASCII (the answer's own headers are too), so a character is a byte.
  if (buffers.owns(payload) && payload.byteOffset >= head.length) {
    const bytes = Buffer.from(payload.buffer, payload.byteOffset - head.length, head.length + payload.length);
    bytes.write(head, 0, 'latin1');
    return { bytes, size: bytes.length, close, lent: payload.buffer };
  }
  const bytes = Buffer.allocUnsafe(head.length + payload.length);
  bytes.write(head, 0, 'latin1');
  bytes.set(payload, head.length);
  return { bytes, size: bytes.length, close, lent: null };
}

/** A body at least this large is written as its pieces after the head (one writev) rather than copied after it. */
const COPIED_BODY_MAX_BYTES = 16 * 1024;

/**
 * An encoded answer's bytes as Node's `sendBytes` sends them (the head, then the pieces; the head alone for a HEAD):
 * a small one in one buffer for one write, a large one as its head and its pieces, written together.
 */
export function wireBytes(status: number, encoded: EncodedAnswer, close: boolean, headOnly: boolean): Out {
  const text = headText(status, encoded.headers, close);
  let body = 0;
  if (!headOnly) for (const piece of encoded.pieces) body += piece.length;
  if (body >= COPIED_BODY_MAX_BYTES) {
    return { bytes: Buffer.from(text.head, 'latin1'), pieces: encoded.pieces, size: text.head.length + body, close: text.close, lent: null };
  }
  const bytes = Buffer.allocUnsafe(text.head.length + body);
  // Header values are ASCII, so a character is a byte.
  let at = bytes.write(text.head, 0, 'latin1');
  if (!headOnly) {
    for (const piece of encoded.pieces) {
      bytes.set(piece, at);
      at += piece.length;
    }
  }
  return { bytes, size: bytes.length, close: text.close, lent: null };
}

/**
 * wireBytes of an answer whose one piece lies in the lane's memory (`buffers.allocate`): its head is written in the
 * room before it, and the whole goes out without a copy, as `withHead` sends a query's answer.
 */
export function lentWireBytes(status: number, encoded: EncodedAnswer, close: boolean, buffers: AnswerBuffers): Out {
  const payload = encoded.pieces[0]!;
  const text = headText(status, encoded.headers, close);
  // Header values are ASCII, so a character is a byte.
  if (!buffers.owns(payload) || payload.byteOffset < text.head.length) {
    const copied = wireBytes(status, encoded, close, false);
    buffers.release(payload.buffer);
    return copied;
  }
  const bytes = Buffer.from(payload.buffer, payload.byteOffset - text.head.length, text.head.length + payload.length);
  bytes.write(text.head, 0, 'latin1');
  return { bytes, size: bytes.length, close: text.close, lent: payload.buffer };
}

function isEmpty(headers: Readonly<Record<string, string>>): boolean {
  for (const _ in headers) return false;
  return true;
}
