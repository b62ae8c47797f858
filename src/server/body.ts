import type { IncomingMessage } from 'node:http';
import { bodyTooLarge, MAX_BODY_BYTES } from '../api/body.ts';

export { MAX_BODY_BYTES };

/** Thrown when the client goes away before its body arrived; there is no one left to answer. */
export class ClientGone extends Error {
  override readonly name = 'ClientGone';
}

/**
 * Reads a request body into memory, refusing it as soon as it passes `limit` bytes: by its Content-Length before
 * reading anything, or while it streams in when it is chunked. What is left unread is drained and dropped.
 */
export function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    req.resume();
    return Promise.reject(bodyTooLarge(limit));
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
        reject(bodyTooLarge(limit));
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
