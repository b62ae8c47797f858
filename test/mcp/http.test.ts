import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker } from '../../build/worker/local.ts';
import type { ClearanceRecord } from '../../src/contract/index.ts';
import { MAX_BATCH } from '../../src/api/mcp/index.ts';
import { fileURLToPath } from 'node:url';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { modelWalk, readModel } from '../helpers/lineage-model.ts';
import { allRecords, startServer } from '../server/helpers.ts';
import { TARGETS, hostFor, type TargetName } from '../contract/targets.ts';
import { call, connectClient, mcpChecks, query, TOOL_NAMES } from './suite.ts';

/**
 * POST /mcp on every host (the Node server, the Worker under workerd), driven by the official SDK's client over
 * Streamable HTTP, each answer compared with /v1/query's; then the protocol's own errors and bounds with raw requests,
 * and a result cut by a small byte budget followed page by page.
 */
let snapshotPath: string;
let records: ClearanceRecord[];

beforeAll(async () => {
  snapshotPath = await buildFixtureSnapshot();
  records = await allRecords(snapshotPath);
}, 120_000);

const overHttp = (url: string) => new StreamableHTTPClientTransport(new URL(`${url}/mcp`));

const ACCEPT = 'application/json, text/event-stream';
const rpc = (url: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT, 'mcp-protocol-version': '2025-06-18', ...headers }, body });

/** The device with the longest chain of predicates in the fixture's edge files (176 devices), by an independent walk. */
function longestChain(): string {
  const model = readModel(fileURLToPath(new URL('../fixtures/fda/predicates', import.meta.url)));
  const size = (id: string) => modelWalk(model, id, 'predicates', null, null).items.length;
  return [...model.forward.keys()].map((id) => [id, size(id)] as const).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]![0];
}

/** A small budget's host: Node takes the option, the Worker its variable. */
async function smallBudgetHost(name: TargetName, budget: number): Promise<{ url: string; close: () => Promise<void> }> {
  if (name === 'node') return startServer({ snapshotPath, mcpBudgetBytes: budget });
  return startWorker({ storage: 'assets', snapshotPath, vars: { MCP_BUDGET_BYTES: String(budget) } });
}

