import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Duplex } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES } from '../../src/api/body.ts';
import { LANE_POST_ROUTES, LANE_ROUTES } from '../../src/api/routes.ts';
import { headerOf, parse } from '../../src/server/request-parser.ts';

/**
 * The fast lane's request parser against Node's own (llhttp, driven through node:http over an in-memory stream: no
 * socket, nothing listening), over the same bytes, case by case. Each case says how the request is read, and both
 * parsers must read it so:
 * - `request`: the lane takes it, and llhttp reads the same method, target, header values, body and keep-alive;
 * - `refused`: llhttp refuses it (Node answers 400), and the lane hands it to Node;
 * - `node`: llhttp reads a request the lane does not take (another shape), and the lane hands it to Node;
 * - `more`: the request is not all there; llhttp waits for the rest, and so does the lane;
 * - `varies`: Node versions read it differently (llhttp refuses it in one, reads it in another), so the lane hands it
 *   to Node, which answers it as the running version reads it.
 * A case changed to disagree with llhttp fails on llhttp's side, one changed to disagree with the lane on the lane's.
 * Add a case with a line in the table.
 */

type Reading =
  | { kind: 'request'; method: string; url: string; close: boolean; body: string; headers: Readonly<Record<string, string>> }
  | { kind: 'refused' }
  | { kind: 'node' }
  | { kind: 'varies' }
  | { kind: 'more' };

const META = JSON.stringify({ version: 1, operation: 'device-510k.meta', input: {} });
const JSON_TYPE = 'application/json';

/** A POST /v1/query with these header lines (a Content-Length for the body added unless one is given). */
function post(lines: readonly string[], body = META): string {
  const length = lines.some((l) => /^content-length/i.test(l)) ? [] : [`Content-Length: ${Buffer.byteLength(body)}`];
  return `POST /v1/query HTTP/1.1\r\n${[...lines, ...length].join('\r\n')}\r\n\r\n${body}`;
}

const TOOLS_LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
const MCP_ACCEPT = 'application/json, text/event-stream';
/** A POST /mcp with these header lines and a Content-Length for its body. */
const mcpPost = (lines: readonly string[], body = TOOLS_LIST) => `POST /mcp HTTP/1.1\r\n${[...lines, `Content-Length: ${Buffer.byteLength(body)}`].join('\r\n')}\r\n\r\n${body}`;

const get = (target: string, lines: readonly string[] = ['Host: 127.0.0.1'], method = 'GET') => `${method} ${target} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`;

const taken = (method: string, url: string, headers: Record<string, string>, { close = false, body = '' } = {}): Reading => ({ kind: 'request', method, url, close, body, headers });
const takenPost = (headers: Record<string, string>, close = false): Reading => taken('POST', '/v1/query', headers, { close, body: META });

const HOST = 'Host: 127.0.0.1';
const TYPE = `Content-Type: ${JSON_TYPE}`;
const OPENFDA = '/device/510k.json?search=product_code:LZG&limit=1';

