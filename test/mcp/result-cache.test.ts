import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerMcpPost, mcpOptions, type McpOptions } from '../../src/api/mcp/index.ts';
import { AnswerCache } from '../../src/utils/answer-cache.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { countingBackend } from '../helpers/mcp-backend.ts';
import { allRecords, startServer } from '../server/helpers.ts';

/**
 * Finished tool results kept per snapshot (src/api/mcp/result-cache.ts): a call answered from the cache is byte for
 * byte what the SDK sends for it, a result is kept for one snapshot only, error results and calls the SDK must read
 * are never answered from it, and the cache stays within its byte bound. First over answerMcpPost with a backend
 * that counts what it is asked, then over the Node server with and without the cache.
 */

const ACCEPT = 'application/json, text/event-stream';
const HEADERS: Record<string, string> = { accept: ACCEPT, 'content-type': 'application/json', 'mcp-protocol-version': '2025-06-18' };
const encoder = new TextEncoder();
const decoder = new TextDecoder();

type Json = Record<string, any>;


const ask = async (options: McpOptions, message: unknown): Promise<string> => {
  const answer = await answerMcpPost((name) => HEADERS[name], encoder.encode(JSON.stringify(message)), options);
  expect(answer.status).toBe(200);
  return decoder.decode(answer.body!);
};

const callOf = (id: string | number, name: string, args: Json, extra: Json = {}) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, ...extra } });

describe('MCP tool results kept per snapshot', () => {
  it('answers a call asked again with the bytes the SDK sends for it, under the new id, without asking the operation', async () => {
    const { backend, asked } = countingBackend((id) => `Device ${id}`);
    const cache = { answers: new AnswerCache(1024 * 1024), snapshot: {} };
    const cached = { ...mcpOptions(backend), resultCache: cache };
    const uncached = mcpOptions(backend);
    const args = { id: 'K162054' };
    // Ids of both kinds, one with characters JSON escapes.
    for (const id of [1, 'q"\\\u00e9\u2028', 0, 9007199254740991]) {
      const fromCache = await ask(cached, callOf(id, 'get_clearance', args));
      const fromSdk = await ask(uncached, callOf(id, 'get_clearance', args));
      expect(fromCache).toBe(fromSdk);
      expect(JSON.parse(fromCache).id).toBe(id);
      expect(JSON.parse(fromCache).result.structuredContent.record.deviceName).toBe('Device K162054');
    }
    // The cached options asked the operation once (the first call); the uncached ones once a call.
    expect(asked.length).toBe(1 + 4);
    expect(cache.answers.weightFor(cache.snapshot)).toBeGreaterThan(0);
  });

  it('answers a batch the same, kept and new calls and other methods together, in order', async () => {
    const { backend, asked } = countingBackend((id) => `Device ${id}`);
    const cached = { ...mcpOptions(backend), resultCache: { answers: new AnswerCache(1024 * 1024), snapshot: {} } };
    const uncached = mcpOptions(backend);
    await ask(cached, callOf(1, 'get_clearance', { id: 'K111111' }));
    const batch = [callOf(2, 'get_clearance', { id: 'K111111' }), callOf('b', 'get_clearance', { id: 'K222222' }), { jsonrpc: '2.0', id: 3, method: 'tools/list' }, callOf(4, 'search_clearances', { query: 'x' })];
    const before = asked.length;
    const fromCache = await ask(cached, batch);
    expect(asked.length - before).toBe(2);
    expect(fromCache).toBe(await ask(uncached, batch));
    expect(JSON.parse(fromCache).map((m: Json) => m.id)).toEqual([2, 'b', 3, 4]);
  });

  it('keys a result by the arguments as the tool reads them, and by the budget', async () => {
    const { backend, asked } = countingBackend((id) => `Device ${id}`);
    const answers = new AnswerCache(1024 * 1024);
    const snapshot = {};
    const small = { ...mcpOptions(backend, 4096), resultCache: { answers, snapshot } };
    const large = { ...mcpOptions(backend, 8192), resultCache: { answers, snapshot } };
    const a = await ask(small, callOf(1, 'search_clearances', { query: 'pump', pageSize: 3, page: 1 }));
    // The same arguments in another order: the same entry.
    const b = await ask(small, callOf(1, 'search_clearances', { page: 1, query: 'pump', pageSize: 3 }));
    expect(asked.length).toBe(1);
    expect(b).toBe(a);
    // Another budget, and other arguments: entries of their own.
    await ask(large, callOf(1, 'search_clearances', { query: 'pump', pageSize: 3, page: 1 }));
    await ask(small, callOf(1, 'search_clearances', { query: 'pump', pageSize: 3, page: 1, applicant: 'Acme' }));
    expect(asked.length).toBe(3);
  });

  it('never serves a result kept for another snapshot', async () => {
    let generation = 'old';
    const { backend, asked } = countingBackend((id) => `${generation} ${id}`);
    const answers = new AnswerCache(1024 * 1024);
    const first = { ...mcpOptions(backend), resultCache: { answers, snapshot: {} } };
    const old = JSON.parse(await ask(first, callOf(1, 'get_clearance', { id: 'K162054' })));
    expect(old.result.structuredContent.record.deviceName).toBe('old K162054');
    generation = 'new';
    // The same snapshot still answers from its entry (the operation is not asked again)…
    expect(JSON.parse(await ask(first, callOf(1, 'get_clearance', { id: 'K162054' })))).toEqual(old);
    expect(asked.length).toBe(1);
    // …and the next snapshot asks the operation and answers what it says.
    const second = { ...mcpOptions(backend), resultCache: { answers, snapshot: {} } };
    const now = JSON.parse(await ask(second, callOf(1, 'get_clearance', { id: 'K162054' })));
    expect(now.result.structuredContent.record.deviceName).toBe('new K162054');
    expect(asked.length).toBe(2);
  });

  it('keeps no error result, and leaves to the SDK a call with more in its params than a name and arguments', async () => {
    const { backend, asked } = countingBackend((id) => `Device ${id}`);
    const cache = { answers: new AnswerCache(1024 * 1024), snapshot: {} };
    const cached = { ...mcpOptions(backend), resultCache: cache };
    const uncached = mcpOptions(backend);
    for (let i = 0; i < 2; i++) {
      const missing = JSON.parse(await ask(cached, callOf(i, 'get_clearance', { id: 'K000000' })));
      expect(missing.result.isError).toBe(true);
      expect(missing.result.content[0].text).toMatch(/^record_not_found: /);
    }
    expect(asked.length).toBe(2);
    expect(cache.answers.weightFor(cache.snapshot)).toBe(0);
    // Arguments the tool refuses: the tool's invalid_input result, from the SDK each time, nothing kept.
    const refused = await ask(cached, callOf(5, 'get_clearance', { id: 'K162054', extra: 1 }));
    expect(JSON.parse(refused).result.isError).toBe(true);
    expect(refused).toBe(await ask(uncached, callOf(5, 'get_clearance', { id: 'K162054', extra: 1 })));
    // Kept, then asked with _meta (the SDK reads it): the operation is asked again, the bytes are the SDK's.
    await ask(cached, callOf(6, 'get_clearance', { id: 'K162054' }));
    const withMeta = callOf(7, 'get_clearance', { id: 'K162054' }, { _meta: { progressToken: 'p' } });
    const before = asked.length;
    expect(await ask(cached, withMeta)).toBe(await ask(uncached, withMeta));
    expect(asked.length - before).toBe(2);
    // Params the SDK refuses (-32602) are refused the same with a result kept for the tool.
    const bad = { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'get_clearance', arguments: 'K162054' } };
    const badAnswer = JSON.parse(await ask(cached, bad));
    expect(badAnswer.error.code).toBe(-32602);
    expect(JSON.stringify(badAnswer)).toBe(await ask(uncached, bad));
  });

  it('stays within its byte bound, asking again for what it let go', async () => {
    const { backend, asked } = countingBackend((id) => `Device ${id}`);
    // Room for a few results of about 700 bytes (each weighs its bytes, its key and 128 more).
    const cache = { answers: new AnswerCache(4000), snapshot: {} };
    const cached = { ...mcpOptions(backend), resultCache: cache };
    const ids = Array.from({ length: 20 }, (_, i) => `K2000${String(i).padStart(2, '0')}`);
    for (const id of ids) {
      const answer = JSON.parse(await ask(cached, callOf(id, 'get_clearance', { id })));
      expect(answer.result.structuredContent.record.kNumber).toBe(id);
      expect(cache.answers.weightFor(cache.snapshot)).toBeLessThanOrEqual(4000);
    }
    expect(cache.answers.weightFor(cache.snapshot)).toBeGreaterThan(0);
    expect(asked.length).toBe(20);
    // The last is still kept; the first was let go, and is asked of the operation again.
    await ask(cached, callOf(1, 'get_clearance', { id: ids[19] }));
    expect(asked.length).toBe(20);
    const again = JSON.parse(await ask(cached, callOf(1, 'get_clearance', { id: ids[0] })));
    expect(again.result.structuredContent.record.kNumber).toBe(ids[0]);
    expect(asked.length).toBe(21);
  });
});

