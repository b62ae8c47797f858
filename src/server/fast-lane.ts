import { STATUS_CODES, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { OperationName } from '../contract/index.ts';
import type { QueryAnswer } from '../api/query-answer.ts';
import type { BytesAnswer } from '../api/routes.ts';
import type { Snapshot } from '../snapshot/index.ts';
import type { Logger } from './log.ts';
import { HELD, logBug, type QueryRun } from './query-handler.ts';
import { KEEP_ALIVE_MS, stallCheckMs } from './config.ts';
import { BufferPool } from '../utils/buffer-pool.ts';
import { compress, encodeAnswer, jsonEncoding, jsonHeaders, type EncodedAnswer } from './respond.ts';
import type { Encoding } from './media.ts';
import { rememberFirst } from '../utils/remember.ts';

/**
 * The fast lane: POST /v1/query (and GET of openFDA's device endpoints) answered straight from the socket's bytes,
 * below Node's HTTP layer.
 *
 * For small answers Node's HTTP layer (the parser's request and response objects, header validation, the writable
 * stream machinery) costs more than the operation itself, and a bare node:http server sending fixed bytes is below
 * the targets, so no trimming of our own code could reach them. Every connection starts here. Requests of the one shape API clients send (a whole
 * `POST /v1/query HTTP/1.1` with a Host, a Content-Length within the body limit, no Transfer-Encoding, Expect or
 * Upgrade, every header line well formed), and a GET or HEAD of openFDA's device endpoints with no body under the
 * same header rules, are read from the socket's bytes and answered with one write: the GET by its route's portable
 * handler and encoded by `encodeAnswer`, as Node's route answers it, so the bytes are the same. Anything
 * else (another path or method, a malformed or unusual request, one still incomplete after a moment) hands the
 * connection to Node's HTTP server for the rest of its life, from the first byte not answered here: Node's parser
 * then decides and answers exactly as it always did (400, 408, 413, 431, chunked bodies, 100-continue, the page and
 * the snapshot's files). Answers already under way on the lane are written before the hand-over, so they stay in
 * order.
 *
 * The pipelining bound is the one of pipelining.ts: at most `depth` requests of a connection are answered at once, the
 * next start once an answer has been handed to the kernel and the socket has drained, and a connection with more
 * than `maxWaiting` complete requests waiting is closed before any of them starts.
 *
 * And a connection's requests not yet answered (started or waiting) hold at most `bufferBytes`: past it the lane
 * stops reading the connection (as Node's parser stops reading while a request's body waits unread), so that a client
 * that pipelines large bodies and never reads its answers is held back by TCP instead of by the server's memory, and
 * reads again once answers have been made. A request starts only while the bodies of those under way stay within it
 * (one always may). A waiting body is copied out of the bytes it was read with when they are more than its own, so
 * that it never keeps a larger buffer alive, and a started one is let go once its answer is made.
 *
 * The answers a connection's client has not read are bounded the same way: a request whose turn comes while the
 * answers ahead of it, made and not yet taken by the kernel, pass `bufferBytes` is not answered then, and runs again
 * once they have gone out. A client that never reads thus leaves about one answer in the server's memory (the one
 * the kernel had no room for), not one for each request under way.
 */
export type FastLane = {
  /** The snapshot serving now; read once per request. */
  current: () => Snapshot | null;
  /** Answers a request; given the lane's `allocate`, so that answers are made in the lane's buffers. */
  runner: (allocate: (size: number) => Uint8Array) => QueryRun;
  /** The answer for a thrown value (a compression that failed). */
  fail: (err: unknown, operation: string | null, snapshot: Snapshot | null) => QueryAnswer;
  logger: Logger;
  /** True once the server is stopping: answers then close their connection. */
  draining: () => boolean;
  depth: number;
  maxWaiting: number;
  onRefused: (socket: Socket) => void;
  maxBodyBytes: number;
  /**
   * Bytes a connection's requests not yet answered and its unparsed bytes may hold before the lane stops reading it;
   * and bytes of its answers not yet taken by the kernel past which its next answers wait to be made.
   */
  bufferBytes: number;
  requestTimeoutMs: number;
  /** Paths whose GET and HEAD the lane answers too (with `answerGet`, each with no body); none when absent. */
  getPaths?: ReadonlySet<string>;
  /**
   * A GET's answer by its route's handler, run by the dispatcher as for Node's route (a failure is already its error
   * answer), and the snapshot it started on. The lane encodes it as Node's route does (`encodeAnswer`).
   */
  answerGet?: (request: GetRequest) => Promise<{ snapshot: Snapshot | null; answer: BytesAnswer }>;
};

export type FastLaneControl = {
  /** Closes the lane's connections that have nothing in flight (as the server's `closeIdleConnections`). */
  closeIdle(): void;
  /** Closes every connection of the lane. */
  closeAll(): void;
  /** Connections on the lane now, requests answered on it, and connections handed to Node (for tests). */
  readonly connections: number;
  readonly answered: number;
  /** Of those, GETs and HEADs. */
  readonly answeredGets: number;
  readonly handedOver: number;
  /** Times a connection stopped being read because its requests passed `bufferBytes`, and the most held. */
  readonly readPauses: number;
  readonly peakHeldBytes: number;
  /** Times a request's turn came while the answers ahead of it, not yet taken by the kernel, passed `bufferBytes`. */
  readonly heldAnswers: number;
};

/** Node's limit on a request's head (`--max-http-header-size`): a longer head goes to Node, which answers 431. */
export const MAX_HEAD_BYTES = 16 * 1024;
/** How long a request cut between two reads may wait for its rest before Node's parser (and its timeouts) take it. */
const PARTIAL_WAIT_MS = 100;

/** What Node's HTTP server writes for a request it cannot read (its `badRequestResponse`). */
const BAD_REQUEST = Buffer.from('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n', 'latin1');
const REQUEST_LINE = Buffer.from('POST /v1/query HTTP/1.1\r\n', 'latin1');
const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9a-z]+$/;
// Control characters other than tab are refused in a value by Node's parser: such a request is Node's to answer.
const BAD_VALUE = /[\x00-\x08\x0a-\x1f\x7f]/;
// Node's parser (llhttp) takes spaces and tabs before a Content-Length's digits, only spaces after them.
const CONTENT_LENGTH = /^[ \t]*([0-9]{1,15}) *$/;
const OWS = /^[ \t]+|[ \t]+$/g;