const CASES: readonly [string, string, Reading][] = [
  // What the lane takes, read as llhttp reads it.
  ['a plain POST', post([HOST, TYPE]), takenPost({ 'content-type': JSON_TYPE })],
  ['a POST with its Content-Type in capitals and a charset', post([HOST, 'content-type: Application/JSON; charset=utf-8']), takenPost({ 'content-type': 'Application/JSON; charset=utf-8' })],
  ['Accept-Encoding twice, joined', post([HOST, TYPE, 'Accept-Encoding: gzip', 'Accept-Encoding: br']), takenPost({ 'accept-encoding': 'gzip, br' })],
  ['a Host with a tab before and a space after', post(['host:\t127.0.0.1 ', TYPE]), takenPost({ 'content-type': JSON_TYPE })],
  ['a value with no space after the colon', post([HOST, `Content-Type:${JSON_TYPE}`]), takenPost({ 'content-type': JSON_TYPE })],
  ['spaces and tabs before the Content-Length digits', post([HOST, TYPE, `Content-Length: \t ${META.length}`]), takenPost({ 'content-type': JSON_TYPE })],
  ['spaces after the Content-Length digits', post([HOST, TYPE, `Content-Length: ${META.length}   `]), takenPost({ 'content-type': JSON_TYPE })],
  ['a Content-Length with leading zeros', post([HOST, TYPE, `Content-Length: 000${META.length}`]), takenPost({ 'content-type': JSON_TYPE })],
  ['Connection: close', post([HOST, TYPE, 'Connection: close']), takenPost({}, true)],
  ['Connection: keep-alive', post([HOST, TYPE, 'Connection: keep-alive']), takenPost({}, false)],
  ['Connection: CLOSE in capitals', post([HOST, TYPE, 'Connection: CLOSE']), takenPost({}, true)],
  ['Proxy-Connection: close (Node closes)', post([HOST, TYPE, 'Proxy-Connection: close']), takenPost({}, true)],
  ['Connection: close followed by spaces and another token (Node closes)', post([HOST, TYPE, 'Connection: close , foo']), takenPost({}, true)],
  ['Connection: x close (Node keeps the connection)', post([HOST, TYPE, 'Connection: x close']), takenPost({}, false)],
  ['Connection: closed (no close token)', post([HOST, TYPE, 'Connection: closed']), takenPost({}, false)],
  ['an empty body', post([HOST, TYPE], ''), taken('POST', '/v1/query', {}, { body: '' })],
  ['a GET of an openFDA endpoint', get(OPENFDA), taken('GET', OPENFDA, { host: '127.0.0.1' })],
  ['a HEAD of an openFDA endpoint', get('/device/classification.json', [HOST], 'HEAD'), taken('HEAD', '/device/classification.json', { host: '127.0.0.1' })],
  ['a GET with Content-Length: 0', get(OPENFDA, [HOST, 'Content-Length: 0']), taken('GET', OPENFDA, { 'content-length': '0' })],
  ['a GET target with percent-escapes, quotes and brackets', get('/device/510k.json?search=a%20b+"c"&x=[1]|2'), taken('GET', '/device/510k.json?search=a%20b+"c"&x=[1]|2', {})],
  [
    'a GET whose headers Node joins or keeps once',
    get(OPENFDA, [HOST, 'Cookie: a=1', 'Cookie: b=2', 'User-Agent: one', 'User-Agent: two', 'Accept: text/html', 'Accept: application/json']),
    taken('GET', OPENFDA, { cookie: 'a=1; b=2', 'user-agent': 'one', accept: 'text/html, application/json' }),
  ],
  [
    'a GET whose values have spaces inside and tabs around',
    get(OPENFDA, [HOST, 'X-Any: a  b', 'X-Tab:\tv\t', 'X-Empty:', 'If-None-Match: "abc"']),
    taken('GET', OPENFDA, { 'x-any': 'a  b', 'x-tab': 'v', 'x-empty': '', 'if-none-match': '"abc"' }),
  ],
  ['a GET with Connection: close', get(OPENFDA, [HOST, 'Connection: close']), taken('GET', OPENFDA, { connection: 'close' }, { close: true })],
  ['a GET with a byte over 0x7f in a header value', get(OPENFDA, [HOST, 'X-Latin: caf\u00e9']), taken('GET', OPENFDA, { 'x-latin': 'caf\u00e9' })],
  [
    'a POST to /mcp, its headers kept for the route',
    mcpPost([HOST, TYPE, `Accept: ${MCP_ACCEPT}`, 'MCP-Protocol-Version: 2025-06-18']),
    taken('POST', '/mcp', { accept: MCP_ACCEPT, 'mcp-protocol-version': '2025-06-18', 'content-type': JSON_TYPE }, { body: TOOLS_LIST }),
  ],
  ['a POST to /mcp with Connection: close', mcpPost([HOST, TYPE, 'Connection: close']), taken('POST', '/mcp', { connection: 'close' }, { close: true, body: TOOLS_LIST })],

  // What Node refuses (400): the lane hands it to Node, which answers.
  ['a tab after the Content-Length digits (read differently by Node versions)', post([HOST, TYPE, `Content-Length: ${META.length}\t`]), { kind: 'varies' }],
  ['a no-break space after the Content-Length digits', post([HOST, TYPE, `Content-Length: ${META.length}\u00a0`]), { kind: 'refused' }],
  ['Content-Length given twice', post([HOST, TYPE, 'Content-Length: 2', 'Content-Length: 3'], '{}'), { kind: 'refused' }],
  ['Content-Length given twice, the same', post([HOST, TYPE, `Content-Length: ${META.length}`, `Content-Length: ${META.length}`]), { kind: 'refused' }],
  ['a Content-Length that is not digits', post([HOST, TYPE, 'Content-Length: 1e2']), { kind: 'refused' }],
  ['a space in a header name', post([HOST, TYPE, 'Bad Header: x']), { kind: 'refused' }],
  ['a space before the colon', post([HOST, TYPE, 'X-Any : x']), { kind: 'refused' }],
  ['a control character in a value', post([HOST, TYPE, 'X-Ctl: a\u0001b']), { kind: 'refused' }],
  ['a line with no colon', post([HOST, TYPE, 'NoColon']), { kind: 'refused' }],
  ['a folded header line', post([HOST, TYPE, 'X-Folded: a', ' b']), { kind: 'refused' }],
  ['no Host', post([TYPE]), { kind: 'refused' }],
  ['a bare LF ending a header line', `POST /v1/query HTTP/1.1\r\nHost: x\nContent-Length: 2\r\n\r\n{}`, { kind: 'refused' }],

  // What Node reads and the lane leaves to it: other shapes, and header forms Node versions read differently.
  ['a chunked body', `POST /v1/query HTTP/1.1\r\n${HOST}\r\n${TYPE}\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`, { kind: 'node' }],
  ['Expect: 100-continue', post([HOST, TYPE, 'Expect: 100-continue']), { kind: 'node' }],
  ['HTTP/1.0', `POST /v1/query HTTP/1.0\r\n${HOST}\r\nContent-Length: 2\r\n\r\n{}`, { kind: 'node' }],
  ['a body over the limit', post([HOST, TYPE], 'x'.repeat(MAX_BODY_BYTES + 1)), { kind: 'node' }],
  ['two Hosts', post([HOST, 'Host: b', TYPE]), { kind: 'node' }],
  ['two Content-Types', post([HOST, TYPE, TYPE]), { kind: 'node' }],
  ['a tab after Connection: close (read differently by Node versions)', post([HOST, TYPE, 'Connection: close\t']), { kind: 'node' }],
  ['a no-break space after Connection: close', post([HOST, TYPE, 'Connection: close\u00a0']), { kind: 'node' }],
  ['a tab between Connection tokens', post([HOST, TYPE, 'Connection: foo,\tclose']), { kind: 'node' }],
  ['a query string on /v1/query', `POST /v1/query?x HTTP/1.1\r\n${HOST}\r\nContent-Length: 2\r\n\r\n{}`, { kind: 'node' }],
  ['another path', get('/healthz'), { kind: 'node' }],
  ['a path next to an openFDA endpoint', get('/device/510k.jsonx'), { kind: 'node' }],
  ['an openFDA endpoint in other capitals', get('/Device/510k.json'), { kind: 'node' }],
  ['a fragment in a GET target', get('/device/510k.json?limit=1#x'), { kind: 'node' }],
  ['a GET with a body', get(OPENFDA, [HOST, 'Content-Length: 2']) + '{}', { kind: 'node' }],
  ['a GET with a chunked body', get(OPENFDA, [HOST, 'Transfer-Encoding: chunked']) + '0\r\n\r\n', { kind: 'node' }],
  ['a GET with two Hosts', get(OPENFDA, [HOST, 'Host: b']), { kind: 'node' }],
  ['a GET of HTTP/1.0', `GET ${OPENFDA} HTTP/1.0\r\n${HOST}\r\n\r\n`, { kind: 'node' }],
  ['a PUT of /v1/query', `PUT /v1/query HTTP/1.1\r\n${HOST}\r\nContent-Length: 2\r\n\r\n{}`, { kind: 'node' }],
  ['a POST to /mcp with a query string', `POST /mcp?x HTTP/1.1\r\n${HOST}\r\nContent-Length: 2\r\n\r\n{}`, { kind: 'node' }],
  ['a POST to a path next to /mcp', `POST /mcpx HTTP/1.1\r\n${HOST}\r\nContent-Length: 2\r\n\r\n{}`, { kind: 'node' }],
  ['a GET of /mcp', get('/mcp'), { kind: 'node' }],
  ['a POST to /mcp with a chunked body', `POST /mcp HTTP/1.1\r\n${HOST}\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`, { kind: 'node' }],
  ['a POST to /mcp with no Host', mcpPost([TYPE]), { kind: 'refused' }],

  // Not all there yet.
  ['a request line cut short', 'POST /v1/qu', { kind: 'more' }],
  ['a request line to /mcp cut short', 'POST /mc', { kind: 'more' }],
  ['a POST to /mcp with its body cut short', mcpPost([HOST, TYPE]).slice(0, -5), { kind: 'more' }],
  ['a head cut short', `POST /v1/query HTTP/1.1\r\n${HOST}\r\nContent-Ty`, { kind: 'more' }],
  ['a body cut short', post([HOST, TYPE]).slice(0, -10), { kind: 'more' }],
  ['a GET head with no blank line yet', `GET ${OPENFDA} HTTP/1.1\r\n${HOST}\r\n`, { kind: 'more' }],
];