describe('MCP tool results kept by the Node server', () => {
  let snapshotPath: string;
  let withCache: Awaited<ReturnType<typeof startServer>>;
  let withoutCache: Awaited<ReturnType<typeof startServer>>;
  let kNumbers: string[];

  beforeAll(async () => {
    snapshotPath = await buildFixtureSnapshot();
    kNumbers = (await allRecords(snapshotPath)).slice(0, 3).map((r) => r.kNumber);
    withCache = await startServer({ snapshotPath });
    withoutCache = await startServer({ snapshotPath, answerCacheBytes: 0 });
  }, 120_000);
  afterAll(async () => {
    await withCache?.close();
    await withoutCache?.close();
  });

  const rpc = async (url: string, message: unknown) => {
    const res = await fetch(`${url}/mcp`, { method: 'POST', headers: HEADERS, body: JSON.stringify(message) });
    expect(res.status).toBe(200);
    return res.text();
  };

  it('answers each cacheable tool asked again with the bytes a server without the cache sends', async () => {
    const calls: [string, Json][] = [
      ['search_clearances', { query: 'catheter', pageSize: 5 }],
      ['count_by', { field: 'productCode', query: '', size: 5 }],
      ['review_time_stats', { query: 'catheter' }],
      ['get_clearance', { id: kNumbers[0] }],
      ['get_classification', { productCode: 'DQY' }],
    ];
    for (const [name, args] of calls) {
      const first = await rpc(withCache.url, callOf(1, name, args));
      const kept = await rpc(withCache.url, callOf('again', name, args));
      const sdk = await rpc(withoutCache.url, callOf('again', name, args));
      expect(kept, name).toBe(sdk);
      expect(first, name).toBe(sdk.replace('"id":"again"}', '"id":1}'));
      expect(JSON.parse(kept).result.isError, name).toBeUndefined();
    }
  });
});