for (const target of TARGETS) {
  describe(`MCP over Streamable HTTP on ${target}`, () => {
    const host = hostFor(target, () => snapshotPath);
    mcpChecks(async () => overHttp(host.url), { apiUrl: () => host.url, records: () => records });

    it('answers malformed JSON-RPC with the protocol error codes, and keeps no session', async () => {
      const notJson = await rpc(host.url, '{"jsonrpc":');
      expect(notJson.status).toBe(400);
      expect(((await notJson.json()) as any).error.code).toBe(-32700);

      const notRpc = await rpc(host.url, '{"hello":"world"}');
      expect(notRpc.status).toBe(400);
      expect(((await notRpc.json()) as any).error.code).toBe(-32600);

      const empty = await rpc(host.url, '[]');
      expect(((await empty.json()) as any).error.code).toBe(-32600);

      const unknownMethod = await rpc(host.url, JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tables/drop', params: {} }));
      expect(unknownMethod.status).toBe(200);
      const unknown = (await unknownMethod.json()) as any;
      expect(unknown.id).toBe(7);
      expect(unknown.error.code).toBe(-32601);

      const badParams = await rpc(host.url, JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { arguments: {} } }));
      expect(((await badParams.json()) as any).error.code).toBe(-32602);

      // A stateless server gives no session id, and answers without one.
      const list = await rpc(host.url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
      expect(list.status).toBe(200);
      expect(list.headers.get('content-type')).toMatch(/^application\/json/);
      expect(list.headers.get('mcp-session-id')).toBeNull();
      expect(((await list.json()) as any).result.tools.length).toBe(TOOL_NAMES.length);
    });

    it('answers a call asked again (its result kept) with the bytes of its first answer, under the new id', async () => {
      const calls = [
        { name: 'get_clearance', arguments: { id: records[0]!.kNumber } },
        { name: 'search_clearances', arguments: { query: 'catheter', pageSize: 5 } },
        { name: 'count_by', arguments: { field: 'productCode', query: '', size: 5 } },
      ];
      for (const params of calls) {
        const ask = async (id: string | number) => {
          const res = await rpc(host.url, JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params }));
          expect(res.status).toBe(200);
          return res.text();
        };
        const first = await ask(1);
        expect(JSON.parse(first).result.isError).toBeUndefined();
        for (const id of [2, 'again "\u00e9"', 9007199254740991]) {
          // The SDK writes its response with JSON.stringify, members in the order result, jsonrpc, id.
          expect(await ask(id)).toBe(JSON.stringify({ ...JSON.parse(first), id }));
        }
      }
    });

    it('bounds a request: batch size, body size; GET and DELETE are 405 (no stream, no session)', async () => {
      const call1 = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'get_classification', arguments: { productCode: 'DXY' } } });
      const batch = await rpc(host.url, JSON.stringify(Array.from({ length: MAX_BATCH }, (_, i) => call1(i + 1))));
      expect(batch.status).toBe(200);
      const answers = (await batch.json()) as any[];
      expect(answers.map((a) => a.id).sort((a, b) => a - b)).toEqual(Array.from({ length: MAX_BATCH }, (_, i) => i + 1));
      const tooMany = await rpc(host.url, JSON.stringify(Array.from({ length: MAX_BATCH + 1 }, (_, i) => call1(i + 1))));
      expect(tooMany.status).toBe(400);
      expect(((await tooMany.json()) as any).error.code).toBe(-32600);

      const get = await fetch(`${host.url}/mcp`, { headers: { accept: 'text/event-stream' } });
      expect(get.status).toBe(405);
      expect(get.headers.get('allow')).toBe('POST, OPTIONS');
      const del = await fetch(`${host.url}/mcp`, { method: 'DELETE' });
      expect(del.status).toBe(405);

      const notAccepting = await rpc(host.url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), { accept: 'application/json' });
      expect(notAccepting.status).toBe(406);

      // Last: a host may close the connection after refusing a body it did not read to its end.
      const big = await rpc(host.url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_clearances', arguments: { query: 'x'.repeat(70_000) } } }));
      expect(big.status).toBe(413);
      expect(((await big.json()) as any).error.code).toBe(-32600);
    });
  });

  describe(`MCP results cut by the byte budget on ${target}`, () => {
    let small: { url: string; close: () => Promise<void> };
    let client: Client;
    beforeAll(async () => {
      small = await smallBudgetHost(target, 4096);
      client = await connectClient(overHttp(small.url));
    });
    afterAll(async () => {
      await client?.close();
      await small?.close();
    });

    it('cuts a page of records to the budget, says so, and its next pages go on exactly where it stopped', async () => {
      const first = await call(client, 'search_clearances', { query: '', pageSize: 50 });
      expect(first.structured.cut).not.toBeNull();
      expect(first.structured.cut.budgetBytes).toBe(4096);
      expect(first.structured.items.length).toBe(first.structured.cut.shown);
      expect(first.structured.items.length).toBeLessThan(50);
      expect(new TextEncoder().encode(JSON.stringify(first.structured)).length).toBeLessThanOrEqual(4096);
      expect(new TextEncoder().encode(first.text).length).toBeLessThanOrEqual(4096);
      expect(first.text).toMatch(/Cut to fit 4096 bytes: \d+ of 50 records of this page shown\. Next: call search_clearances with \{/);
      // Follow `next` until 100 records are in hand: the same as /v1/query's first two pages of 50.
      const seen: string[] = first.structured.items.map((i: any) => i.kNumber);
      let next = first.structured.next;
      while (seen.length < 100) {
        const page = await call(client, 'search_clearances', next);
        seen.push(...page.structured.items.map((i: any) => i.kNumber));
        next = page.structured.next;
      }
      const expected: string[] = [];
      for (const page of [1, 2, 3]) {
        const answer = await query(small.url, 'device-510k.search', { query: '', applicant: null, productCode: null, yearFrom: null, yearTo: null, page, pageSize: 50 });
        expected.push(...answer.json.data.items.map((i: any) => i.kNumber));
      }
      expect(seen).toEqual(expected.slice(0, seen.length));
    });

    it('cuts a lineage page to the budget and its next goes on after the last device shown, to the end', async () => {
      const start = longestChain();
      const whole = await query(small.url, 'device-510k.lineage', { id: start, direction: 'predicates', depth: null, kinds: null, limit: 500, cursor: null });
      expect(whole.json.page.total).toBeGreaterThan(100);
      const seen: string[] = [];
      let args: any = { id: start, limit: 500 };
      let cuts = 0;
      while (args) {
        const page = await call(client, 'lineage', args);
        expect(page.isError).toBe(false);
        expect(new TextEncoder().encode(JSON.stringify(page.structured)).length).toBeLessThanOrEqual(4096);
        expect(new TextEncoder().encode(page.text).length).toBeLessThanOrEqual(4096);
        if (page.structured.cut) cuts++;
        seen.push(...page.structured.items.map((i: any) => i.kNumber));
        args = page.structured.next;
      }
      expect(cuts).toBeGreaterThan(0);
      expect(seen).toEqual(whole.json.data.items.map((i: any) => i.kNumber));
    });

    it('cuts a long list of counts and pages on through every value', async () => {
      const values: any[] = [];
      let args: any = { field: 'applicant', size: null };
      let calls = 0;
      while (args) {
        const page = await call(client, 'count_by', args);
        expect(page.isError).toBe(false);
        values.push(...page.structured.values);
        args = page.structured.next;
        calls++;
      }
      expect(calls).toBeGreaterThan(1);
      const all = await query(small.url, 'device-510k.search', {
        query: '', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 1, facets: [{ field: 'applicant', size: null, order: 'count' }],
      });
      expect(values).toEqual(all.json.facets[0].values);
    });
  });
}
