import { request } from 'node:http';
import { JSONRPCRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerMcpPost, keptAnswer, mcpOptions, readMcpPost, type McpAnswer } from '../../src/api/mcp/index.ts';
import { isPlainCall } from '../../src/api/mcp/result-cache.ts';
import { AnswerCache } from '../../src/utils/answer-cache.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { countingBackend } from '../helpers/mcp-backend.ts';
import { mulberry32 } from '../helpers/random.ts';
import { allRecords, startServer } from '../server/helpers.ts';

/**
 * The kept-result path of POST /mcp (src/api/mcp/http.ts `keptAnswer`): a plain tools/call whose result is kept is
 * answered without the SDK, and its answer must be byte for byte the SDK path's for the same call. Everything else
 * (notifications, batches, malformed JSON or JSON-RPC, params with more than a name and arguments, refused headers,
 * error results, tools never kept) must go to the SDK. Then the same over the Node server's fast lane, whose answer
 * from lent memory must be the bytes Node's own HTTP path sends.
 */

const ACCEPT = 'application/json, text/event-stream';
const HEADERS: Record<string, string> = { accept: ACCEPT, 'content-type': 'application/json', 'mcp-protocol-version': '2025-06-18' };
const headerOf = (headers: Record<string, string>) => (name: string) => headers[name];
const encoder = new TextEncoder();
const decoder = new TextDecoder();

type Json = Record<string, any>;

/** A backend over made-up records (a name with a quote and a non-ASCII letter), counting what it is asked. */
const makeBackend = () => countingBackend((id) => `Device "${id}" \u00e9`);

const text = (answer: McpAnswer) => `${answer.status} ${JSON.stringify(answer.headers)} ${answer.body === null ? '' : decoder.decode(answer.body)}`;

/** One POST three ways: the SDK alone (no cache), the general path with the cache, and the kept-result path. */
function poster(budget = 16_384) {
  const { backend, asked } = makeBackend();
  const cache = { answers: new AnswerCache(1024 * 1024), snapshot: {} };
  const cached = { ...mcpOptions(backend, budget), resultCache: cache };
  const uncached = mcpOptions(backend, budget);
  return {
    asked,
    cache,
    sdk: async (body: string, headers = HEADERS) => text(await answerMcpPost(headerOf(headers), encoder.encode(body), uncached)),
    cached: async (body: string, headers = HEADERS) => text(await answerMcpPost(headerOf(headers), encoder.encode(body), cached)),
    kept: (body: string, headers = HEADERS, allocate?: (size: number) => Uint8Array) => {
      const answer = keptAnswer(headerOf(headers), readMcpPost(encoder.encode(body)), budget, cache, allocate);
      return answer === null ? null : text(answer);
    },
  };
}

const call = (id: unknown, name: string, args?: Json, extra: Json = {}) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, ...(args !== undefined && { arguments: args }), ...extra } });

/** Ids of every kind the SDK takes, some with characters JSON escapes. */
function someId(random: () => number, i: number): string | number {
  const pick = Math.floor(random() * 6);
  if (pick === 0) return i;
  if (pick === 1) return -Math.floor(random() * 1e6);
  if (pick === 2) return Number.MAX_SAFE_INTEGER - Math.floor(random() * 10);
  if (pick === 3) return `req-${i}`;
  if (pick === 4) return `q"\\\n\u2028\u00e9${String.fromCharCode(0xd800 + Math.floor(random() * 1024))}${i}`;
  return '';
}

