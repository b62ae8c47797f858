import { connect, type Socket } from 'node:net';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { until } from '../helpers/until.ts';
import { allRecords, envelope, startServer, type Running } from './helpers.ts';
import { BATCHED_ANSWER_BYTES, AnswerBuffers } from '../../src/server/fast-lane.ts';
import { OPERATIONS } from '../../src/contract/index.ts';
import { JsonBytes, type Operation } from '../../src/operations/index.ts';

/**
 * The fast lane (src/server/fast-lane.ts) answers POST /v1/query from the socket's bytes and hands everything else to
 * Node's HTTP server. Its answers must be the bytes Node's path sends, and a connection handed over must go on exactly
 * as Node would have served it from the first byte the lane did not answer.
 */
let snapshotPath: string;
let lane: Running;
let node: Running;
let kNumbers: string[];
const NOW = new Date('2026-11-25T00:00:00.000Z');
/** The generated tests' seed and size: fixed, so that a failure replays; FAST_LANE_SEED and FAST_LANE_RUNS explore. */
const SEED = Number(process.env.FAST_LANE_SEED ?? 510);
const RUNS = Number(process.env.FAST_LANE_RUNS ?? 300);

beforeAll(async () => {
  snapshotPath = await buildFixtureSnapshot();
  kNumbers = (await allRecords(snapshotPath)).map((r) => r.kNumber);
  lane = await startServer({ snapshotPath, now: () => NOW });
  node = await startServer({ snapshotPath, now: () => NOW, fastLane: false });
});
afterAll(async () => {
  await lane?.close();
  await node?.close();
});

type Reply = { status: number; head: string[]; body: Buffer };

