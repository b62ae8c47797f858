import { ApiError } from './errors.ts';

/**
 * A request's body, read into memory by either host and refused as soon as it passes its limit: by its declared
 * Content-Length before anything is read, or while it streams in. Node's request (an event stream) and a Web request
 * (a ReadableStream) are read by the two readers below, which share the limit and the gathering of the chunks.
 */
export const MAX_BODY_BYTES = 64 * 1024;

export const bodyTooLarge = (limit: number) =>
  new ApiError('request_too_large', `The request body is larger than ${limit / 1024} KiB.`, {
    details: [{ path: 'body', message: `must be at most ${limit} bytes` }],
    // The rest of the body is not read, so the connection cannot carry another request.
    headers: { Connection: 'close' },
  });

/** Thrown when the client goes away before its body arrived; there is no one left to answer. */
export class ClientGone extends Error {
  override readonly name = 'ClientGone';
}

/** Chunks gathered up to a limit; `add` answers false once they pass it (nothing more is kept then). */
class Gathered {
  private readonly chunks: Uint8Array[] = [];
  private size = 0;
  constructor(private readonly limit: number) {}

  add(chunk: Uint8Array): boolean {
    this.size += chunk.byteLength;
    if (this.size > this.limit) {
      this.chunks.length = 0;
      return false;
    }
    this.chunks.push(chunk);
    return true;
  }

  bytes(): Uint8Array {
    if (this.chunks.length === 1) return this.chunks[0] as Uint8Array;
    const out = new Uint8Array(this.size);
    let at = 0;
    for (const c of this.chunks) {
      out.set(c, at);
      at += c.byteLength;
    }
    return out;
  }
}

const declaredTooLarge = (declared: string | null | undefined, limit: number) => declared !== undefined && declared !== null && Number(declared) > limit;

/** What the Node reader needs of node:http's IncomingMessage (this folder runs without Node's modules). */
export type NodeBody = {
  readonly headers: { readonly 'content-length'?: string | undefined };
  readonly complete: boolean;
  on(event: 'data', listener: (chunk: Uint8Array) => void): unknown;
  on(event: 'end' | 'close', listener: () => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
  resume(): unknown;
};

/** Node's request body. What is left unread past the limit is drained and dropped, so the 413 can still be sent. */
export function readNodeBody(req: NodeBody, limit = MAX_BODY_BYTES): Promise<Uint8Array> {
  if (declaredTooLarge(req.headers['content-length'], limit)) {
    req.resume();
    return Promise.reject(bodyTooLarge(limit));
  }
  return new Promise((resolve, reject) => {
    const gathered = new Gathered(limit);
    let settled = false;
    // Inline listeners guarded by `settled` rather than named ones removed later: a request is short-lived, and
    // named closures cost more to make on every request than listeners left on a finished stream.
    req.on('data', (chunk) => {
      if (settled) return;
      if (gathered.add(chunk)) return;
      settled = true;
      req.resume();
      reject(bodyTooLarge(limit));
    });
    req.on('end', () => {
      if (settled) return;
      settled = true;
      resolve(gathered.bytes());
    });
    req.on('error', (err) => {
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

/** A Web request's body (the Worker). What is left unread past the limit is cancelled. */
export async function readWebBody(request: Request, limit = MAX_BODY_BYTES): Promise<Uint8Array> {
  if (declaredTooLarge(request.headers.get('content-length'), limit)) throw bodyTooLarge(limit);
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const gathered = new Gathered(limit);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (!gathered.add(value)) {
      await reader.cancel().catch(() => undefined);
      throw bodyTooLarge(limit);
    }
  }
  return gathered.bytes();
}
