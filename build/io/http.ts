import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { get as httpGet, type IncomingMessage } from 'node:http';
import { get as httpsGet } from 'node:https';
import { Readable, type Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

/**
 * One GET with a timeout, retried with jittered exponential backoff. The timeout covers the headers and the whole
 * body, so a server that stalls half-way is cut off like one that never answers. The body is streamed, never held
 * whole unless asked: to a file, or to memory, and in either case only up to a limit on the bytes as sent and on the
 * bytes once a Content-Encoding is undone, so an origin cannot make the process hold or write more than it expects.
 */
export type RetryPolicy = {
  /** Attempts after the first. */
  retries: number;
  /** Base and cap of the backoff, in milliseconds. */
  baseDelayMs: number;
  maxDelayMs: number;
};

export type HttpOptions = RetryPolicy & {
  timeoutMs: number;
  /**
   * The transport, for tests and embedding. It must hand over the body as sent, with its Content-Encoding not undone
   * (the bytes on the wire are counted and capped before decoding); the default is `rawFetch`.
   */
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  /** Told about each failed attempt that will be retried. */
  onRetry?: (info: { url: string; attempt: number; delayMs: number; reason: string }) => void;
};

/** How much of a body is taken, and how the limit is named in the message when a body passes it. */
export type BodyLimit = {
  /** Bytes of the body once decoded (what is written or kept). */
  bytes: number;
  /** Bytes of the body as sent; default `bytes`. */
  wireBytes?: number;
  /** Names the limit in the message, e.g. "the manifest's size" or "--max-download-bytes". */
  name: string;
};

/**
 * Where a 200's body goes: a file (created or truncated at each attempt) or memory. `keepCoding` names a
 * Content-Encoding under which the body as sent is the file itself: a file stored compressed (`x.bin.gz`) that a host
 * labels `Content-Encoding: gzip`, as many static hosts do, is taken as sent, not decoded.
 */
export type BodySink = ({ file: string } | { file?: undefined }) & { limit: BodyLimit; keepCoding?: string };

export type Body = {
  /** Bytes as sent (before a Content-Encoding was undone) and as decoded. */
  wireBytes: number;
  bytes: number;
  /** sha256 of the decoded bytes, in hex. */
  sha256: string;
  /** The decoded bytes when the sink was memory, else null (they are in the file). */
  data: Buffer | null;
};

type Answer = { status: 304; headers: Headers } | ({ status: 200; headers: Headers } & Body);
export type HttpResult = Answer & { attempts: number };

export class HttpError extends Error {
  override readonly name = 'HttpError';
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
  }
}