/**
 * A request read on the lane: a POST /v1/query with its body, or (`get` set) a GET or HEAD of one of `getPaths`,
 * with no body, its URL as received and its header fields for the route's handler.
 */
type Request = {
  body: Buffer;
  contentType: string | undefined;
  acceptEncoding: string | undefined;
  close: boolean;
  get: GetRequest | null;
};
export type GetRequest = { method: 'GET' | 'HEAD'; url: string; path: string; host: string; fields: readonly Field[] };

const NO_BODY = Buffer.alloc(0);
const GET_START = Buffer.from('GET /', 'latin1');
const HEAD_START = Buffer.from('HEAD /', 'latin1');
const LINE_END = Buffer.from('\r\n', 'latin1');
const HTTP_11 = ' HTTP/1.1';

/**
 * One request from the start of `buf`: the request and the bytes it took, 'more' when it is not all there yet, or
 * 'node' when it is not the lane's to answer. `getPaths`: the paths answered on the lane to a GET or HEAD.
 */
export function parse(buf: Buffer, maxBodyBytes: number, getPaths: ReadonlySet<string> = NO_PATHS): { request: Request; used: number } | 'more' | 'node' {
  if (buf[0] !== 0x50 /* P */ && getPaths.size > 0) return parseGet(buf, getPaths);
  const lineEnd = REQUEST_LINE.length;
  if (buf.length < lineEnd) return REQUEST_LINE.subarray(0, buf.length).equals(buf) ? 'more' : 'node';
  if (buf.compare(REQUEST_LINE, 0, lineEnd, 0, lineEnd) !== 0) return 'node';
  const headEnd = buf.indexOf(HEAD_END, lineEnd - 2);
  if (headEnd < 0) return buf.length > MAX_HEAD_BYTES ? 'node' : 'more';
  if (headEnd + 4 > MAX_HEAD_BYTES) return 'node';
  const head = readHead(buf, lineEnd, headEnd, false);
  if (head === null || head.host === undefined || head.length < 0 || head.length > maxBodyBytes) return 'node';
  const length = head.length;
  const bodyStart = headEnd + 4;
  if (buf.length < bodyStart + length) return 'more';
  return {
    request: { body: buf.subarray(bodyStart, bodyStart + length), contentType: head.contentType, acceptEncoding: head.acceptEncoding, close: head.close, get: null },
    used: bodyStart + length,
  };
}

const NO_PATHS: ReadonlySet<string> = new Set();

/**
 * A GET or HEAD of one of `paths` with a query string or none: `METHOD /path[?query] HTTP/1.1`, the target of
 * printable ASCII but `#` (Node's parser takes each such byte as it is into the URL; the others, and a fragment, are
 * Node's to read), and no body (no Content-Length but 0, no Transfer-Encoding).
 */
function parseGet(buf: Buffer, paths: ReadonlySet<string>): { request: Request; used: number } | 'more' | 'node' {
  const start = buf[0] === 0x47 /* G */ ? GET_START : HEAD_START;
  if (buf.length < start.length) return start.subarray(0, buf.length).equals(buf) ? 'more' : 'node';
  if (buf.compare(start, 0, start.length, 0, start.length) !== 0) return 'node';
  const lineEnd = buf.indexOf(LINE_END, start.length);
  const seen = lineEnd < 0 ? buf.length : lineEnd;
  // The target's bytes so far: one the lane does not take sends the request to Node at once.
  const targetStart = start.length - 1;
  let targetEnd = seen;
  for (let i = targetStart; i < seen; i++) {
    const c = buf[i]!;
    if (c === 0x20) {
      targetEnd = i;
      break;
    }
    if (c < 0x21 || c > 0x7e || c === 0x23 /* # */) return 'node';
  }
  if (lineEnd < 0) return buf.length > MAX_HEAD_BYTES ? 'node' : 'more';
  if (buf.toString('latin1', targetEnd, lineEnd) !== HTTP_11) return 'node';
  const url = buf.toString('latin1', targetStart, targetEnd);
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (!paths.has(path)) return 'node';
  const headEnd = buf.indexOf(HEAD_END, lineEnd);
  if (headEnd < 0) return buf.length > MAX_HEAD_BYTES ? 'node' : 'more';
  if (headEnd + 4 > MAX_HEAD_BYTES) return 'node';
  const head = readHead(buf, lineEnd + 2, headEnd, true);
  if (head === null || head.length > 0 || head.host === undefined) return 'node';
  const get: GetRequest = { method: start === GET_START ? 'GET' : 'HEAD', url, path, host: head.host, fields: head.fields! };
  return { request: { body: NO_BODY, contentType: head.contentType, acceptEncoding: head.acceptEncoding, close: head.close, get }, used: headEnd + 4 };
}

