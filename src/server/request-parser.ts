import { rememberFirst } from '../utils/remember.ts';

/**
 * The fast lane's request parser (fast-lane.ts): one request from the start of a connection's bytes, read exactly as
 * Node's parser (llhttp) reads it, or the word that it is Node's to read. It takes only the plainest shapes (a whole
 * `POST /v1/query HTTP/1.1` with a Host and a Content-Length within the body limit; a GET or HEAD of the lane's paths
 * with no body) and every header line Node would take in the same way; anything else, or anything read differently
 * by versions of Node, is 'node'. It touches no socket: test/server/request-parser.test.ts feeds it bytes and
 * compares its reading with llhttp's, case by case. A POST of the table's lane routes (`/mcp`) is read as /v1/query's.
 */

/** Node's limit on a request's head (`--max-http-header-size`): a longer head goes to Node, which answers 431. */
export const MAX_HEAD_BYTES = 16 * 1024;
const REQUEST_LINE = Buffer.from('POST /v1/query HTTP/1.1\r\n', 'latin1');
const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9a-z]+$/;
// Control characters other than tab are refused in a value by Node's parser: such a request is Node's to answer.
const BAD_VALUE = /[\x00-\x08\x0a-\x1f\x7f]/;
// Node's parser (llhttp) takes spaces and tabs before a Content-Length's digits, only spaces after them.
const CONTENT_LENGTH = /^[ \t]*([0-9]{1,15}) *$/;
const OWS = /^[ \t]+|[ \t]+$/g;


/**
 * A request read on the lane: a POST /v1/query with its body, or (`route` set) a request a route of the table answers:
 * a GET or HEAD of one of `getPaths` with no body, or a POST of one of `postPaths` with its body, its URL as received
 * and its header fields for the route's handler.
 */
export type LaneRequest = {
  body: Buffer;
  contentType: string | undefined;
  acceptEncoding: string | undefined;
  close: boolean;
  route: TableRequest | null;
};
export type TableRequest = { method: 'GET' | 'HEAD' | 'POST'; url: string; path: string; host: string; fields: readonly Field[] };

const NO_BODY = Buffer.alloc(0);
const GET_START = Buffer.from('GET /', 'latin1');
const HEAD_START = Buffer.from('HEAD /', 'latin1');
const LINE_END = Buffer.from('\r\n', 'latin1');
const HTTP_11 = ' HTTP/1.1';

/**
 * One request from the start of `buf`: the request and the bytes it took, 'more' when it is not all there yet, or
 * 'node' when it is not the lane's to answer. `getPaths`: the paths answered on the lane to a GET or HEAD;
 * `postPaths`: those answered to a POST (besides /v1/query), each as `POST <path> HTTP/1.1` exactly.
 */
export function parse(
  buf: Buffer,
  maxBodyBytes: number,
  getPaths: ReadonlySet<string> = NO_PATHS,
  postPaths: ReadonlySet<string> = NO_PATHS,
): { request: LaneRequest; used: number } | 'more' | 'node' {
  if (buf[0] !== 0x50 /* P */ && getPaths.size > 0) return parseGet(buf, getPaths);
  let line: Buffer = REQUEST_LINE;
  let path: string | null = null;
  if (postPaths.size > 0 && !startsAlike(buf, REQUEST_LINE)) {
    const other = postLines(postPaths).find(([l]) => startsAlike(buf, l));
    if (!other) return 'node';
    [line, path] = other;
  }
  const lineEnd = line.length;
  if (buf.length < lineEnd) return line.subarray(0, buf.length).equals(buf) ? 'more' : 'node';
  if (buf.compare(line, 0, lineEnd, 0, lineEnd) !== 0) return 'node';
  const headEnd = buf.indexOf(HEAD_END, lineEnd - 2);
  if (headEnd < 0) return buf.length > MAX_HEAD_BYTES ? 'node' : 'more';
  if (headEnd + 4 > MAX_HEAD_BYTES) return 'node';
  const head = readHead(buf, lineEnd, headEnd, path !== null);
  if (head === null || head.host === undefined || head.length < 0 || head.length > maxBodyBytes) return 'node';
  const length = head.length;
  const bodyStart = headEnd + 4;
  if (buf.length < bodyStart + length) return 'more';
  const route: TableRequest | null = path === null ? null : { method: 'POST', url: path, path, host: head.host, fields: head.fields! };
  return {
    request: { body: buf.subarray(bodyStart, bodyStart + length), contentType: head.contentType, acceptEncoding: head.acceptEncoding, close: head.close, route },
    used: bodyStart + length,
  };
}

/** Whether `buf` and `line` agree on the bytes both have (the request may still be arriving). */
function startsAlike(buf: Buffer, line: Buffer): boolean {
  const n = Math.min(buf.length, line.length);
  return buf.compare(line, 0, n, 0, n) === 0;
}

const postLinesOf = new WeakMap<ReadonlySet<string>, [Buffer, string][]>();
/** The request line of a POST to each of `paths`, made once per set. */
function postLines(paths: ReadonlySet<string>): [Buffer, string][] {
  let lines = postLinesOf.get(paths);
  if (!lines) postLinesOf.set(paths, (lines = [...paths].map((p) => [Buffer.from(`POST ${p} HTTP/1.1\r\n`, 'latin1'), p])));
  return lines;
}

export const NO_PATHS: ReadonlySet<string> = new Set();

/**
 * A GET or HEAD of one of `paths` with a query string or none: `METHOD /path[?query] HTTP/1.1`, the target of
 * printable ASCII but `#` (Node's parser takes each such byte as it is into the URL; the others, and a fragment, are
 * Node's to read), and no body (no Content-Length but 0, no Transfer-Encoding).
 */
function parseGet(buf: Buffer, paths: ReadonlySet<string>): { request: LaneRequest; used: number } | 'more' | 'node' {
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
  const route: TableRequest = { method: start === GET_START ? 'GET' : 'HEAD', url, path, host: head.host, fields: head.fields! };
  return { request: { body: NO_BODY, contentType: head.contentType, acceptEncoding: head.acceptEncoding, close: head.close, route }, used: headEnd + 4 };
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

