import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SourceState, type ClearanceRecord } from '../../src/contract/index.ts';
import { modelWalk, readModel } from '../helpers/lineage-model.ts';
import { post } from '../server/helpers.ts';

/**
 * What every MCP host must answer the same: the tools and resources listed, and each tool's answer equal to the
 * same question asked through /v1/query (or /v1/changes) of `apiUrl`, and to a scan of the records where a count is
 * asked. Used over Streamable HTTP (Node, Worker) and stdio (remote and local snapshot), each through `describeMcp`.
 */

/** The official SDK's client, connected over `transport`. */
export async function connectClient(transport: Transport): Promise<Client> {
  const client = new Client({ name: 'device-510k-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** What a host under test gives the shared checks: its client, the URL asked the same questions, and the records. */
export type McpSide = { client: () => Client; apiUrl: () => string; records: () => readonly ClearanceRecord[] };

/**
 * The checks every host passes, registered in the describe block that calls this: a client is connected before them
 * (over the transport `connect` gives) and closed after. Returns the side, for the block's own tests.
 */
export function mcpChecks(connect: () => Promise<Transport>, side: Omit<McpSide, 'client'>): McpSide {
  let client: Client;
  beforeAll(async () => {
    client = await connectClient(await connect());
  }, 60_000);
  afterAll(async () => {
    await client?.close();
  });
  const s: McpSide = { ...side, client: () => client };

  it('initializes and lists the tools (read-only, schemas from the contract) and the resources', async () => {
    await checkListing(client);
  });

  it('reads the resources: the query syntax, the fields as meta gives them, the source state', async () => {
    await checkResources(client, s.apiUrl());
  });

  it('answers every tool as /v1/query answers the same question', async () => {
    await checkTools(client, s.apiUrl(), s.records());
  });

  it('answers lineage as /v1/query and an independent walk of the edge files do, and pages on by its next', async () => {
    await checkLineage(client, s.apiUrl());
  });

  it('answers a failure as a tool result with the error table message', async () => {
    await checkErrors(client, s.apiUrl());
  });

  return s;
}

export const TOOL_NAMES = ['search_clearances', 'count_by', 'get_clearance', 'get_classification', 'review_time_stats', 'changes_since', 'lineage'];

type Json = Record<string, any>;

export async function query(apiUrl: string, operation: string, input: Json): Promise<{ status: number; json: Json }> {
  const answer = await post(apiUrl, { version: 1, operation, input });
  return { status: answer.status, json: answer.json as Json };
}

const search = (input: Json) => ({ query: '', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10, ...input });

/** Calls a tool and returns its structured content (the client has checked it against the tool's output schema). */
export async function call(client: Client, name: string, args: Json): Promise<{ structured: Json; text: string; isError: boolean }> {
  const result = (await client.callTool({ name, arguments: args })) as { structuredContent?: Json; content: { type: string; text: string }[]; isError?: boolean };
  return { structured: result.structuredContent ?? {}, text: result.content.map((c) => c.text).join('\n'), isError: result.isError === true };
}

async function checkListing(client: Client): Promise<void> {
  expect(client.getServerVersion()?.name).toBe('device-510k');
  const caps = client.getServerCapabilities();
  expect(caps?.tools).toBeDefined();
  expect(caps?.resources).toBeDefined();
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
  const byName = new Map(tools.map((t) => [t.name, t]));
  for (const t of tools) {
    expect(t.annotations?.readOnlyHint, t.name).toBe(true);
    expect(t.annotations?.destructiveHint, t.name).toBe(false);
    expect(t.outputSchema?.type, t.name).toBe('object');
    expect((t.description ?? '').length, t.name).toBeGreaterThan(80);
  }
  expect(byName.get('search_clearances')?.inputSchema.required).toEqual(['query']);
  expect(byName.get('count_by')?.inputSchema.required).toEqual(['field']);
  expect(byName.get('get_clearance')?.inputSchema.required).toEqual(['id']);
  expect(byName.get('lineage')?.inputSchema.required).toEqual(['id']);
  expect(Object.keys(byName.get('lineage')?.inputSchema.properties ?? {}).sort()).toEqual(['cursor', 'depth', 'direction', 'id', 'kinds', 'limit']);
  expect(Object.keys(byName.get('search_clearances')?.inputSchema.properties ?? {}).sort()).toEqual(
    ['applicant', 'page', 'pageSize', 'productCode', 'query', 'sort', 'yearFrom', 'yearTo'].sort(),
  );
  const { resources } = await client.listResources();
  expect(resources.map((r) => r.uri).sort()).toEqual(['device-510k://docs/query-syntax', 'device-510k://fields', 'device-510k://source-state']);
}

/** A resource's text. */
async function read(client: Client, uri: string): Promise<string> {
  const { contents } = await client.readResource({ uri });
  const first = contents[0] as { text?: string } | undefined;
  return String(first?.text);
}

async function checkResources(client: Client, apiUrl: string): Promise<void> {
  const meta = await query(apiUrl, 'device-510k.meta', {});
  expect(await read(client, 'device-510k://docs/query-syntax')).toContain('decided:2024');
  const fields = JSON.parse(await read(client, 'device-510k://fields'));
  expect(fields.countByFields).toEqual(meta.json.data.facetFields);
  expect(fields.qualifiers).toEqual(meta.json.data.qualifiers);
  expect(fields.totalRecords).toBe(meta.json.data.totalRecords);
  const state = SourceState.parse(JSON.parse(await read(client, 'device-510k://source-state')));
  const { servedAt: _a, ...rest } = state;
  const { servedAt: _b, ...expected } = meta.json.sourceState;
  expect(rest).toEqual(expected);
  await expect(client.readResource({ uri: 'device-510k://nothing' })).rejects.toThrow(/Resource not found/);
}

const COMPACT = ['kNumber', 'deviceName', 'applicant', 'productCode', 'decisionDate', 'decisionDescription', 'receivedDate', 'reviewDays'];
const compact = (r: Json) => Object.fromEntries(COMPACT.map((m) => [m, r[m]]));

/** Every tool, each answer compared with /v1/query's and with a scan of `records`. */
async function checkTools(client: Client, apiUrl: string, records: readonly ClearanceRecord[]): Promise<void> {
  // search_clearances
  const q = { query: 'catheter', pageSize: 5, page: 2, sort: 'decisionDate:desc' };
  const s = await call(client, 'search_clearances', q);
  const sq = await query(apiUrl, 'device-510k.search', search(q));
  expect(s.isError).toBe(false);
  expect(s.structured.total).toBe(sq.json.page.total);
  expect(s.structured.total).toBeGreaterThan(10);
  expect(s.structured.items).toEqual(sq.json.data.items.map(compact));
  expect(s.structured.facets).toEqual(sq.json.facets);
  expect(s.structured.cut).toBeNull();
  expect(s.structured.next).toEqual({ ...q, page: 3 });
  expect(s.text).toContain(String(sq.json.data.items[0].kNumber));

  // count_by: every product code over every record, against a scan of the records.
  const byCode = new Map<string, number>();
  for (const r of records) if (r.productCode) byCode.set(r.productCode, (byCode.get(r.productCode) ?? 0) + 1);
  const c = await call(client, 'count_by', { field: 'productCode', size: null });
  expect(c.isError).toBe(false);
  expect(c.structured.total).toBe(records.length);
  expect(new Map(c.structured.values.map((v: Json) => [v.value, v.count]))).toEqual(byCode);
  expect(c.structured.hasMore).toBe(false);
  const cq = await query(apiUrl, 'device-510k.search', search({ pageSize: 1, facets: [{ field: 'productCode', size: null, order: 'count' }] }));
  expect(c.structured.values).toEqual(cq.json.facets[0].values);
  // A search and a few values, by year.
  const years = await call(client, 'count_by', { field: 'decisionYear', query: 'catheter', size: 3, order: 'value' });
  const yq = await query(apiUrl, 'device-510k.search', search({ query: 'catheter', pageSize: 1, facets: [{ field: 'decisionYear', size: 4, order: 'value' }] }));
  expect(years.structured.values).toEqual(yq.json.facets[0].values.slice(0, 3));
  expect(years.structured.total).toBe(yq.json.page.total);
  expect(years.structured.hasMore).toBe(yq.json.facets[0].values.length > 3);

  // get_clearance and get_classification
  const some = records.find((r) => r.productCode !== null) as ClearanceRecord;
  const g = await call(client, 'get_clearance', { id: some.kNumber.toLowerCase() });
  expect(g.structured.record).toEqual(some);
  const gq = await query(apiUrl, 'device-510k.detail', { id: some.kNumber });
  expect(g.structured.record).toEqual(gq.json.data.record);
  const k = await call(client, 'get_classification', { productCode: String(some.productCode).toLowerCase() });
  const kq = await query(apiUrl, 'device-510k.classification', { productCode: some.productCode });
  expect(k.structured.classification).toEqual(kq.json.data);

  // review_time_stats: the count is every matching record with a review time.
  const code = [...byCode.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] as string;
  const rt = await call(client, 'review_time_stats', { productCode: code });
  const rq = await query(apiUrl, 'device-510k.search', search({ productCode: code, pageSize: 1, stats: true }));
  expect(rt.structured.total).toBe(byCode.get(code));
  expect(rt.structured.reviewDays).toEqual(rq.json.data.stats.reviewDays);
  expect(rt.structured.reviewDays.count).toBe(records.filter((r) => r.productCode === code && r.reviewDays !== null).length);

  // changes_since: the same change sets and changes as /v1/changes.
  const changes = await fetch(`${apiUrl}/v1/changes?since=2026-01-01`).then((r) => r.json() as Promise<Json>);
  const ch = await call(client, 'changes_since', { since: '2026-01-01' });
  expect(ch.isError).toBe(false);
  expect(ch.structured.completeSince).toBe(changes.completeSince);
  expect(ch.structured.historyStartsAfterSince).toBe(changes.historyStartsAfterSince === true);
  expect(ch.structured.sets).toEqual(changes.sets.map(({ changes: _c, ...set }: Json) => set));
  expect(ch.structured.changes).toEqual(changes.sets.flatMap((set: Json) => set.changes.map((c: Json) => ({ at: set.at, ...c }))));
  expect(ch.structured.totalChanges).toBe(ch.structured.changes.length);
}

/** Failures as tool results with the error table's message; protocol mistakes as JSON-RPC errors. */
async function checkErrors(client: Client, apiUrl: string): Promise<void> {
  const missing = await call(client, 'get_clearance', { id: 'K000000' });
  const mq = await query(apiUrl, 'device-510k.detail', { id: 'K000000' });
  expect(missing.isError).toBe(true);
  expect(missing.text).toBe(`record_not_found: ${mq.json.error.message}`);

  const bad = await call(client, 'search_clearances', { query: 'colour:red' });
  const bq = await query(apiUrl, 'device-510k.search', search({ query: 'colour:red' }));
  expect(bad.isError).toBe(true);
  expect(bq.json.error.code).toBe('invalid_input');
  expect(bad.text.split('\n')[0]).toBe(`invalid_input: ${bq.json.error.message}`);

  const args = await call(client, 'search_clearances', { pageSize: 51 });
  expect(args.isError).toBe(true);
  expect(args.text).toContain('invalid_input: arguments.query is required (and 1 more problem).');
  expect(args.text).toContain('- arguments.pageSize must be at most 50');

  const extra = await call(client, 'get_classification', { productCode: 'DXY', colour: 'red' });
  expect(extra.text).toBe('invalid_input: arguments.colour is not a field of get_classification.');

  const early = await call(client, 'changes_since', { since: '1990-01-01' });
  const eq = await fetch(`${apiUrl}/v1/changes?since=1990-01-01`).then((r) => r.json() as Promise<Json>);
  expect(early.isError).toBe(false);
  expect(eq.historyStartsAfterSince).toBe(true);
  expect(early.structured.historyStartsAfterSince).toBe(true);
  expect(early.structured.totalChanges).toBe(eq.sets.reduce((n: number, s: Json) => n + s.changes.length, 0));
  expect(early.text).toContain(`changes before ${eq.completeSince} are not known`);

  const notADay = await call(client, 'changes_since', { since: 'yesterday' });
  expect(notADay.isError).toBe(true);
  expect(notADay.text).toBe('invalid_input: arguments.since is malformed.');

  await expect(client.callTool({ name: 'drop_tables', arguments: {} })).rejects.toThrow(/-32602.*Unknown tool: drop_tables/);
}

const EDGES = fileURLToPath(new URL('../fixtures/fda/predicates', import.meta.url));
const lineageInput = (input: Json) => ({ direction: 'predicates', depth: null, kinds: null, limit: 25, cursor: null, ...input });

/**
 * lineage: the defaults, each member given, and a walk paged through by `next`, each answer compared with
 * device-510k.lineage asked of /v1/query and with an independent walk of the fixture's edge files.
 */
async function checkLineage(client: Client, apiUrl: string): Promise<void> {
  const model = readModel(EDGES);
  // The device named by the most clearances: a walk with several depths, more devices than a page, and records.
  const hub = [...model.reverse.entries()].sort((a, b) => b[1].length - a[1].length || (a[0] < b[0] ? -1 : 1))[0]![0];
  const walk = modelWalk(model, hub, 'descendants', null, null);
  expect(walk.items.length).toBeGreaterThan(25);

  // Defaults: predicates, the whole chain, both kinds, 25 a page.
  const up = await call(client, 'lineage', { id: hub.toLowerCase() });
  const upq = await query(apiUrl, 'device-510k.lineage', lineageInput({ id: hub }));
  expect(up.isError).toBe(false);
  expect(up.structured.id).toBe(hub);
  expect(up.structured.direction).toBe('predicates');
  expect(up.structured.total).toBe(upq.json.page.total);
  expect(up.structured.total).toBe(modelWalk(model, hub, 'predicates', null, null).items.length);

  // Descendants, paged through by `next` until the end: every device once, in the model's order, with its record.
  const devices: Json[] = [];
  let args: Json | null = { id: hub, direction: 'descendants', limit: 10 };
  let pages = 0;
  while (args) {
    const page = await call(client, 'lineage', args);
    expect(page.isError).toBe(false);
    const asked = await query(apiUrl, 'device-510k.lineage', lineageInput({ ...args, limit: args.limit ?? 25 }));
    expect(page.structured.items).toEqual(asked.json.data.items.map((i: Json) => ({ ...i, record: i.record && compact(i.record) })));
    expect(page.structured.byDepth).toEqual(asked.json.data.byDepth);
    expect(page.structured.byYear).toEqual(asked.json.data.byYear);
    expect(page.structured.cyclesTotal).toBe(asked.json.data.cycles.length);
    expect(page.structured.total).toBe(walk.items.length);
    devices.push(...page.structured.items);
    args = page.structured.next;
    pages++;
  }
  expect(pages).toBe(Math.ceil(walk.items.length / 10));
  expect(devices.map(({ kNumber, depth, via, kind, source }) => ({ kNumber, depth, via, kind, source }))).toEqual(walk.items);

  // Depth and kinds as given.
  const near = await call(client, 'lineage', { id: hub, direction: 'descendants', depth: 1, kinds: ['named'], limit: 500 });
  const nearModel = modelWalk(model, hub, 'descendants', 1, ['named']);
  expect(near.structured.items.map((i: Json) => i.kNumber)).toEqual(nearModel.items.map((i) => i.kNumber));
  expect(near.structured.next).toBeNull();
  expect(near.text).toContain(`Descendants of ${hub}`);

  // Errors: a number nothing knows, and arguments the tool refuses.
  const missing = await call(client, 'lineage', { id: 'K000001' });
  const mq = await query(apiUrl, 'device-510k.lineage', lineageInput({ id: 'K000001' }));
  expect(missing.isError).toBe(true);
  expect(missing.text).toBe(`record_not_found: ${mq.json.error.message}`);
  const bad = await call(client, 'lineage', { id: hub, direction: 'sideways', limit: 501 });
  expect(bad.isError).toBe(true);
  expect(bad.text).toContain('- arguments.direction must be "predicates" or "descendants"');
  expect(bad.text).toContain('- arguments.limit must be at most 500');
}