type Head = { length: number; host: string | undefined; contentType: string | undefined; acceptEncoding: string | undefined; close: boolean; fields: Field[] | null };

/**
 * The header lines between `from` and `headEnd`, read as Node's parser reads them, or null when the request is Node's
 * to answer: a line Node refuses, a second Host, Content-Length given twice or not as digits, Transfer-Encoding,
 * Expect, Upgrade. The head is latin1 as Node reads it. `keep`: the fields are kept, for a handler's `header()`.
 */
function readHead(buf: Buffer, from: number, headEnd: number, keep: boolean): Head | null {
  let length = -1;
  let host: string | undefined;
  let contentType: string | undefined;
  let acceptEncoding: string | undefined;
  let close = false;
  const fields: Field[] | null = keep ? [] : null;
  if (headEnd <= from) return null;
  const head = buf.toString('latin1', from, headEnd);
  for (const line of head.split('\r\n')) {
    const field = headerField(line);
    if (field === null) return null;
    fields?.push(field);
    const { name, value } = field;
    switch (name) {
      case 'content-length': {
        const digits = length < 0 ? CONTENT_LENGTH.exec(field.raw) : null;
        if (digits === null) return null;
        length = Number(digits[1]);
        break;
      }
      case 'host':
        if (host !== undefined) return null;
        host = value;
        break;
      case 'content-type':
        if (contentType !== undefined) return null;
        contentType = value;
        break;
      case 'accept-encoding':
        acceptEncoding = acceptEncoding === undefined ? value : `${acceptEncoding}, ${value}`;
        break;
      case 'connection':
      case 'proxy-connection': {
        // A tab or a byte outside printable ASCII in these values is read differently by Node's parser from one
        // version to the next: such a request goes to Node, whose reading is then the one that counts.
        if (ODD_CONNECTION_BYTE.test(field.raw)) return null;
        const tokens = connectionTokens(field.raw);
        if (tokens.upgrade) return null;
        close ||= tokens.close;
        break;
      }
      case 'transfer-encoding':
      case 'expect':
      case 'upgrade':
        return null;
    }
  }
  return { length, host, contentType, acceptEncoding, close, fields };
}

/**
 * A request header by name as Node's `req.headers` gives it: the first of the fields Node keeps once, the others
 * joined (cookies with `; `, the rest with `, `).
 */
export function headerOf(fields: readonly Field[], name: string): string | undefined {
  const wanted = name.toLowerCase();
  let value: string | undefined;
  for (const f of fields) {
    if (f.name !== wanted) continue;
    if (value === undefined) value = f.value;
    else if (SINGLE_HEADERS.has(wanted)) break;
    else value += wanted === 'cookie' ? `; ${f.value}` : `, ${f.value}`;
  }
  return value;
}

/** Headers of which Node keeps the first and drops the others (its `matchKnownFields`). */
const SINGLE_HEADERS = new Set([
  'age', 'authorization', 'content-length', 'content-type', 'etag', 'expires', 'from', 'host', 'if-modified-since',
  'if-unmodified-since', 'last-modified', 'location', 'max-forwards', 'proxy-authorization', 'referer', 'retry-after',
  'server', 'user-agent',
]);

const ODD_CONNECTION_BYTE = /[^\x20-\x7e]/;

/** A header line: its name in lower case, its value without the spaces and tabs around it, and the value as sent. */
export type Field = { readonly name: string; readonly value: string; readonly raw: string };

/**
 * A header line's name (lower case) and value, or null when Node's parser would refuse the line; the first 256 lines
 * read are kept, as a client sends the same few with every request.
 */
const headerField = rememberFirst(256, (line: string): Field | null => {
  const colon = line.indexOf(':');
  if (colon <= 0) return null;
  const name = line.slice(0, colon).toLowerCase();
  if (!TOKEN.test(name)) return null;
  // Only spaces and tabs around a value are not part of it (RFC 9110 5.5); String.trim would also take U+00A0.
  const raw = line.slice(colon + 1);
  const value = raw.replace(OWS, '');
  if (BAD_VALUE.test(value)) return null;
  return { name, value, raw };
});

const CLOSE = 1;
const UPGRADE = 2;
const KEEP_ALIVE_TOKEN = 3;
const CONNECTION_WORDS: readonly [string, number][] = [
  ['close', CLOSE],
  ['upgrade', UPGRADE],
  ['keep-alive', KEEP_ALIVE_TOKEN],
];

/**
 * The tokens Node's parser (llhttp, as built into Node 20) finds in a Connection or Proxy-Connection value, read the
 * way it reads them rather than as RFC 9110 would: a token counts only when it is followed by spaces (not tabs) and
 * then a comma or the end of the line. `close\t`, `close\u00a0` and `x close` are no `close` to Node, which keeps such
 * a connection open; `close , x` and `x,\tclose` are. The lane must end a connection exactly when Node would.
 */