describe('the kept-result path of POST /mcp', () => {
  it('answers many kept calls with the bytes the SDK sends for them, under their own ids', async () => {
    const random = mulberry32(44);
    const p = poster();
    const searches: Json[] = [
      { query: 'catheter' },
      { query: '', applicant: 'Acme', yearFrom: 2001, yearTo: 2020 },
      { query: 'pump', page: 2, pageSize: 5, sort: 'decisionDate:asc' },
      { pageSize: 3, query: 'pump', page: 2 },
    ];
    const calls: [string, Json | undefined][] = [
      ...searches.map((a): [string, Json] => ['search_clearances', a]),
      ['get_clearance', { id: 'K162054' }],
      ['get_clearance', { id: 'K990001' }],
    ];
    let kept = 0;
    for (let i = 0; i < 120; i++) {
      const [name, args] = calls[Math.floor(random() * calls.length)]!;
      const body = call(someId(random, i), name, args);
      const sdk = await p.sdk(body);
      // The first ask of a call keeps it (and is the SDK's answer); every later one is taken from what was kept.
      const general = await p.cached(body);
      expect(general).toBe(sdk);
      const fast = p.kept(body);
      expect(fast, `${name} ${JSON.stringify(args)} ${sdk.slice(0, 300)}`).not.toBeNull();
      expect(fast).toBe(sdk);
      kept++;
    }
    expect(kept).toBe(120);
    // The same bytes written into lent memory (room before them, as the fast lane lends it).
    const lent: Uint8Array[] = [];
    const allocate = (size: number) => {
      const view = new Uint8Array(new ArrayBuffer(512 + size), 512, size);
      lent.push(view);
      return view;
    };
    const body = call(7, 'get_clearance', { id: 'K162054' });
    expect(p.kept(body, HEADERS, allocate)).toBe(await p.sdk(body));
    expect(lent.length).toBe(1);
  });

  it('leaves everything but a plain, kept tools/call to the SDK, which answers it as it would without the cache', async () => {
    const p = poster();
    // Kept first, so that a path that took more than it should would find something to answer with.
    await p.cached(call(1, 'get_clearance', { id: 'K162054' }));
    await p.cached(call(1, 'search_clearances', { query: 'catheter' }));
    expect(p.kept(call(2, 'get_clearance', { id: 'K162054' }))).not.toBeNull();
    const plain = JSON.parse(call(3, 'get_clearance', { id: 'K162054' })) as Json;
    const variant = (change: (m: Json) => void) => {
      const m = structuredClone(plain);
      change(m);
      return JSON.stringify(m);
    };
    const others: [string, string, Record<string, string>?][] = [
      ['a notification', JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })],
      ['a batch of one kept call', `[${call(4, 'get_clearance', { id: 'K162054' })}]`],
      ['a batch of kept calls and a list', `[${call(4, 'get_clearance', { id: 'K162054' })},{"jsonrpc":"2.0","id":5,"method":"tools/list"},${call('x', 'search_clearances', { query: 'catheter' })}]`],
      ['bytes that are not JSON', '{"jsonrpc":"2.0","id":1,'],
      ['text that is not JSON', 'tools/call'],
      ['JSON that is not JSON-RPC', '{"hello":"world"}'],
      ['an empty batch', '[]'],
      ['a response', '{"jsonrpc":"2.0","id":1,"result":{}}'],
      ['JSON-RPC 1.0', variant((m) => (m.jsonrpc = '1.0'))],
      ['an id with a fraction', variant((m) => (m.id = 1.5))],
      ['an id past the safe integers', variant((m) => (m.id = 2 ** 53))],
      ['a null id', variant((m) => (m.id = null))],
      ['a boolean id', variant((m) => (m.id = true))],
      ['no id', variant((m) => delete m.id)],
      ['a member more', variant((m) => (m.extra = 1))],
      ['params with _meta', variant((m) => (m.params._meta = { progressToken: 'p' }))],
      ['params with a task', variant((m) => (m.params.task = { ttl: 1000 }))],
      ['params with a member more', variant((m) => (m.params.other = 1))],
      ['arguments that are an array', variant((m) => (m.params.arguments = ['K162054']))],
      ['arguments that are null', variant((m) => (m.params.arguments = null))],
      ['arguments that are a string', variant((m) => (m.params.arguments = 'K162054'))],
      ['no name', variant((m) => delete m.params.name)],
      ['params that are an array', variant((m) => (m.params = []))],
      ['another method', variant((m) => (m.method = 'tools/list'))],
      ['an unknown tool', variant((m) => (m.params.name = 'drop_tables'))],
      ['arguments the tool refuses', variant((m) => (m.params.arguments.extra = 1))],
      ['a missing record (an error result, never kept)', call(9, 'get_clearance', { id: 'K000000' })],
      ['a tool never kept', call(10, 'changes_since', { date: 'not a day' })],
      ['an initialize', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } })],
      ['no Accept of event streams', call(11, 'get_clearance', { id: 'K162054' }), { ...HEADERS, accept: 'application/json' }],
      ['a Content-Type that is not JSON', call(12, 'get_clearance', { id: 'K162054' }), { ...HEADERS, 'content-type': 'text/plain' }],
      ['a protocol version not supported', call(13, 'get_clearance', { id: 'K162054' }), { ...HEADERS, 'mcp-protocol-version': '1999-01-01' }],
    ];
    for (const [what, body, headers] of others) {
      expect(p.kept(body, headers ?? HEADERS), what).toBeNull();
      expect(await p.cached(body, headers ?? HEADERS), what).toBe(await p.sdk(body, headers ?? HEADERS));
    }
  });

  it('takes as a plain call exactly what the SDK reads as a request, member for member', () => {
    const ids: unknown[] = [0, 1, -1, 1.5, 2 ** 53, 2 ** 53 - 1, -(2 ** 53 - 1), -(2 ** 53), 1e21, -0, '', 'x', null, true, {}, []];
    for (const id of ids) {
      const message = JSON.parse(call(id, 'get_clearance', { id: 'K1' })) as Json;
      // The SDK reads it as a request with the same members (nothing added, nothing dropped).
      const sdk = JSONRPCRequestSchema.safeParse(message);
      expect(isPlainCall(message), JSON.stringify(id)).toBe(sdk.success);
      if (sdk.success) expect(sdk.data).toEqual(message);
    }
  });

  it('reads a spelling of the arguments once, and never answers one budget with another budget\'s result', async () => {
    const small = poster(4096);
    await small.cached(call(1, 'search_clearances', { query: 'pump', pageSize: 3 }));
    const asked = small.asked.length;
    // Another order of the same arguments: the same result, from what was kept.
    const reordered = call(2, 'search_clearances', { pageSize: 3, query: 'pump' });
    expect(small.kept(reordered)).toBe(await small.sdk(reordered));
    // The result kept at 4 KiB is not found by a path reading at 8 KiB (the key carries the budget).
    const large = keptAnswer(headerOf(HEADERS), readMcpPost(encoder.encode(reordered)), 8192, small.cache);
    expect(large).toBeNull();
    expect(small.asked.length).toBe(asked + 1);
  });
});

