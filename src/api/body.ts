import { ApiError } from './errors.ts';

export const MAX_BODY_BYTES = 64 * 1024;

export const bodyTooLarge = (limit: number) =>
  new ApiError('request_too_large', `The request body is larger than ${limit / 1024} KiB.`, {
    details: [{ path: 'body', message: `must be at most ${limit} bytes` }],
    // The rest of the body is not read, so the connection cannot carry another request.
    headers: { Connection: 'close' },
  });

/**
 * A Web request's body, refused as soon as it passes `limit` bytes: by its Content-Length before reading anything,
 * or while it streams in when it has none. What is left unread is cancelled.
 */
export async function readRequestBody(request: Request, limit = MAX_BODY_BYTES): Promise<Uint8Array> {
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > limit) throw bodyTooLarge(limit);
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw bodyTooLarge(limit);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
