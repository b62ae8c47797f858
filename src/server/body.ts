import type { IncomingMessage } from 'node:http';
import { ApiError } from '../api/errors.ts';

export const MAX_BODY_BYTES = 64 * 1024;

/** Thrown when the client goes away before its body arrived; there is no one left to answer. */
export class ClientGone extends Error {
  override readonly name = 'ClientGone';
}

const tooLarge = (limit: number) =>
  new ApiError('request_too_large', `The request body is larger than ${limit / 1024} KiB.`, {
    details: [{ path: 'body', message: `must be at most ${limit} bytes` }],
    // The rest of the body is not read, so the connection cannot carry another request.
    headers: { Connection: 'close' },
  });

/**
 * Reads a request body into memory, refusing it as soon as it passes `limit` bytes: by its Content-Length before
 * reading anything, or while it streams in when it is chunked. What is left unread is drained and dropped.
 */
export function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    req.resume();
    return Promise.reject(tooLarge(limit));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    // Inline listeners guarded by `settled` rather than named ones removed later: a request is short-lived, and
    // named closures cost more to make on every request than listeners left on a finished stream.
    req.on('data', (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > limit) {
        settled = true;
        chunks.length = 0;
        req.resume();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (settled) return;
      settled = true;
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    });
    req.on('error', (err: Error) => {
      if (settled) return;
      settled = true;
      reject(new ClientGone(err.message));
    });
    req.on('close', () => {
      if (settled || req.complete) return;
      settled = true;
      reject(new ClientGone('the client closed the connection before sending its whole body'));
    });
  });
}