/** A body passed its limit: not worth another try, since the origin would send the same. */
export class LimitError extends HttpError {
  constructor(message: string) {
    super(message, false);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** "Full jitter": a uniform delay up to the capped exponential step, so many clients do not retry in step. */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.round(random() * ceiling);
}

/** 408, 425, 429 and 5xx are worth another try; other statuses will not change by asking again. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 425 || status === 429 || status >= 500;
}

export async function getWithRetry(url: string, headers: Record<string, string>, options: HttpOptions, sink: BodySink): Promise<HttpResult> {
  const doSleep = options.sleep ?? sleep;
  for (let attempt = 0; ; attempt++) {
    try {
      return { ...(await getOnce(url, headers, options, sink)), attempts: attempt + 1 };
    } catch (err) {
      const error = err instanceof HttpError ? err : new HttpError(describe(err, options.timeoutMs), true);
      if (!error.retryable || attempt >= options.retries) {
        const tries = attempt + 1;
        const message = `${error.message}${tries > 1 ? ` (after ${tries} attempts)` : ''}`;
        throw error instanceof LimitError ? new LimitError(message) : new HttpError(message, false);
      }
      const delayMs = Math.min(options.maxDelayMs, Math.max(error.retryAfterMs ?? 0, backoffDelay(attempt, options, options.random)));
      options.onRetry?.({ url, attempt: attempt + 1, delayMs, reason: error.message });
      await doSleep(delayMs);
    }
  }
}

const count = (n: number): string => n.toLocaleString('en-US');

async function getOnce(url: string, headers: Record<string, string>, options: HttpOptions, sink: BodySink): Promise<Answer> {
  const doFetch = options.fetch ?? rawFetch;
  const signal = AbortSignal.timeout(options.timeoutMs);
  const res = await doFetch(url, { headers, signal, redirect: 'follow' });
  if (res.status === 304) {
    await res.body?.cancel();
    return { status: 304, headers: res.headers };
  }
  if (res.status !== 200) {
    await res.body?.cancel();
    throw new HttpError(`HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`, isRetryableStatus(res.status), retryAfter(res.headers));
  }
  const { limit } = sink;
  const wireLimit = limit.wireBytes ?? limit.bytes;
  const declaredHeader = res.headers.get('content-length');
  const declared = declaredHeader === null ? null : Number(declaredHeader);
  const sent = (res.headers.get('content-encoding') ?? 'identity').trim().toLowerCase();
  const coding = sink.keepCoding !== undefined && sink.keepCoding === (sent === 'x-gzip' ? 'gzip' : sent) ? 'identity' : sent;
  const decoder = decoderFor(coding);
  if (decoder === undefined) {
    await res.body?.cancel();
    throw new HttpError(`the answer has a Content-Encoding this client does not undo: ${coding}`, false);
  }
  // Said up front: no byte needs to be read to know the body is too large.
  if (declared !== null && declared > wireLimit) {
    await res.body?.cancel();
    throw new LimitError(`the answer declares ${count(declared)} bytes, past the limit of ${count(wireLimit)} bytes (${limit.name})`);
  }

  let wireBytes = 0;
  let bytes = 0;
  const hash = createHash('sha256');
  const chunks: Buffer[] = [];
  const onWire = async function* (source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const chunk of source) {
      wireBytes += chunk.byteLength;
      if (wireBytes > wireLimit) throw new LimitError(`more than ${count(wireLimit)} bytes were sent, past the limit (${limit.name}); reading stopped there`);
      yield chunk;
    }
  };
  const onDecoded = async function* (source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const chunk of source) {
      bytes += chunk.byteLength;
      if (bytes > limit.bytes) {
        const how = decoder ? ` once its ${coding} encoding is undone` : '';
        throw new LimitError(`the body is more than ${count(limit.bytes)} bytes${how}, past the limit (${limit.name}); reading stopped there`);
      }
      hash.update(chunk);
      yield chunk;
    }
  };
  const body = res.body ? Readable.fromWeb(res.body as WebReadableStream<Uint8Array>) : Readable.from([]);
  const stages: (NodeJS.ReadableStream | NodeJS.WritableStream | Transform | ((s: AsyncIterable<Buffer>) => AsyncGenerator<Buffer>))[] = [body, onWire];
  if (decoder) stages.push(decoder);
  stages.push(onDecoded);
  try {
    if (sink.file !== undefined) {
      await (pipeline as (...s: unknown[]) => Promise<void>)(...stages, createWriteStream(sink.file));
    } else {
      await (pipeline as (...s: unknown[]) => Promise<void>)(...stages, async (source: AsyncIterable<Buffer>) => {
        for await (const chunk of source) chunks.push(chunk);
      });
    }
  } catch (err) {
    if (err instanceof HttpError) throw err;
    if (signal.aborted) throw new HttpError(`no complete answer within ${options.timeoutMs} ms`, true);
    const code = (err as NodeJS.ErrnoException).code;
    if (decoder && typeof code === 'string' && code.startsWith('Z_')) throw new HttpError(`the ${coding} body does not decode (${(err as Error).message})`, true);
    throw err;
  }
  if (declared !== null && wireBytes !== declared) throw new HttpError(`truncated response: ${count(wireBytes)} of ${count(declared)} bytes`, true);
  return {
    status: 200,
    headers: res.headers,
    wireBytes,
    bytes,
    sha256: hash.digest('hex'),
    data: sink.file === undefined ? Buffer.concat(chunks) : null,
  };
}

/** The decoder of a Content-Encoding; null for none, undefined for one not known here. */
function decoderFor(coding: string): Transform | null | undefined {
  if (coding === 'identity' || coding === '') return null;
  if (coding === 'gzip' || coding === 'x-gzip') return createGunzip();
  if (coding === 'br') return createBrotliDecompress();
  if (coding === 'deflate') return createInflate();
  return undefined;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;

/**
 * A GET as `fetch` does it (redirects followed, the signal honoured), on node:http, that leaves the body as sent:
 * fetch would undo a Content-Encoding itself, and then neither the bytes on the wire nor a gzip bomb could be seen
 * before the decoded bytes were there.
 */
export const rawFetch: typeof fetch = (input, init) => {
  const url = new URL(input instanceof Request ? input.url : String(input));
  const headers: Record<string, string> = {};
  new Headers(init?.headers).forEach((value, name) => {
    headers[name] = value;
  });
  return rawGet(url, headers, init?.signal ?? undefined, 0);
};

function rawGet(url: URL, headers: Record<string, string>, signal: AbortSignal | undefined, redirects: number): Promise<Response> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return Promise.reject(new Error(`not an http(s) URL: ${url.href}`));
  return new Promise((resolve, reject) => {
    const get = url.protocol === 'https:' ? httpsGet : httpGet;
    const req = get(url, { headers, signal }, (res: IncomingMessage) => {
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (REDIRECTS.has(status) && location !== undefined && redirects < MAX_REDIRECTS) {
        res.resume();
        resolve(rawGet(new URL(location, url), headers, signal, redirects + 1));
        return;
      }
      const answer = new Headers();
      for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) answer.append(res.rawHeaders[i] as string, res.rawHeaders[i + 1] as string);
      const empty = status === 204 || status === 205 || status === 304;
      if (empty) res.resume();
      const body = empty ? null : (Readable.toWeb(res) as unknown as ReadableStream<Uint8Array>);
      resolve(new Response(body, { status, statusText: res.statusMessage ?? '', headers: answer }));
    });
    req.on('error', reject);
  });
}

function retryAfter(headers: Headers): number | null {
  const value = headers.get('retry-after');
  if (value === null) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}

/** A plain sentence for a network failure: undici hides the useful part in `cause`, node:http names it in `code`. */
function describe(err: unknown, timeoutMs: number): string {
  const e = err as Error & { code?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `no complete answer within ${timeoutMs} ms`;
  const cause = e?.cause?.code ?? e?.cause?.message;
  if (cause) return `${e.message} (${cause})`;
  const message = String(e?.message ?? err);
  return e?.code && !message.includes(e.code) ? `${message} (${e.code})` : message;
}