export function connectionTokens(raw: string): { close: boolean; upgrade: boolean } {
  let close = false;
  let upgrade = false;
  // 'start': before a token, skipping spaces and tabs; 'after': a known word just read; 'other': any other token.
  let state: 'start' | 'after' | 'other' = 'start';
  let word = 0;
  const lower = raw.toLowerCase();
  for (let i = 0; i < lower.length; ) {
    const c = lower[i]!;
    if (state === 'start') {
      if (c === ' ' || c === '\t') {
        i++;
        continue;
      }
      const known = CONNECTION_WORDS.find(([w]) => lower.startsWith(w, i));
      if (known) {
        word = known[1];
        i += known[0].length;
        state = 'after';
      } else state = 'other';
    } else if (state === 'after') {
      if (c === ',') {
        if (word === CLOSE) close = true;
        else if (word === UPGRADE) upgrade = true;
        state = 'start';
        i++;
      } else if (c === ' ') i++;
      else state = 'other';
    } else {
      if (c === ',') state = 'start';
      i++;
    }
  }
  if (state === 'after') {
    if (word === CLOSE) close = true;
    else if (word === UPGRADE) upgrade = true;
  }
  return { close, upgrade };
}

let dateSecond = -1;
let dateText = '';
/** The Date header, made once a second (as Node and nginx do). */
function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}

/** Room kept before an answer in a buffer of the lane's for its HTTP head (which is about 250 bytes). */
const HEAD_ROOM = 512;
/** What Node's HTTP server says of a connection it keeps open. */
const KEEP_ALIVE = `Connection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(KEEP_ALIVE_MS / 1000)}\r\n`;
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
 * The head of a 200 answer sent as it is, up to its Content-Length's value and from after it to the Date line: the
 * headers of `jsonHeaders` for an answer with none of its own, made once from it.
 */
const PLAIN_200 = (() => {
  const lines = Object.entries(jsonHeaders(0, 'identity', {})).map(([name, value]) => `${name}: ${name === 'Content-Length' ? '\0' : String(value)}\r\n`);
  const [before, after] = `HTTP/1.1 200 ${STATUS_CODES[200]}\r\n${lines.join('')}`.split('\0') as [string, string];
  return { before, after };
})();

/**
 * The answer's bytes as Node's `sendBytes` sends them: the same headers in the same order, then the body. Without a
 * coding to apply (most answers: small ones, and any to a client that accepts none), made at once: no promise to wait
 * for, whose cost is a real share of a small answer's.
 */