const post = (body: string, extra = '') =>
  `POST /v1/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
const META = JSON.stringify(envelope('device-510k.meta', {}));

/**
 * Query strings of openFDA's endpoints: answers of 200 (some over 1 KiB, so compressed as the client accepts; one
 * with a Link to its next page), 404 and 400 on either endpoint.
 */
const OPENFDA_QUERIES = [
  '',
  '?search=device_name:catheter&limit=2',
  '?search=product_code:DTB&limit=3',
  '?search=device_name:catheter&limit=1&skip=1',
  '?count=decision_date',
  '?count=product_code&limit=3',
  '?count=device_class',
  '?search=device_name:zzzznotaword',
  '?limit=x',
  '?bogus=1',
  '?search=decision_date:[20000101+TO+20201231]&limit=2',
  '?search=device_name:%22heart%20valve%22',
  '?search=device_name:"catheter"&limit=1',
  '?search=device_class:3&limit=2',
  '?search=(product_code:DTB+OR+product_code:DQY)&limit=5&api_key=x',
  '?search=device_name:catheter&count=decision_date',
];
const get = (method: 'GET' | 'HEAD', target: string, extra = '') => `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}\r\n`;

/**
 * Reads HTTP/1.1 answers with a Content-Length from a byte stream, as many as are whole. `headOnly(i)`: whether the
 * i-th answer is to a HEAD (a head alone, whatever its Content-Length says).
 */
function replies(bytes: Buffer, headOnly: (i: number) => boolean = () => false): Reply[] {
  const out: Reply[] = [];
  let at = 0;
  for (;;) {
    const end = bytes.indexOf('\r\n\r\n', at);
    if (end < 0) break;
    const lines = bytes.toString('latin1', at, end).split('\r\n');
    const status = Number(lines[0]!.split(' ')[1]);
    const lengthLine = lines.find((l) => l.toLowerCase().startsWith('content-length:'));
    const length = lengthLine && !headOnly(out.length) ? Number(lengthLine.split(':')[1]) : 0;
    if (bytes.length < end + 4 + length) break;
    out.push({ status, head: lines, body: bytes.subarray(end + 4, end + 4 + length) });
    at = end + 4 + length;
  }
  return out;
}

/** A connection to the server at `url`, its bytes collected as they come; `closed` once it has ended. */
async function connectCollecting(url: string): Promise<{ socket: Socket; chunks: Buffer[]; closed: () => boolean; ended: Promise<void> }> {
  const socket: Socket = connect(Number(new URL(url).port), '127.0.0.1');
  const chunks: Buffer[] = [];
  let closed = false;
  socket.on('data', (c: Buffer) => chunks.push(c));
  socket.on('error', () => {});
  const ended = new Promise<void>((resolve) =>
    socket.on('close', () => {
      closed = true;
      resolve();
    }),
  );
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return { socket, chunks, closed: () => closed, ended };
}

/**
 * Writes `pieces` (with `gapMs` between them) on one connection and collects `count` answers, or what came before it
 * closed, or before `giveUpMs`.
 */
async function exchange(
  url: string,
  pieces: string[],
  count: number,
  gapMs = 0,
  giveUpMs = 10_000,
  headOnly?: (i: number) => boolean,
): Promise<{ replies: Reply[]; closed: boolean }> {
  const { socket, chunks, closed, ended } = await connectCollecting(url);
  const done = new Promise<void>((resolve) => {
    void ended.then(resolve);
    socket.on('data', () => {
      if (replies(Buffer.concat(chunks), headOnly).length >= count) resolve();
    });
  });
  for (const [i, piece] of pieces.entries()) {
    if (i > 0 && gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
    socket.write(Buffer.from(piece, 'latin1'));
  }
  await Promise.race([done, new Promise((r) => setTimeout(r, giveUpMs))]);
  socket.destroy();
  return { replies: replies(Buffer.concat(chunks), headOnly), closed: closed() };
}

/** The head without the Date line, which differs from one second to the next, and the body's every byte. */
const comparable = (r: Reply) => ({ status: r.status, head: r.head.filter((l) => !l.startsWith('Date: ')), body: r.body.toString('latin1') });

/**
 * A request any server still reading the connection answers, and then closes the connection: sent after the requests
 * under test, whether it is answered tells whether the connection was kept.
 */
const lastRequest = () => post(JSON.stringify(envelope('device-510k.detail', { id: kNumbers[1] })), 'Connection: close\r\n');

/**
 * Node's own 400 for a request it cannot parse, written only when nothing else has been written on the connection
 * yet: it then drops the answers still being made for the requests before that one.
 */
const bare400 = (r: Reply) => r.status === 400 && r.body.length === 0 && r.head.length === 2;

function jsonOrNull(body: Buffer): { data?: { record?: { kNumber?: string } } } | null {
  try {
    return JSON.parse(body.toString('utf8') || 'null');
  } catch {
    return null;
  }
}

function outcome(e: { replies: Reply[] }) {
  const all = e.replies.map(comparable);
  const kept = e.replies.some((r) => r.head.includes('Connection: close') && jsonOrNull(r.body)?.data?.record?.kNumber === kNumbers[1]);
  const last400 = e.replies.length > 0 && bare400(e.replies[e.replies.length - 1]!);
  return { all, kept, answers: last400 ? all.slice(0, -1) : all };
}

/** Sends the same pieces to the lane and to Node alone (until each closes): the same answers and the same fate. */
async function expectSameFate(pieces: string[], context: Record<string, unknown>, headOnly?: (i: number) => boolean): Promise<void> {
  const [ours, theirs] = await Promise.all([
    exchange(lane.url, pieces, Number.POSITIVE_INFINITY, 1, 10_000, headOnly),
    exchange(node.url, pieces, Number.POSITIVE_INFINITY, 1, 10_000, headOnly),
  ]);
  const a = outcome(ours);
  const b = outcome(theirs);
  // The connection's fate must be the same: kept to the last request on both, or ended before it on both.
  expect({ ...context, kept: a.kept }).toEqual({ ...context, kept: b.kept });
  if (a.kept) {
    expect({ ...context, replies: a.all }).toEqual({ ...context, replies: b.all });
    return;
  }
  // Ended early: the answers up to where it ended agree, allowing for the ones Node drops with its own 400.
  const shorter = a.answers.length <= b.answers.length ? a.answers : b.answers;
  const longer = shorter === a.answers ? b.answers : a.answers;
  expect({ ...context, replies: shorter }).toEqual({ ...context, replies: longer.slice(0, shorter.length) });
}

describe('the fast lane', () => {
  it('answers every record, code and error exactly as Node\'s HTTP path does, headers included', async () => {
    const bodies = [
      META,
      ...kNumbers.map((id) => JSON.stringify(envelope('device-510k.detail', { id }))),
      JSON.stringify(envelope('device-510k.detail', { id: 'K000000' })),
      JSON.stringify(envelope('device-510k.catalog', { kind: 'clearance', limit: 500, cursor: null })),
      JSON.stringify(envelope('device-510k.search', { query: 'catheter', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10 })),
      '{"version":1,',
      JSON.stringify({ version: 2, operation: 'device-510k.meta', input: {} }),
      JSON.stringify(envelope('device-510k.nothing', {})),
    ];
    const before = lane.app.fastLane!.answered;
    const ours: Reply[] = [];
    const theirs: Reply[] = [];
    // Pipelined in batches within the bound of requests a connection may have waiting.
    for (let i = 0; i < bodies.length; i += 30) {
      const batch = bodies.slice(i, i + 30);
      const request = batch.map((b) => post(b)).join('');
      const [a, b] = await Promise.all([exchange(lane.url, [request], batch.length), exchange(node.url, [request], batch.length)]);
      ours.push(...a.replies);
      theirs.push(...b.replies);
    }
    expect(ours).toHaveLength(bodies.length);
    expect(ours.map(comparable)).toEqual(theirs.map(comparable));
    expect(new Set(ours.map((r) => r.status))).toEqual(new Set([200, 404, 400]));
    expect(lane.app.fastLane!.answered - before).toBe(bodies.length);
    expect(node.app.fastLane).toBeNull();
  });

  it('compresses what Node compresses, with the same headers', async () => {
    const body = JSON.stringify(envelope('device-510k.catalog', { kind: 'clearance', limit: 50, cursor: null }));
    for (const encoding of ['br', 'gzip', 'gzip;q=0.5, br;q=0', 'identity']) {
      const request = post(body, `Accept-Encoding: ${encoding}\r\n`);
      const [ours, theirs] = await Promise.all([exchange(lane.url, [request], 1), exchange(node.url, [request], 1)]);
      const [a, b] = [ours.replies[0]!, theirs.replies[0]!];
      expect(a.head.filter((l) => !l.startsWith('Date: ') && !l.startsWith('Content-Length: '))).toEqual(
        b.head.filter((l) => !l.startsWith('Date: ') && !l.startsWith('Content-Length: ')),
      );
      const plain = (r: Reply) => {
        const coding = r.head.find((l) => l.startsWith('Content-Encoding: '))?.slice(18);
        return coding === 'br' ? brotliDecompressSync(r.body) : coding === 'gzip' ? gunzipSync(r.body) : r.body;
      };
      expect(plain(a).toString('utf8')).toBe(plain(b).toString('utf8'));
    }
  });

  it('answers GET and HEAD of the openFDA endpoints itself, byte for byte as Node\'s route does, pipelined with POSTs', async () => {
    const before = { answered: lane.app.fastLane!.answered, gets: lane.app.fastLane!.answeredGets, handed: lane.app.fastLane!.handedOver };
    const requests: { text: string; head: boolean }[] = [];
    for (const path of ['/device/510k.json', '/device/classification.json']) {
      for (const query of OPENFDA_QUERIES) {
        for (const encoding of ['', 'Accept-Encoding: gzip\r\n', 'Accept-Encoding: br\r\n', 'Accept-Encoding: br;q=0.5, gzip;q=0.4\r\n']) {
          requests.push({ text: get('GET', path + query, encoding), head: false });
          requests.push({ text: get('HEAD', path + query, `${encoding}If-None-Match: *\r\n`), head: true });
        }
      }
      requests.push({ text: post(META), head: false });
    }
    // A Host that names the origin of the Link header, and one that does not (links then name localhost).
    requests.push({ text: `GET /device/510k.json?search=device_name:catheter&limit=1 HTTP/1.1\r\nHost: example.org:8080\r\n\r\n`, head: false });
    requests.push({ text: `GET /device/510k.json?search=device_name:catheter&limit=1 HTTP/1.1\r\nHost: ex ample\r\n\r\n`, head: false });
    const ours: Reply[] = [];
    const theirs: Reply[] = [];
    // Pipelined in batches within the bound of requests a connection may have waiting.
    for (let i = 0; i < requests.length; i += 30) {
      const batch = requests.slice(i, i + 30);
      const text = batch.map((r) => r.text).join('');
      const headOnly = (k: number) => batch[k]?.head ?? false;
      const [a, b] = await Promise.all([exchange(lane.url, [text], batch.length, 0, 10_000, headOnly), exchange(node.url, [text], batch.length, 0, 10_000, headOnly)]);
      ours.push(...a.replies);
      theirs.push(...b.replies);
    }
    expect(theirs).toHaveLength(requests.length);
    expect(ours.map(comparable)).toEqual(theirs.map(comparable));
    // What the comparison covered: every status, every coding, Links, and HEADs with no body.
    const heads = ours.map((r) => r.head.join('\n'));
    expect(new Set(ours.map((r) => r.status))).toEqual(new Set([200, 400, 404]));
    for (const want of ['Content-Encoding: gzip', 'Content-Encoding: br', 'Link: <http://example.org:8080/device/510k.json?', 'Link: <http://localhost/device/510k.json?']) {
      expect(heads.some((h) => h.includes(want))).toBe(true);
    }
    // Every one answered on the lane, none handed to Node.
    expect(lane.app.fastLane!.answered - before.answered).toBe(requests.length);
    expect(lane.app.fastLane!.answeredGets - before.gets).toBe(requests.length - 2);
    expect(lane.app.fastLane!.handedOver - before.handed).toBe(0);
  });

  it('answers POST /mcp itself, byte for byte as Node\'s route does, pipelined with /v1/query', async () => {
    const mcp = (body: string, extra = 'Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\n') =>
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const call = (id: number, name: string, args: object) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
    const requests = [
      mcp(call(1, 'get_clearance', { id: kNumbers[0] })),
      mcp(call(1, 'get_clearance', { id: 'K000000' })),
      mcp(call(2, 'search_clearances', { query: 'catheter', pageSize: 5 }), 'Accept: application/json, text/event-stream\r\nAccept-Encoding: gzip\r\n'),
      mcp(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }), 'Accept: application/json, text/event-stream\r\nAccept-Encoding: br\r\n'),
      mcp(JSON.stringify([JSON.parse(call(4, 'get_classification', { productCode: 'DXY' })), JSON.parse(call(5, 'count_by', { field: 'decisionYear' }))])),
      mcp(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })),
      mcp('{"jsonrpc":'),
      mcp(JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'tools/list' }), 'Accept: application/json\r\n'),
      post(META),
    ];
    const before = { answered: lane.app.fastLane!.answered, handed: lane.app.fastLane!.handedOver };
    const text = requests.join('');
    const [ours, theirs] = await Promise.all([exchange(lane.url, [text], requests.length), exchange(node.url, [text], requests.length)]);
    expect(theirs.replies).toHaveLength(requests.length);
    expect(ours.replies.map(comparable)).toEqual(theirs.replies.map(comparable));
    // What the comparison covered: answers, a tool error, a 202, the protocol's errors, and compressed answers.
    expect(ours.replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 202, 400, 406, 200]);
    const heads = ours.replies.map((r) => r.head.join('\n'));
    for (const want of ['Content-Encoding: gzip', 'Content-Encoding: br']) expect(heads.some((h) => h.includes(want))).toBe(true);
    expect(ours.replies[1]!.body.toString('latin1')).toContain('record_not_found');
    expect(lane.app.fastLane!.answered - before.answered).toBe(requests.length);
    expect(lane.app.fastLane!.handedOver - before.handed).toBe(0);
  });

  it('answers a GET and a POST cut at every byte boundary as Node does', async () => {
    const stream = get('GET', '/device/510k.json?search=device_name:catheter&limit=1&skip=1', 'Accept-Encoding: gzip\r\n') + post(META) + get('HEAD', '/device/510k.json?count=decision_date') + lastRequest();
    const gets = lane.app.fastLane!.answeredGets;
    for (let cut = 1; cut < stream.length; cut++) {
      await expectSameFate([stream.slice(0, cut), stream.slice(cut)], { cut }, (i) => i === 2);
    }
    // The lane answered the GETs (a cut whose rest came later than the lane waits for went to Node, which is as good).
    expect(lane.app.fastLane!.answeredGets - gets).toBeGreaterThan(0);
  }, 120_000);

  it('logs a GET answered on it as Node logs it', async () => {
    const before = lane.logger.requests.length;
    await exchange(lane.url, [get('GET', '/device/510k.json?search=device_name:catheter') + get('HEAD', '/device/classification.json?limit=x')], 2, 0, 10_000, (i) => i === 1);
    const lines = lane.logger.requests.slice(before);
    expect(lines.map((l) => ({ method: l.method, path: l.path, operation: l.operation, status: l.status }))).toEqual([
      { method: 'GET', path: '/device/510k.json', operation: null, status: 200 },
      { method: 'HEAD', path: '/device/classification.json', operation: null, status: 400 },
    ]);
  });

  it('hands a connection to Node at the first request that is not its own, after answering those before it in order', async () => {
    const handed = lane.app.fastLane!.handedOver;
    const answered = lane.app.fastLane!.answered;
    const detail = JSON.stringify(envelope('device-510k.detail', { id: kNumbers[0] }));
    const request = [post(META), post(detail), 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', post(detail), 'OPTIONS /v1/query HTTP/1.1\r\nHost: x\r\n\r\n'].join('');
    const { replies: got } = await exchange(lane.url, [request], 5);
    expect(got.map((r) => r.status)).toEqual([200, 200, 200, 200, 204]);
    expect(JSON.parse(got[0]!.body.toString()).operation).toBe('device-510k.meta');
    expect(JSON.parse(got[1]!.body.toString()).data.record.kNumber).toBe(kNumbers[0]);
    expect(JSON.parse(got[2]!.body.toString()).status).toBe('ok');
    expect(JSON.parse(got[3]!.body.toString()).data.record.kNumber).toBe(kNumbers[0]);
    expect(lane.app.fastLane!.answered - answered).toBe(2);
    expect(lane.app.fastLane!.handedOver - handed).toBe(1);
  });

  it('leaves to Node what Node must decide: chunked bodies, 100-continue, bad headers, too large, no Host, HTTP/1.0', async () => {
    const chunked = `POST /v1/query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${META.length.toString(16)}\r\n${META}\r\n0\r\n\r\n`;
    const cases: [string, number][] = [
      [chunked, 200],
      [post(META, 'Expect: 100-continue\r\n'), 100],
      [post(META, 'Bad Header: x\r\n'), 400],
      [post(META, 'X-Ctl: a\u0001b\r\n'), 400],
      [`POST /v1/query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${META.length}\u00a0\r\n\r\n${META}`, 400],
      [`POST /v1/query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${200 * 1024}\r\n\r\n`, 413],
      [`POST /v1/query HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}`, 400],
      [`POST /v1/query HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: ${META.length}\r\n\r\n${META}`, 400],
      [`POST /v1/query HTTP/1.0\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${META.length}\r\n\r\n${META}`, 200],
      [`GET /v1/query HTTP/1.1\r\nHost: x\r\n\r\n`, 405],
    ];
    for (const [request, status] of cases) {
      const handed = lane.app.fastLane!.handedOver;
      const [ours, theirs] = await Promise.all([exchange(lane.url, [request], 1), exchange(node.url, [request], 1)]);
      expect({ request, status: ours.replies[0]?.status }).toEqual({ request, status });
      expect(ours.replies.map(comparable)).toEqual(theirs.replies.map(comparable));
      expect(lane.app.fastLane!.handedOver - handed).toBe(1);
    }
  });

  it('waits a moment for a request cut between two writes, and hands a slower one to Node, which answers it', async () => {
    // The moment is the lane's setTimeout, faked here: the rest of the request comes before it ends, or after it has
    // ended (the clock moved on by hand), whatever the machine's load. Sockets and every other timer stay real.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const request = post(META);
      const cut = request.length - 10;
      const cutBetweenTwoWrites = async (late: boolean) => {
        const socket = connect(Number(new URL(lane.url).port), '127.0.0.1');
        const chunks: Buffer[] = [];
        socket.on('data', (c: Buffer) => chunks.push(c));
        socket.on('error', () => {});
        await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
        const timers = vi.getTimerCount();
        socket.write(request.slice(0, cut));
        // The lane has read the first part and started its moment.
        await until(() => vi.getTimerCount() > timers, 'the lane to wait for the rest');
        if (late) vi.advanceTimersByTime(60_000);
        socket.write(request.slice(cut) + (late ? request : ''));
        const count = late ? 2 : 1;
        await until(() => replies(Buffer.concat(chunks)).length >= count, `${count} answers`);
        socket.destroy();
        return replies(Buffer.concat(chunks)).map((r) => r.status);
      };
      const answered = lane.app.fastLane!.answered;
      const handed = lane.app.fastLane!.handedOver;
      expect(await cutBetweenTwoWrites(false)).toEqual([200]);
      expect(lane.app.fastLane!.answered - answered).toBe(1);
      expect(lane.app.fastLane!.handedOver - handed).toBe(0);
      expect(await cutBetweenTwoWrites(true)).toEqual([200, 200]);
      expect(lane.app.fastLane!.handedOver - handed).toBe(1);
      expect(lane.app.fastLane!.answered - answered).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('closes the connection after an answer to a request that asked for it, and ignores what follows', async () => {
    const { replies: got, closed } = await exchange(lane.url, [post(META, 'Connection: close\r\n') + post(META)], 2);
    expect(got.map((r) => r.status)).toEqual([200]);
    expect(got[0]!.head).toContain('Connection: close');
    expect(closed).toBe(true);
  });

  it('answers the requests of a client that half-closes after sending them, then closes', async () => {
    const socket = connect(Number(new URL(lane.url).port), '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.end(post(META) + post(META));
    await closed;
    expect(replies(Buffer.concat(chunks)).map((r) => r.status)).toEqual([200, 200]);
  });

  it.each([
    ['a head cut short', 'POST /v1/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty'],
    ['a request line cut short', 'POST /v1/qu'],
    ['a body cut short', post(META).slice(0, -10)],
  ])('answers %s followed by the client\'s FIN as Node does (400, then closed)', async (_name, partial) => {
    const send = async (url: string) => {
      const socket = connect(Number(new URL(url).port), '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('error', () => {});
      const closed = new Promise<boolean>((resolve) => socket.on('close', () => resolve(true)));
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      socket.end(partial);
      const ended = await Promise.race([closed, new Promise<boolean>((r) => setTimeout(() => r(false), 10_000))]);
      socket.destroy();
      return { replies: replies(Buffer.concat(chunks)).map(comparable), closed: ended };
    };
    const [ours, theirs] = await Promise.all([send(lane.url), send(node.url)]);
    expect(theirs.replies.map((r) => r.status)).toEqual([400]);
    expect(ours).toEqual(theirs);
  });

  it('closes a connection idle for the keep-alive time it announces, and keeps one in use past it', async () => {
    // The lane keeps its idle and stall clocks with one interval timer and performance.now(): both faked here, so the
    // seconds below are the lane's own, whatever the machine's load; sockets and every other timer stay real.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'performance'] });
    const server = await startServer({ snapshotPath, now: () => NOW });
    try {
      const open = async () => {
        const { socket, chunks, closed } = await connectCollecting(server.url);
        const answered = async (n: number) => {
          await until(() => replies(Buffer.concat(chunks)).length >= n, `${n} answers`);
          return replies(Buffer.concat(chunks));
        };
        return { socket, answered, closed };
      };
      const idle = await open();
      const busy = await open();
      idle.socket.write(post(META));
      const got = await idle.answered(1);
      expect(got[0]!.head).toContain('Keep-Alive: timeout=5');
      // The busy one asks every (lane's) second: never idle for the five the answers announce. Each of its answers
      // is also a turn of the server's loop, so an idle connection closed by the lane's clock would be closed by then.
      let asked = 0;
      const second = async () => {
        vi.advanceTimersByTime(1000);
        busy.socket.write(post(META));
        expect((await busy.answered(++asked)).length).toBe(asked);
      };
      for (let i = 0; i < 4; i++) await second();
      expect(idle.closed()).toBe(false);
      // Past five seconds and one look of the lane's watch (every 1.25 s here), the idle one is closed.
      for (let i = 0; i < 3; i++) await second();
      expect(await until(() => idle.closed(), 'the idle connection to close')).toBe(true);
      expect(busy.closed()).toBe(false);
      busy.socket.destroy();
    } finally {
      vi.useRealTimers();
      await server.close();
    }
  }, 30_000);

  it('writes large answers with the others of their tick, each connection\'s in order, small ones among them', async () => {
    const page = (limit: number, cursor: string | null = null) => JSON.stringify(envelope('device-510k.catalog', { kind: 'clearance', limit, cursor }));
    const large = (await exchange(node.url, [post(page(500))], 1)).replies[0]!;
    // The case under test: a page the lane holds for its tick (else this checks nothing new).
    expect(large.body.length).toBeGreaterThanOrEqual(BATCHED_ANSWER_BYTES);
    const detail = (i: number) => JSON.stringify(envelope('device-510k.detail', { id: kNumbers[i % kNumbers.length] }));
    // More connections at once than a batch holds, each with large and small answers pipelined in turn.
    const requests = Array.from({ length: 12 }, (_, c) => [page(500), META, page(400 + c), detail(c), page(500)]);
    const before = lane.logger.requests.length;
    // Waited for as long as the test may run: 24 connections of large answers at once are slow on a loaded machine.
    const [ours, theirs] = await Promise.all([
      Promise.all(requests.map((r) => exchange(lane.url, [r.map((b) => post(b)).join('')], r.length, 0, 50_000))),
      Promise.all(requests.map((r) => exchange(node.url, [r.map((b) => post(b)).join('')], r.length, 0, 50_000))),
    ]);
    for (const [c, got] of ours.entries()) {
      expect(got.replies.map((r) => JSON.parse(r.body.toString()).operation)).toEqual(requests[c]!.map((b) => JSON.parse(b).operation));
      expect(got.replies.map(comparable)).toEqual(theirs[c]!.replies.map(comparable));
    }
    expect(ours.flatMap((o) => o.replies).filter((r) => r.body.length >= BATCHED_ANSWER_BYTES).length).toBe(36);
    expect(lane.logger.requests.slice(before).filter((l) => l.status === 200)).toHaveLength(60);
  }, 60_000);

  it('logs one line per request answered on it', async () => {
    const before = lane.logger.requests.length;
    await exchange(lane.url, [post(META) + post('{')], 2);
    const lines = lane.logger.requests.slice(before);
    expect(lines.map((l) => ({ method: l.method, path: l.path, operation: l.operation, status: l.status }))).toEqual([
      { method: 'POST', path: '/v1/query', operation: 'device-510k.meta', status: 200 },
      { method: 'POST', path: '/v1/query', operation: null, status: 400 },
    ]);
  });

  it.each([
    ['a tab after the Content-Length (Node: 400)', `Content-Length: ${META.length}\t`],
    ['a tab after Connection: close (read differently by Node versions: handed to Node)', 'Connection: close\t'],
    ['a no-break space after Connection: close (handed to Node)', 'Connection: close\u00a0'],
    ['Proxy-Connection: close (Node closes the connection)', 'Proxy-Connection: close'],
    ['Connection: close followed by spaces and another token (Node closes)', 'Connection: close , foo'],
    ['Connection: x close (Node keeps the connection)', 'Connection: x close'],
  ])('reads %s as Node does', async (_name, line) => {
    const lengthLine = line.startsWith('Content-Length') ? '' : `Content-Length: ${META.length}\r\n`;
    const request = `POST /v1/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${line}\r\n${lengthLine}\r\n${META}`;
    await expectSameFate([request + lastRequest()], { line });
  });

  it('answers any generated stream of requests as Node does, and keeps or closes the connection as Node does', async () => {
    // Header lines as clients send them, each perhaps with a byte that matters to an HTTP parser put in somewhere.
    const lines = [
      'Host: 127.0.0.1',
      'Content-Type: application/json',
      'Content-Type: application/json; charset=utf-8',
      'Accept-Encoding: gzip',
      'Connection: keep-alive',
      'Connection: close',
      'X-Any: value',
      'Content-Length: 3',
    ];
    const odd = fc.constantFrom(' ', '\t', ':', '\r', '\n', '\u0000', '\u007f', '\u00a0', '\u00ff', ',', '"', 'a', '0', ';');
    const cased = (l: string, how: number) => (how === 1 ? l.toUpperCase() : how === 2 ? l.toLowerCase() : l);
    const plainLine = fc.tuple(fc.constantFrom(...lines), fc.nat(40), fc.option(odd, { nil: undefined }), fc.nat(2)).map(([l, at, insert, how]) => {
      const c = cased(l, how);
      if (insert === undefined) return c;
      const i = at % (c.length + 1);
      return c.slice(0, i) + insert + c.slice(i);
    });
    // Connection and Proxy-Connection values: known and unknown tokens, with the separators and the spaces, tabs and
    // no-break spaces around them that parsers read differently.
    const space = fc.constantFrom('', '', ' ', '\t', '  ', ' \t', '\u00a0');
    const token = fc.constantFrom('close', 'Close', 'CLOSE', 'keep-alive', 'upgrade', 'foo', 'closed', 'x close');
    const connectionLine = fc
      .tuple(fc.constantFrom('Connection', 'Proxy-Connection', 'connection', 'PROXY-CONNECTION'), fc.array(fc.tuple(space, token, space), { minLength: 1, maxLength: 3 }), fc.constantFrom(',', ', ', ' ,'))
      .map(([name, parts, comma]) => `${name}:${parts.map(([a, t, b]) => a + t + b).join(comma)}`);
    // A request line, its headers and a body that agrees with its length, unless the generated form spoils it.
    const lengthForm = fc.tuple(space, fc.constantFrom('', '', '0'), space, fc.constantFrom('Content-Length', 'content-length', 'CONTENT-LENGTH'), fc.boolean());
    const bodies = [META, '{}', '', JSON.stringify(envelope('device-510k.detail', { id: 'k802527 ' })), JSON.stringify(envelope('device-510k.detail', { id: kNumbers[0] }))];
    const oneRequest = fc
      .record({
        first: fc.constantFrom('POST /v1/query HTTP/1.1', 'POST /v1/query HTTP/1.1', 'POST /v1/query HTTP/1.1', 'POST /v1/query HTTP/1.0', 'POST /v1/query?x HTTP/1.1', 'GET /healthz HTTP/1.1'),
        host: fc.constantFrom('Host: 127.0.0.1', 'Host: 127.0.0.1', 'host:\t127.0.0.1 ', 'Host: a\r\nHost: b', ''),
        extra: fc.array(fc.oneof(plainLine, connectionLine, fc.constantFrom('X-Folded: a\r\n b', 'Content-Type: application/json')), { maxLength: 4 }),
        body: fc.constantFrom(...bodies),
        framing: fc.constantFrom('length', 'length', 'length', 'chunked', 'both'),
        length: lengthForm,
      })
      .map(({ first, host, extra, body, framing, length: [before, zeros, after, name, twice] }) => {
        const size = Buffer.byteLength(body);
        const head = [first, ...(host === '' ? [] : [host]), ...extra];
        if (framing !== 'chunked') head.push(`${name}:${before}${zeros}${size}${after}`);
        if (framing !== 'chunked' && twice) head.push(`Content-Length: ${size}`);
        if (framing !== 'length') head.push('Transfer-Encoding: chunked');
        const payload = framing === 'length' ? body : `${size > 0 ? `${size.toString(16)}\r\n${body}\r\n` : ''}0\r\n\r\n`;
        return `${head.join('\r\n')}\r\n\r\n${payload}`;
      });
    // GETs and HEADs of the openFDA endpoints (the lane's) and of paths next to them (Node's), with query strings that
    // answer 200 (plain or compressed, with a Link or none), 404 and 400, and the headers that change an answer.
    const oneGet = fc
      .record({
        method: fc.constantFrom('GET', 'GET', 'GET', 'HEAD'),
        path: fc.constantFrom('/device/510k.json', '/device/510k.json', '/device/510k.json', '/device/classification.json', '/device/classification.json', '/device/510k.jsonx', '/device/510k.json/', '/Device/510k.json'),
        query: fc.constantFrom(...OPENFDA_QUERIES),
        // Now and then a byte put in the target: one the lane takes as Node does, or one it leaves to Node.
        odd: fc.oneof(
          { arbitrary: fc.constant(undefined), weight: 4 },
          { arbitrary: fc.tuple(fc.nat(60), fc.constantFrom(' ', '\t', '#', '\u00ff', '\u0000', '%', '"', '[', '|', '\u007f')), weight: 1 },
        ),
        version: fc.constantFrom('HTTP/1.1', 'HTTP/1.1', 'HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0'),
        host: fc.constantFrom('Host: 127.0.0.1', 'Host: 127.0.0.1', 'Host: 127.0.0.1', 'Host: example.org:8080', 'host:\t127.0.0.1 ', 'Host: a b', 'Host: a\r\nHost: b', ''),
        encoding: fc.constantFrom('', '', 'Accept-Encoding: gzip', 'Accept-Encoding: br', 'Accept-Encoding: gzip;q=0.5, br', 'Accept-Encoding: br;q=0, gzip', 'Accept-Encoding: identity', 'Accept-Encoding: gzip\r\nAccept-Encoding: br'),
        conditional: fc.constantFrom('', '', 'If-None-Match: "abc"', 'If-None-Match: *', 'If-Modified-Since: Thu, 01 Jan 2026 00:00:00 GMT'),
        body: fc.constantFrom('', '', '', '', '', 'Content-Length: 0', 'Content-Length: 2', 'Transfer-Encoding: chunked'),
        extra: fc.array(
          fc.oneof(
            { arbitrary: fc.constantFrom('User-Agent: test', 'Accept: application/json', 'X-Any: value', 'Connection: close', 'Connection: keep-alive'), weight: 4 },
            { arbitrary: plainLine.filter((l) => !/content-(length|type)/i.test(l)), weight: 1 },
            { arbitrary: connectionLine, weight: 1 },
          ),
          { maxLength: 2 },
        ),
      })
      .map(({ method, path, query, odd, version, host, encoding, conditional, body, extra }) => {
        let target = path + query;
        if (odd !== undefined) target = target.slice(0, 1 + (odd[0] % target.length)) + odd[1] + target.slice(1 + (odd[0] % target.length));
        const head = [`${method} ${target} ${version}`, ...[host, encoding, conditional, body].filter((l) => l !== ''), ...extra];
        const payload = body === 'Content-Length: 2' ? '{}' : body.startsWith('Transfer') ? '0\r\n\r\n' : '';
        return { text: `${head.join('\r\n')}\r\n\r\n${payload}`, head: method === 'HEAD' };
      });
    // After the generated requests, one that any server still reading the connection answers, and then closes it:
    // whether it is answered tells whether the connection was kept.
    const last = lastRequest();
    const anyRequest = fc.oneof({ arbitrary: oneRequest.map((text) => ({ text, head: false })), weight: 1 }, { arbitrary: oneGet, weight: 3 });
    const stream = fc.tuple(fc.array(anyRequest, { minLength: 1, maxLength: 4 }), fc.array(fc.nat(), { maxLength: 3 })).map(([requests, cuts]) => {
      const bytes = requests.map((r) => r.text).join('') + last;
      // Cut at byte boundaries the generator picked, sent a moment apart so that the server reads them apart.
      const at = [...new Set(cuts.map((c) => 1 + (c % (bytes.length - 1))))].sort((a, b) => a - b);
      return { requests, pieces: [0, ...at].map((from, i) => bytes.slice(from, at[i] ?? bytes.length)) };
    });
    let streams = 0;
    const gets = lane.app.fastLane!.answeredGets;
    await fc.assert(
      fc.asyncProperty(stream, async ({ requests, pieces }) => {
        streams++;
        await expectSameFate(pieces, { requests: requests.map((r) => r.text), pieces: pieces.length }, (i) => requests[i]?.head ?? false);
      }),
      { numRuns: RUNS, seed: SEED },
    );
    expect(streams).toBe(RUNS);
    // The lane answered a good share of them itself (else this compared Node with Node).
    expect(lane.app.fastLane!.answeredGets - gets).toBeGreaterThan(RUNS / 10);
  }, 180_000);
});

describe('answers while the server stops', () => {
  it('are the bytes the fast lane sends to a request that asked to close: Connection: close after Date, then the end', async () => {
    // Node's path alone: a request whose body is still coming when the server starts to stop (a connection with a
    // request under way is not closed as idle), answered once its last byte arrives.
    const stopping = await startServer({ snapshotPath, now: () => NOW, fastLane: false });
    const body = META;
    const request = post(body);
    const { socket, chunks, closed } = await connectCollecting(stopping.url);
    // Once Node has the request's head, the request is under way and its connection is not idle.
    const underWay = new Promise<void>((resolve) => stopping.app.server.once('request', () => resolve()));
    socket.write(request.slice(0, -1));
    await underWay;
    const closing = stopping.app.close({ graceMs: 5000 });
    socket.write(request.slice(-1));
    await vi.waitFor(() => expect(closed()).toBe(true), { timeout: 10_000 });
    await closing;
    const [stopped] = replies(Buffer.concat(chunks));
    // The fast lane's answer to the same request sent with Connection: close, on a server that is not stopping.
    const [asked] = (await exchange(lane.url, [post(body, 'Connection: close\r\n')], 1)).replies;
    expect(comparable(stopped!)).toEqual(comparable(asked!));
    expect(stopped!.head[stopped!.head.length - 1]).toBe('Connection: close');
  });
});

describe('back-pressure on a connection that pipelines large bodies and never reads', () => {
  it.each([
    [60_000, 36],
    [20_000, 108],
  ])('bodies of %d bytes, %d of them: reading stops once those waiting pass the budget, holds no more than it and one read, and goes on when they start', async (size, count) => {
    // Answers of 512 KiB: a client that does not read leaves the first ones queued on the socket, and the requests
    // after them wait for it to drain.
    const big = new JsonBytes(new Uint8Array(Buffer.from(JSON.stringify({ title: 'x'.repeat(512 * 1024) }), 'utf8')));
    let started = 0;
    const heavy: Operation = {
      input: OPERATIONS['device-510k.meta'],
      handler: async () => {
        started++;
        return { data: big };
      },
    };
    const budget = 128 * 1024;
    const server = await startServer({ snapshotPath, now: () => NOW, operations: { 'device-510k.meta': heavy }, pipelineBufferBytes: budget, pipelineDepth: 4, pipelineMaxWaiting: 32 });
    const control = server.app.fastLane!;
    let serverSide: Socket | null = null;
    server.app.server.once('connection', (socket: Socket) => (serverSide = socket));
    // Bodies of `size` bytes (the request, then spaces JSON ignores), about 2 MB of them: several waiting requests
    // in one read, or one cut across two.
    const body = META + ' '.repeat(size - META.length);
    const burst = post(body).repeat(count);
    expect(started).toBe(0);
    const client = connect(Number(new URL(server.url).port), '127.0.0.1');
    client.on('error', () => {});
    try {
      await new Promise<void>((resolve) => client.once('connect', () => resolve()));
      client.pause();
      client.write(burst);
      await vi.waitFor(() => expect(control.readPauses).toBeGreaterThanOrEqual(1), { timeout: 10_000, interval: 10 });
      expect(started).toBeLessThan(count);
      // What the server read stops well short of the burst (all of it would be read without the bound).
      const readWhilePaused = serverSide!.bytesRead;
      expect(readWhilePaused).toBeLessThan(burst.length / 2);
      // Waiting bodies and unparsed bytes: never more than the budget and the one read (64 KiB at most) that passed it.
      expect(control.peakHeldBytes).toBeGreaterThan(budget);
      expect(control.peakHeldBytes).toBeLessThanOrEqual(budget + 64 * 1024);
      // Once the client reads, the rest of the burst is read and every request answered.
      const chunks: Buffer[] = [];
      client.on('data', (c: Buffer) => chunks.push(c));
      client.resume();
      await vi.waitFor(() => expect(replies(Buffer.concat(chunks)).length).toBe(count), { timeout: 30_000, interval: 50 });
      expect(replies(Buffer.concat(chunks)).map((r) => r.status)).toEqual(Array(count).fill(200));
      expect(serverSide!.bytesRead).toBe(burst.length);
      expect(control.peakHeldBytes).toBeLessThanOrEqual(budget + 64 * 1024);
    } finally {
      client.destroy();
      await server.close();
    }
  }, 40_000);

  it('makes no answer while the answers ahead of it that the kernel has not taken pass the budget, and makes them all once the client reads', async () => {
    // Answers of 512 KiB to a client that never reads: the kernel soon has no room, and what it did not take stays in
    // the server's memory. Measured from the socket's own counts each time an answer starts being made: answers made
    // before it, less what the kernel took (bytes written less those still waiting in the socket's stream).
    const answerBytes = 512 * 1024;
    const big = new JsonBytes(new Uint8Array(Buffer.from(JSON.stringify({ title: 'x'.repeat(answerBytes) }), 'utf8')));
    let serverSide: Socket | null = null;
    let made = 0;
    let mostNotTaken = 0;
    const heavy: Operation = {
      input: OPERATIONS['device-510k.meta'],
      handler: async () => {
        const taken = serverSide!.bytesWritten - serverSide!.writableLength;
        mostNotTaken = Math.max(mostNotTaken, made * answerBytes - taken);
        made++;
        return { data: big };
      },
    };
    const budget = 128 * 1024;
    const server = await startServer({ snapshotPath, now: () => NOW, operations: { 'device-510k.meta': heavy }, pipelineBufferBytes: budget, pipelineDepth: 4, pipelineMaxWaiting: 32 });
    server.app.server.once('connection', (socket: Socket) => (serverSide = socket));
    const count = 24;
    const burst = post(META).repeat(count);
    const client = connect(Number(new URL(server.url).port), '127.0.0.1');
    client.on('error', () => {});
    try {
      await new Promise<void>((resolve) => client.once('connect', () => resolve()));
      client.pause();
      client.write(burst);
      // The kernel has no more room for answers: some wait in the server's socket.
      await vi.waitFor(() => expect(serverSide?.writableLength ?? 0).toBeGreaterThan(0), { timeout: 10_000, interval: 10 });
      expect(made).toBeLessThan(count);
      // Each answer was made with at most the budget of those ahead of it not taken: one answer and the budget at most.
      expect(mostNotTaken).toBeLessThanOrEqual(budget);
      const chunks: Buffer[] = [];
      client.on('data', (c: Buffer) => chunks.push(c));
      client.resume();
      await vi.waitFor(() => expect(replies(Buffer.concat(chunks)).length).toBe(count), { timeout: 30_000, interval: 50 });
      const got = replies(Buffer.concat(chunks));
      expect(got.map((r) => r.status)).toEqual(Array(count).fill(200));
      expect(got.every((r) => JSON.parse(r.body.toString('utf8')).data.title.length === answerBytes)).toBe(true);
      expect(mostNotTaken).toBeLessThanOrEqual(budget);
    } finally {
      client.destroy();
      await server.close();
    }
  }, 40_000);

  it('counts the bodies of requests under way in the budget: reading stops while answers wait for their turn', async () => {
    // Operations that wait until the test lets them go, as answers wait for their turn behind other connections'
    // work: the requests under way keep their bodies until then.
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started = 0;
    const waiting: Operation = {
      input: OPERATIONS['device-510k.meta'],
      handler: async () => {
        started++;
        await gate;
        return { data: new JsonBytes(new Uint8Array(Buffer.from('{"ok":true}', 'utf8'))) };
      },
    };
    const budget = 128 * 1024;
    const server = await startServer({ snapshotPath, now: () => NOW, operations: { 'device-510k.meta': waiting }, pipelineBufferBytes: budget, pipelineDepth: 4, pipelineMaxWaiting: 32 });
    const control = server.app.fastLane!;
    let serverSide: Socket | null = null;
    server.app.server.once('connection', (socket: Socket) => (serverSide = socket));
    const count = 36;
    const body = META + ' '.repeat(60_000 - META.length);
    const burst = post(body).repeat(count);
    const client = connect(Number(new URL(server.url).port), '127.0.0.1');
    client.on('error', () => {});
    try {
      await new Promise<void>((resolve) => client.once('connect', () => resolve()));
      client.write(burst);
      await vi.waitFor(() => expect(control.readPauses).toBeGreaterThanOrEqual(1), { timeout: 10_000, interval: 10 });
      expect(started).toBeGreaterThanOrEqual(1);
      // No answer is made yet, so every byte read is held: the budget, the read that passed it, and what the socket
      // read before it stopped (64 KiB reads).
      expect(serverSide!.bytesRead).toBeLessThanOrEqual(budget + 2 * 64 * 1024);
      const chunks: Buffer[] = [];
      client.on('data', (c: Buffer) => chunks.push(c));
      release();
      await vi.waitFor(() => expect(replies(Buffer.concat(chunks)).length).toBe(count), { timeout: 30_000, interval: 50 });
      expect(replies(Buffer.concat(chunks)).map((r) => r.status)).toEqual(Array(count).fill(200));
      expect(serverSide!.bytesRead).toBe(burst.length);
    } finally {
      release();
      client.destroy();
      await server.close();
    }
  }, 40_000);

  it('refuses a budget smaller than one whole request, naming the setting', async () => {
    await expect(startServer({ snapshotPath, pipelineBufferBytes: 64 * 1024 })).rejects.toThrow(/pipelineBufferBytes.+at least 81920/);
  });
});

describe('Expect: 100-continue behind another answer', () => {
  it.each([
    ['with the lane', () => lane],
    ['without it', () => node],
  ])('%s: the 100 goes out only when its own answer is next, never inside an earlier one', async (_name, server) => {
    const catalog = JSON.stringify(envelope('device-510k.catalog', { kind: 'clearance', limit: 20, cursor: null }));
    // A chunked request goes to Node's parser; the one after it asks for a 100 and sends its body at once.
    const chunked = `POST /v1/query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${Buffer.byteLength(catalog).toString(16)}\r\n${catalog}\r\n0\r\n\r\n`;
    const expecting = post(META, 'Expect: 100-continue\r\nConnection: close\r\n');
    for (let round = 0; round < 5; round++) {
      const { replies: got, closed } = await exchange(server().url, [chunked + expecting], 99);
      expect(closed).toBe(true);
      const finals = got.filter((r) => r.status !== 100);
      expect(finals.map((r) => r.status)).toEqual([200, 200]);
      expect(finals.map((r) => JSON.parse(r.body.toString('utf8')).operation)).toEqual(['device-510k.catalog', 'device-510k.meta']);
      // A 100 may come before the second answer's head, never after a head.
      const text = Buffer.concat(got.map((r) => Buffer.concat([Buffer.from(r.head.join('\r\n') + '\r\n\r\n', 'latin1'), r.body]))).toString('latin1');
      expect(text).not.toMatch(/\r\n\r\nHTTP\/1\.1 100 Continue\r\n\r\n\{/);
    }
    // A client that does wait for the 100 behind an earlier answer gets it, after that answer, and then its own.
    const socket = connect(Number(new URL(server().url).port), '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => {});
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    const head = expecting.slice(0, expecting.length - META.length);
    socket.write(chunked + head);
    await vi.waitFor(() => expect(Buffer.concat(chunks).toString('latin1')).toContain('HTTP/1.1 100 Continue\r\n\r\n'), { timeout: 5000, interval: 10 });
    socket.write(META);
    await Promise.race([closed, new Promise((r) => setTimeout(r, 10_000))]);
    socket.destroy();
    const got = replies(Buffer.concat(chunks));
    expect(got.map((r) => r.status)).toEqual([200, 100, 200]);
    expect(JSON.parse(got[2]!.body.toString('utf8')).operation).toBe('device-510k.meta');
  });
});

describe('the buffers the fast lane lends', () => {
  it('gives a returned buffer of the same size class to the next answer, and never one that is still lent', () => {
    const buffers = new AnswerBuffers();
    // A catalog page of a shard (about 100 KB) and a small answer take buffers of different sizes.
    const page = buffers.allocate(100_000);
    const small = buffers.allocate(2_000);
    expect(page.length).toBe(100_000);
    expect(page.buffer).not.toBe(small.buffer);
    expect(page.buffer.byteLength).toBeGreaterThanOrEqual(100_000 + 512);
    expect(buffers.owns(page) && buffers.owns(small)).toBe(true);
    // Still lent: a second page gets a buffer of its own.
    const other = buffers.allocate(90_000);
    expect(other.buffer).not.toBe(page.buffer);
    buffers.release(page.buffer);
    expect(buffers.owns(page)).toBe(false);
    const next = buffers.allocate(120_000);
    expect(next.buffer).toBe(page.buffer);
    // A small answer never takes a large buffer back, nor a large answer a small one.
    buffers.release(small.buffer);
    expect(buffers.allocate(200_000).buffer).not.toBe(small.buffer);
    expect(buffers.allocate(10).buffer).toBe(small.buffer);
  });

  it('keeps no answer larger than its largest size, and gives a buffer back once only', () => {
    const buffers = new AnswerBuffers();
    const huge = buffers.allocate(3 * 1024 * 1024);
    expect(huge.buffer.byteLength).toBe(3 * 1024 * 1024 + 512);
    buffers.release(huge.buffer);
    expect(buffers.allocate(3 * 1024 * 1024).buffer).not.toBe(huge.buffer);
    const a = buffers.allocate(100);
    buffers.release(a.buffer);
    buffers.release(a.buffer);
    const b = buffers.allocate(100);
    const c = buffers.allocate(100);
    expect(b.buffer).toBe(a.buffer);
    expect(c.buffer).not.toBe(a.buffer);
  });

  it('gives a buffer back through a write callback once, never after it was lent again', () => {
    const buffers = new AnswerBuffers();
    const page = buffers.allocate(100_000);
    const giveBack = buffers.giveBackOnce(page.buffer);
    // The kernel took the whole answer: given back at once, and the next page reuses the buffer.
    giveBack();
    const next = buffers.allocate(100_000);
    expect(next.buffer).toBe(page.buffer);
    // The socket's callback for the first write comes after: the buffer, lent again, stays lent.
    giveBack();
    expect(buffers.owns(next)).toBe(true);
    expect(buffers.allocate(100_000).buffer).not.toBe(next.buffer);
  });
});