/** A raw HTTP/1.1 POST: the status line and headers (without Date) and the body's bytes as sent. */
function rawPost(url: string, path: string, body: string, headers: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const head = Object.entries(res.headers)
          .filter(([k]) => k !== 'date')
          .map(([k, v]) => `${k}: ${String(v)}`)
          .join('\n');
        resolve(`${res.statusCode}\n${head}\n\n${Buffer.concat(chunks).toString('base64')}`);
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('kept MCP results on the Node server', () => {
  let lane: Awaited<ReturnType<typeof startServer>>;
  let node: Awaited<ReturnType<typeof startServer>>;
  let kNumbers: string[];

  beforeAll(async () => {
    const snapshotPath = await buildFixtureSnapshot();
    kNumbers = (await allRecords(snapshotPath)).slice(0, 4).map((r) => r.kNumber);
    lane = await startServer({ snapshotPath });
    node = await startServer({ snapshotPath, fastLane: false });
  }, 120_000);
  afterAll(async () => {
    await lane?.close();
    await node?.close();
  });

  it('sends from the fast lane the bytes Node\'s HTTP path sends, with each coding, for kept and new calls', async () => {
    const calls = [
      ...kNumbers.map((id) => call(id, 'get_clearance', { id })),
      call(1, 'search_clearances', { query: 'catheter', pageSize: 5 }),
      call('s', 'count_by', { field: 'productCode', query: '', size: 5 }),
      call(2, 'get_clearance', { id: 'K000000' }),
    ];
    const codings = ['identity', 'gzip', 'br'];
    const answeredBefore = lane.app.fastLane!.answered;
    for (let round = 0; round < 3; round++) {
      for (const body of calls) {
        for (const coding of codings) {
          const headers = { ...HEADERS, 'accept-encoding': coding };
          const fromLane = await rawPost(lane.url, '/mcp', body, headers);
          expect(fromLane).toBe(await rawPost(node.url, '/mcp', body, headers));
          expect(fromLane.startsWith('200\n')).toBe(true);
        }
      }
    }
    // Every one of them was answered on the lane (not handed to Node's parser).
    expect(lane.app.fastLane!.answered - answeredBefore).toBe(3 * calls.length * codings.length);
  });
});