export function answerBytes(request: Request, answer: QueryAnswer, close: boolean, buffers: AnswerBuffers): Out | Promise<Out> {
  const raw = answer.body;
  const encoding = jsonEncoding(raw, request.acceptEncoding);
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

function withHead(answer: QueryAnswer, payload: Uint8Array, encoding: Encoding, close: boolean, buffers: AnswerBuffers): Out {
  let head: string;
  if (answer.status === 200 && encoding === 'identity' && isEmpty(answer.headers)) {
    head = `${PLAIN_200.before}${payload.length}${PLAIN_200.after}Date: ${httpDate()}\r\n${close ? 'Connection: close\r\n' : KEEP_ALIVE}\r\n`;
  } else {
    ({ head, close } = headText(answer.status, jsonHeaders(payload.length, encoding, answer.headers), close));
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

/** The head of an answer with these headers, as Node writes it for `writeHead(status, headers)`: Date and Connection last. */
function headText(status: number, headers: Readonly<Record<string, string | number>>, close: boolean): { head: string; close: boolean } {
  let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Unknown'}\r\n`;
  for (const name in headers) {
    const value = String(headers[name]);
    if (name.toLowerCase() === 'connection') close ||= value.toLowerCase() === 'close';
    else head += `${name}: ${value}\r\n`;
  }
  head += `Date: ${httpDate()}\r\n${close ? 'Connection: close\r\n' : KEEP_ALIVE}\r\n`;
  return { head, close };
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

/** Bytes a waiting request keeps alive: the buffer its body is a view of, or its URL. */
function heldBy(request: Request): number {
  return request.get === null ? request.body.buffer.byteLength : request.get.url.length;
}

/** The path as the request log has it (as log.ts's `logWhenDone` writes it). */
function logPath(path: string): string {
  return path.length > 200 ? `${path.slice(0, 200)}…` : path;
}

function isEmpty(headers: Readonly<Record<string, string>>): boolean {
  for (const _ in headers) return false;
  return true;
}

/** An answer at least this large is written with the others of its tick (WriteBatch); a smaller one at once. */
export const BATCHED_ANSWER_BYTES = 32 * 1024;
/** Connections whose large answers are written at once when this many wait: the lane keeps 8 buffers of 128 KiB. */
const BATCH_CONNECTIONS = 8;

/**
 * Large answers (a catalog page, a search page of many records) are written together at the end of the tick that made them,
 * or as soon as BATCH_CONNECTIONS connections have one waiting, rather than each as soon as it is made. Written one
 * by one, far apart, each answer finds the client asleep and pays for the kernel waking it (sock_def_readable).
 * Written in a burst, the client is woken once and reads the rest awake. Small answers go at once: held for the tick,
 * they leave the client idle while the server works; at a few microseconds each, they keep it awake anyway.
 */
class WriteBatch {
  private readonly ready = new Set<Connection>();
  private scheduled = false;

  add(connection: Connection): void {
    this.ready.add(connection);
    if (this.ready.size >= BATCH_CONNECTIONS) this.write();
    else if (!this.scheduled) {
      this.scheduled = true;
      // After the microtasks of the tick: the turn of request work that made this answer runs as one chain of them.
      process.nextTick(this.write);
    }
  }

  private readonly write = (): void => {
    this.scheduled = false;
    for (const connection of this.ready) {
      this.ready.delete(connection);
      connection.flush();
    }
  };
}

type Slot = {
  request: Request;
  /** Bytes its body keeps alive until its answer is made (0 after). */
  bytes: number;
  /**
   * Its turn came while the answers ahead of it passed the budget ('held'): it runs again ('again', until its turn
   * comes) once they have gone out.
   */
  held: 'no' | 'held' | 'again';
  snapshot: Snapshot | null;
  started: number;
  operation: OperationName | null;
  out: (Out & { status: number }) | null;
};

/** A started request's body once its answer is made: nothing of the bytes it was read with stays alive. */
const SPENT = Buffer.alloc(0);

/** One connection on the lane. */
class Connection {
  private buf: Buffer | null = null;
  private readonly waiting: Request[] = [];
  /** Bytes the waiting requests' bodies keep alive (the buffers they are views of), and whether reading stopped. */
  private waitingBytes = 0;
  private readPaused = false;
  /** Bytes the bodies of started requests keep alive until their answers are made. */
  private startedBytes = 0;
  private awaitingDrain = false;
  /** Started and not yet written, in the order of their requests. */
  private readonly slots: Slot[] = [];
  private handingOver = false;
  private partialTimer: NodeJS.Timeout | null = null;
  private ended = false;
  /** The client ended with part of a request unsent. */
  private cutShort = false;
  private closing = false;
  /** When the lane's watch first saw the connection idle (-1: not idle since it last looked, or busy since). */
  private idleSince = -1;
  /** Bytes moved either way when the watch last saw them change (-1: busy since), and when that was. */
  private moved = -1;
  private movedAt = 0;
  /** The paths of the GETs answered here. */
  private readonly getPaths: ReadonlySet<string>;

  constructor(
    readonly socket: Socket,
    private readonly lane: FastLane,
    private readonly run: QueryRun,
    private readonly buffers: AnswerBuffers,
    private readonly counts: Counts,
    private readonly toNode: (socket: Socket) => void,
    private readonly forget: (c: Connection) => void,
    private readonly batch: WriteBatch,
  ) {
    this.getPaths = lane.answerGet ? (lane.getPaths ?? NO_PATHS) : NO_PATHS;
    socket.on('data', this.onData);
    socket.on('end', this.onEnd);
    socket.on('error', noop);
    socket.once('close', this.onClose);
    socket.setNoDelay(true);
  }

  get idle(): boolean {
    return this.slots.length === 0 && this.waiting.length === 0 && this.buf === null && this.socket.writableLength === 0;
  }

  private readonly onData = (chunk: Buffer): void => {
    this.buf = this.buf === null ? chunk : Buffer.concat([this.buf, chunk]);
    this.parseAll();
    // What is left is part of a request: kept in a buffer of its own rather than as a view of a larger one.
    const buf = this.buf;
    if (buf !== null && buf.buffer.byteLength > buf.length && !this.handingOver) this.buf = own(buf);
    const held = this.held();
    if (held > this.counts.peakHeldBytes) this.counts.peakHeldBytes = held;
    // Started and waiting requests are always answered in time (or the connection is closed), so a connection stopped
    // here is read again; unparsed bytes alone never stop it: they are at most one request.
    if (held > this.lane.bufferBytes && (this.waiting.length > 0 || this.slots.length > 0) && !this.readPaused && !this.handingOver && !this.socket.destroyed) {
      this.readPaused = true;
      this.counts.readPauses++;
      this.socket.pause();
      // A request cut by the pause is not slow: its client was told to wait.
      if (this.partialTimer) {
        clearTimeout(this.partialTimer);
        this.partialTimer = null;
      }
    }
  };

  /** Bytes this connection holds for requests not answered yet: their bodies, started or waiting, and what is not parsed yet. */
  private held(): number {
    return this.startedBytes + this.waitingBytes + (this.buf === null ? 0 : this.buf.buffer.byteLength);
  }

  /** Reads the connection again once what it holds is back within the budget. */
  private resumeReading(): void {
    if (!this.readPaused || this.handingOver || this.socket.destroyed || this.held() > this.lane.bufferBytes) return;
    this.readPaused = false;
    this.socket.resume();
    // A request cut by the pause gets its moment for its rest from now.
    if (this.buf !== null) this.partialTimer ??= setTimeout(() => this.handOver(), PARTIAL_WAIT_MS);
  }

  private parseAll(): void {
    while (this.buf !== null && !this.handingOver && !this.socket.destroyed) {
      const parsed = parse(this.buf, this.lane.maxBodyBytes, this.getPaths);
      if (parsed === 'node') return this.handOver();
      if (parsed === 'more') {
        // A request cut between two reads usually has its rest in the next one; a client that takes longer is slow
        // or hostile, and Node's parser, with its header and request timeouts, takes it from here.
        this.partialTimer ??= setTimeout(() => this.handOver(), PARTIAL_WAIT_MS);
        this.markBusy();
        return;
      }
      if (this.partialTimer) {
        clearTimeout(this.partialTimer);
        this.partialTimer = null;
      }
      this.buf = parsed.used === this.buf.length ? null : this.buf.subarray(parsed.used);
      this.take(parsed.request);
    }
  }

  private take(request: Request): void {
    if (this.closing) return;
    if (request.close) this.closing = true;
    this.markBusy();
    // A request read whole in one piece is a view of that piece, head and all, and is used as it is; one cut out
    // of bytes read together with others is copied, so that its answer's wait does not keep them all alive.
    const copied = request.body.buffer.byteLength > request.body.length + MAX_HEAD_BYTES;
    if (this.waiting.length === 0 && this.canStart(copied ? request.body.length : heldBy(request))) {
      if (copied) request.body = own(request.body);
      this.start(request);
    } else if (this.waiting.length < this.lane.maxWaiting) {
      // A body read with other requests' bytes is a view of them all: copied, it keeps only its own alive.
      if (request.body.buffer.byteLength > request.body.length) request.body = own(request.body);
      this.waiting.push(request);
      this.waitingBytes += heldBy(request);
    } else {
      this.waiting.length = 0;
      this.waitingBytes = 0;
      this.buf = null;
      this.socket.destroy();
      this.lane.onRefused(this.socket);
    }
  }

  /**
   * Whether a request whose body keeps `bytes` alive may start now: fewer than `depth` are under way, the socket has
   * room, and the bodies of those under way stay within `bufferBytes` (one request always may).
   */
  private canStart(bytes: number): boolean {
    if (this.slots.length >= this.lane.depth || this.socket.writableNeedDrain || this.socket.destroyed) return false;
    return this.slots.length === 0 || this.startedBytes + bytes <= this.lane.bufferBytes;
  }

  private start(request: Request): void {
    const bytes = heldBy(request);
    this.startedBytes += bytes;
    if (request.get !== null) return this.startGet(request, request.get, bytes);
    const slot: Slot = { request, bytes, held: 'no', snapshot: this.lane.current(), started: performance.now(), operation: null, out: null };
    this.slots.push(slot);
    this.runSlot(slot);
  }

  /**
   * Whether `slot`'s answer must wait to be made: the answers ahead of it, made and not yet taken by the kernel, pass
   * `bufferBytes`, or one ahead of it was held and is not made yet (its turn, taken again, may come after this one's).
   * A client that does not read its answers then holds at most about one answer in the server's memory (the one the
   * kernel had no room for) instead of one for each request under way; the rest are made as it reads.
   */
  private mustWait(slot: Slot): boolean {
    let ahead = this.socket.writableLength;
    for (const s of this.slots) {
      if (s === slot) break;
      if (s.held !== 'no') return true;
      if (s.out !== null) ahead += s.out.bytes.length;
    }
    return ahead >= this.lane.bufferBytes;
  }

  /** Asked as `slot`'s turn comes: whether its answer waits (it is then held), else it is made now. */
  private holds(slot: Slot): boolean {
    if (this.mustWait(slot)) return true;
    slot.held = 'no';
    return false;
  }

  private runSlot(slot: Slot): void {
    const request = slot.request;
    void this
      .run(slot.snapshot, request.body, request.contentType, this.socket, (operation) => (slot.operation = operation), () => this.holds(slot))
      .then((answer) => {
        if (answer === HELD) return this.hold(slot);
        this.startedBytes -= slot.bytes;
        slot.bytes = 0;
        request.body = SPENT;
        return answer === null ? undefined : this.finish(slot, answer, slot.snapshot);
      })
      .catch((err: unknown) => {
        // Nothing above throws by design; if something did, the connection cannot be answered in order any more.
        this.lane.logger.error('internal error', { method: 'POST', path: '/v1/query', stack: err instanceof Error ? err.stack : String(err) });
        this.socket.destroy();
      });
  }

  /**
   * A GET or HEAD: its route's answer, encoded as Node's route encodes it, in one write. A failure (the handler threw,
   * or compressing failed) becomes the error Node's route sends for it.
   */
  private startGet(request: Request, get: GetRequest, bytes: number): void {
    // A GET's answer is made at once (never held): it is a kept answer's shared pieces or a small error, and its URL,
    // counted in the budget until then, is all the request holds.
    const slot: Slot = { request, bytes, held: 'no', snapshot: null, started: performance.now(), operation: null, out: null };
    this.slots.push(slot);
    const lane = this.lane;
    const made = async (): Promise<{ out: Out; status: number }> => {
      const { snapshot, answer } = await lane.answerGet!(get);
      let status = answer.status;
      let encoded: EncodedAnswer;
      try {
        encoded = await encodeAnswer(answer.body, answer.headers ?? {}, request.acceptEncoding);
      } catch (err) {
        // Only compressing can fail here: the answer becomes the error it is, as on Node's route.
        const failure = lane.fail(err, answer.operation ?? null, snapshot);
        logBug(lane.logger, failure, get.method, get.path);
        encoded = await encodeAnswer(failure.body, failure.headers, request.acceptEncoding);
        status = failure.status;
      }
      return { out: wireBytes(status, encoded, request.close || lane.draining(), get.method === 'HEAD'), status };
    };
    made().then(
      ({ out, status }) => {
        this.startedBytes -= slot.bytes;
        slot.bytes = 0;
        this.ready(slot, out, status);
      },
      (err: unknown) => {
        // An error answer that could not be made: nothing is left to answer in order with, as on the POST path.
        lane.logger.error('internal error', { method: get.method, path: get.path, stack: err instanceof Error ? err.stack : String(err) });
        this.socket.destroy();
      },
    );
  }

  private finish(slot: Slot, answer: QueryAnswer, snapshot: Snapshot | null): void | Promise<void> {
    logBug(this.lane.logger, answer, 'POST', '/v1/query');
    const close = slot.request.close || this.lane.draining();
    const out = answerBytes(slot.request, answer, close, this.buffers);
    if (!(out instanceof Promise)) return this.ready(slot, out, answer.status);
    return out.then(
      (made) => this.ready(slot, made, answer.status),
      (err: unknown) => {
        // An answer that could not be compressed becomes the error it is, sent as it is.
        const failed = this.lane.fail(err, answer.operation, snapshot);
        logBug(this.lane.logger, failed, 'POST', '/v1/query');
        this.ready(slot, withHead(failed, failed.body, 'identity', close, this.buffers), failed.status);
      },
    );
  }

  private hold(slot: Slot): void {
    slot.held = 'held';
    this.counts.heldAnswers++;
    this.wakeHeld();
  }

  /**
   * Runs again, in order, the held requests whose answers ahead have gone out. Those ahead of a held one wait longer
   * than it, so the first that must still wait ends the look; it is looked at again when the socket drains or the
   * answers ahead of it are written.
   */
  private wakeHeld(): void {
    if (this.socket.destroyed) return;
    let first = true;
    for (const slot of this.slots) {
      if (slot.held === 'no') continue;
      if (slot.held === 'again') return;
      // Only the first held one can go: those after it wait for its answer.
      if (!first || this.mustWait(slot)) {
        if (this.socket.writableNeedDrain) this.waitDrain();
        return;
      }
      first = false;
      slot.held = 'again';
      this.runSlot(slot);
    }
  }

  private waitDrain(): void {
    if (this.awaitingDrain) return;
    this.awaitingDrain = true;
    this.socket.once('drain', this.onDrain);
  }

  private readonly onDrain = (): void => {
    this.awaitingDrain = false;
    this.pump();
  };

  private ready(slot: Slot, out: Out, status: number): void {
    slot.out = { ...out, status };
    if (out.size >= BATCHED_ANSWER_BYTES) this.batch.add(this);
    else this.flush();
  }

  /** Writes the answers that are ready, in order, and starts the requests waiting when the socket has room. */
  flush(): void {
    const socket = this.socket;
    while (this.slots.length > 0 && this.slots[0]!.out !== null) {
      const slot = this.slots.shift()!;
      const out = slot.out!;
      const aborted = socket.destroyed;
      if (!aborted) {
        this.counts.answered++;
        if (slot.request.get !== null) this.counts.answeredGets++;
        // A lent buffer comes back at once when the kernel took all of it. A large answer often waits in the stream
        // for part of it (a burst of catalog pages fills the socket's buffer): its buffer comes back when the rest has
        // gone, or the write failed, instead of being left to the collector while the next answer takes a new one. A
        // small answer seldom waits, and a callback for each would cost them all.
        if (out.lent !== null && out.bytes.length >= BATCHED_ANSWER_BYTES) {
          const giveBack = this.buffers.giveBackOnce(out.lent);
          socket.write(out.bytes, giveBack);
          if (socket.writableLength === 0) giveBack();
        } else if (out.pieces) {
          // Corked, the head and the pieces leave in one writev.
          socket.cork();
          socket.write(out.bytes);
          for (const piece of out.pieces) socket.write(piece);
          socket.uncork();
        } else {
          socket.write(out.bytes);
          if (out.lent !== null && socket.writableLength === 0) this.buffers.release(out.lent);
        }
      }
      this.lane.logger.request({
        method: slot.request.get?.method ?? 'POST',
        path: slot.request.get ? logPath(slot.request.get.path) : '/v1/query',
        operation: slot.operation,
        status: out.status,
        ms: Math.round((performance.now() - slot.started) * 100) / 100,
        ...(aborted && { aborted: true as const }),
      });
      if (out.close) {
        this.waiting.length = 0;
        this.waitingBytes = 0;
        this.slots.length = 0;
        this.buf = null;
        this.handingOver = false;
        socket.end();
        return;
      }
    }
    if (socket.destroyed) return;
    if (socket.writableNeedDrain) {
      this.waitDrain();
      return;
    }
    this.pump();
  }

  private pump(): void {
    this.wakeHeld();
    while (this.waiting.length > 0 && this.canStart(heldBy(this.waiting[0]!))) {
      const request = this.waiting.shift()!;
      this.waitingBytes -= heldBy(request);
      this.start(request);
    }
    this.resumeReading();
    if (this.slots.length > 0 || this.waiting.length > 0) return;
    if (this.handingOver) return this.handOverNow();
    if (this.ended) {
      this.endNow();
      return;
    }
  }

  /** Node's parser takes the connection once the answers under way here are written. */
  private handOver(): void {
    if (this.partialTimer) {
      clearTimeout(this.partialTimer);
      this.partialTimer = null;
    }
    if (this.handingOver || this.socket.destroyed) return;
    this.handingOver = true;
    this.socket.pause();
    if (this.slots.length === 0 && this.waiting.length === 0) this.handOverNow();
  }

  private handOverNow(): void {
    const socket = this.socket;
    socket.off('data', this.onData);
    socket.off('end', this.onEnd);
    socket.off('error', noop);
    socket.off('close', this.onClose);
    socket.off('drain', this.onDrain);
    this.forget(this);
    if (this.buf !== null) socket.unshift(this.buf);
    this.buf = null;
    this.counts.handedOver++;
    this.toNode(socket);
    // Node's parser reads what was given back once the socket flows again.
    process.nextTick(() => socket.resume());
  }

  /** The client is done sending: what it asked is answered, then the connection ends (Node's HTTP server does so too). */
  private readonly onEnd = (): void => {
    this.ended = true;
    if (this.buf !== null && !this.handingOver) {
      // A request the client will never finish. Its bytes cannot go to Node's parser now (a socket's end, once read,
      // is not read again), so the lane does what that parser does when told of the end: a 400 if nothing was
      // written on the connection yet, and the connection closed.
      if (this.partialTimer) {
        clearTimeout(this.partialTimer);
        this.partialTimer = null;
      }
      this.buf = null;
      this.cutShort = true;
    }
    if (this.slots.length === 0 && this.waiting.length === 0 && !this.handingOver) this.endNow();
  };

  /** Ends a connection whose client is done sending, once its answers are written. */
  private endNow(): void {
    if (this.cutShort && this.socket.bytesWritten === 0) this.socket.end(BAD_REQUEST);
    else this.socket.end();
  }

  /** A request came or is coming: the idle and stall clocks start again (two stores, no timer to re-arm per request). */
  private markBusy(): void {
    this.idleSince = -1;
    this.moved = -1;
  }

  /**
   * The lane's look at the connection, every `watchEveryMs`: closes it when it has been idle for `keepAliveMs` (as
   * Node closes a keep-alive connection), or when it is busy and no byte has moved either way for `stallMs` (a client
   * that stopped reading its answers, as http-server.ts closes it). Clocks kept by a look every so often rather than a
   * socket timeout re-armed between busy and idle on every request: that was 2% of a small answer's time.
   */
  watch(now: number, keepAliveMs: number, stallMs: number): void {
    const socket = this.socket;
    if (this.idle) {
      this.moved = -1;
      if (this.idleSince < 0) this.idleSince = now;
      else if (now - this.idleSince >= keepAliveMs) socket.destroy();
      return;
    }
    this.idleSince = -1;
    const moved = socket.bytesRead + socket.bytesWritten;
    if (moved !== this.moved) {
      this.moved = moved;
      this.movedAt = now;
    } else if (now - this.movedAt >= stallMs) socket.destroy();
  }

  private readonly onClose = (): void => {
    if (this.partialTimer) clearTimeout(this.partialTimer);
    this.waiting.length = 0;
    this.waitingBytes = 0;
    this.buf = null;
    this.forget(this);
  };

  /** Closes the connection when it has nothing in flight; true when it did. */
  closeIfIdle(): boolean {
    if (!this.idle) return false;
    this.socket.destroy();
    return true;
  }
}

function noop(): void {}

type Counts = { answered: number; answeredGets: number; handedOver: number; readPauses: number; peakHeldBytes: number; heldAnswers: number };

/** A copy of `bytes` in an ArrayBuffer of its own (not one of Node's shared pools, which a small copy would use). */
function own(bytes: Buffer): Buffer {
  const copy = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(copy);
  return copy;
}

/**
 * Puts the fast lane in front of Node's HTTP server: every connection the server accepts starts on the lane, and
 * Node's own connection handling (and any other 'connection' listener added before) runs only when the lane hands the
 * connection over.
 */
export function installFastLane(server: Server, lane: FastLane): FastLaneControl {
  const nodeListeners = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  const open = new Set<Connection>();
  const buffers = new AnswerBuffers();
  const run = lane.runner(buffers.allocate);
  const counts: Counts = { answered: 0, answeredGets: 0, handedOver: 0, readPauses: 0, peakHeldBytes: 0, heldAnswers: 0 };
  if (!(lane.bufferBytes >= MAX_HEAD_BYTES + lane.maxBodyBytes)) {
    throw new Error(`Expected \`pipelineBufferBytes\` to be at least ${MAX_HEAD_BYTES + lane.maxBodyBytes} (a whole request: its head and its largest body), got ${lane.bufferBytes}`);
  }
  const toNode = (socket: Socket) => {
    for (const listener of nodeListeners) listener.call(server, socket);
  };
  const batch = new WriteBatch();
  // Idle connections close after the keep-alive; a busy one on which nothing moved for two stall checks (config.ts) is
  // closed within the request timeout. The lane looks at every connection a quarter of the shorter of the two.
  const keepAliveMs = KEEP_ALIVE_MS;
  const checkMs = stallCheckMs(lane.requestTimeoutMs);
  const stallMs = 2 * checkMs;
  const watchEveryMs = Math.max(1, Math.floor(Math.min(keepAliveMs, checkMs) / 4));
  let watching: NodeJS.Timeout | null = null;
  const watch = () => {
    const now = performance.now();
    for (const c of open) c.watch(now, keepAliveMs, stallMs);
    if (open.size === 0 && watching) {
      clearInterval(watching);
      watching = null;
    }
  };
  server.on('connection', (socket: Socket) => {
    open.add(new Connection(socket, lane, run, buffers, counts, toNode, (c) => open.delete(c), batch));
    watching ??= setInterval(watch, watchEveryMs).unref();
  });
  return {
    closeIdle() {
      for (const c of open) if (c.closeIfIdle()) open.delete(c);
    },
    closeAll() {
      for (const c of open) c.socket.destroy();
      open.clear();
      if (watching) clearInterval(watching);
      watching = null;
    },
    get connections() {
      return open.size;
    },
    get answered() {
      return counts.answered;
    },
    get answeredGets() {
      return counts.answeredGets;
    },
    get handedOver() {
      return counts.handedOver;
    },
    get readPauses() {
      return counts.readPauses;
    },
    get peakHeldBytes() {
      return counts.peakHeldBytes;
    },
    get heldAnswers() {
      return counts.heldAnswers;
    },
  };
}