const LANE_PATHS = new Set(LANE_ROUTES.keys());
const LANE_POST_PATHS = new Set(LANE_POST_ROUTES.keys());

/** How the lane's parser reads `text`. */
function laneReads(text: string, expected: Reading): Reading {
  const bytes = Buffer.from(text, 'latin1');
  const parsed = parse(bytes, MAX_BODY_BYTES, LANE_PATHS, LANE_POST_PATHS);
  if (parsed === 'more') return { kind: 'more' };
  // The lane cannot tell a request Node refuses from one of another shape: both are Node's to read.
  if (parsed === 'node') return expected.kind === 'refused' || expected.kind === 'varies' ? expected : { kind: 'node' };
  const { request, used } = parsed;
  expect(used).toBe(bytes.length);
  const names = expected.kind === 'request' ? Object.keys(expected.headers) : [];
  const headers: Record<string, string> = {};
  for (const name of names) {
    const value = request.route
      ? headerOf(request.route.fields, name)
      : name === 'content-type'
        ? request.contentType
        : name === 'accept-encoding'
          ? request.acceptEncoding
          : `(a POST on the lane keeps no ${name})`;
    if (value !== undefined) headers[name] = value;
  }
  return {
    kind: 'request',
    method: request.route?.method ?? 'POST',
    url: request.route?.url ?? '/v1/query',
    close: request.close,
    body: request.body.toString('latin1'),
    headers,
  };
}

/** A stream standing in for a socket: what is written to it is kept, and it is read only what `feed` pushes. */
class MemorySocket extends Duplex {
  readonly written: Buffer[] = [];
  remoteAddress = '127.0.0.1';
  override _read(): void {}
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.written.push(chunk);
    done();
  }
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
  setTimeout(): this {
    return this;
  }
}

/** Turns of the event loop, enough for node:http to parse what was pushed and emit what it read. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * How llhttp, through node:http's server on an in-memory stream, reads `text`: a request (its head and all of its
 * body read, with the values of the headers `names`), refused (Node wrote a 4xx), or more (still waiting).
 */
async function llhttpReads(text: string, names: readonly string[]): Promise<Reading> {
  const server = createServer();
  const socket = new MemorySocket();
  let seen: { req: IncomingMessage; res: ServerResponse; body: Buffer[]; ended: boolean } | null = null;
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (seen) return;
    const state = { req, res, body: [] as Buffer[], ended: false };
    seen = state;
    req.on('data', (c: Buffer) => state.body.push(c));
    req.on('end', () => (state.ended = true));
  });
  // Without a 'checkContinue' listener Node sends the 100 itself and emits the request.
  server.emit('connection', socket);
  socket.push(Buffer.from(text, 'latin1'));
  await settle();
  socket.destroy();
  const out = Buffer.concat(socket.written).toString('latin1');
  const state = seen as { req: IncomingMessage; res: ServerResponse; body: Buffer[]; ended: boolean } | null;
  if (state === null) return /^HTTP\/1\.1 4\d\d /.test(out) ? { kind: 'refused' } : { kind: 'more' };
  if (!state.ended) return { kind: 'more' };
  const { req, res } = state;
  const headers: Record<string, string> = {};
  for (const name of names) {
    const value = req.headers[name];
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return { kind: 'request', method: req.method ?? '', url: req.url ?? '', close: !res.shouldKeepAlive, body: Buffer.concat(state.body).toString('latin1'), headers };
}

const headerNames = (reading: Reading) => (reading.kind === 'request' ? Object.keys(reading.headers) : []);

/** Whether llhttp's reading is the case's: the same request, the same refusal or wait, or (`node`) any whole request. */
function llhttpAgrees(theirs: Reading, expected: Reading): boolean {
  if (expected.kind === 'node') return theirs.kind === 'request';
  if (expected.kind === 'varies') return theirs.kind === 'request' || theirs.kind === 'refused';
  return JSON.stringify(theirs) === JSON.stringify(expected);
}

describe("the fast lane's request parser reads requests as llhttp does", () => {
  it.each(CASES)('%s', async (_name, text, expected) => {
    const theirs = await llhttpReads(text, headerNames(expected));
    const anyOf = expected.kind === 'node' || expected.kind === 'varies';
    expect({ llhttp: theirs, agrees: llhttpAgrees(theirs, expected) }).toEqual({ llhttp: anyOf ? theirs : expected, agrees: true });
    expect(laneReads(text, expected)).toEqual(expected);
  });

  it('tells a case that disagrees with llhttp (so the table can fail)', async () => {
    const wrong: [string, Reading][] = [
      [post([HOST, TYPE, 'Connection: x close']), takenPost({}, true)],
      [post([HOST, TYPE, `Content-Length: ${META.length}\u00a0`]), takenPost({ 'content-type': JSON_TYPE })],
      [post([HOST, TYPE]).slice(0, -1), { kind: 'varies' }],
      [get(OPENFDA, [HOST, 'Cookie: a=1', 'Cookie: b=2']), taken('GET', OPENFDA, { cookie: 'a=1, b=2' })],
      [get('/healthz'), { kind: 'refused' }],
      [post([HOST, TYPE]).slice(0, -1), { kind: 'node' }],
    ];
    for (const [text, reading] of wrong) expect(llhttpAgrees(await llhttpReads(text, headerNames(reading)), reading)).toBe(false);
  });
});
