import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseSchemas, type ClearanceRecord } from '../../src/contract/index.ts';
import { configFromEnv } from '../../src/server/config.ts';
import { resolveAppOptions } from '../../src/server/app-options.ts';
import { startWorker } from '../../build/worker/local.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { readModel } from '../helpers/lineage-model.ts';
import { allRecords, expectError, post, startServer } from '../server/helpers.ts';
import { TARGETS, type TargetName } from './targets.ts';

/**
 * The bound on the values one search facet lists (docs/limits.md), on each host, with the host's setting lowered to
 * the fixture's own counts: a facet that would list more is refused with a 400 naming its size and the bound, one at
 * the bound answers every value. Every expected count is read from the records and the edge files, not the engine.
 */
const SearchResponse = ResponseSchemas['device-510k.search'];
const NONE = { query: '', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 1 };

let snapshotPath: string;
let records: ClearanceRecord[];
/** The fixture's decision days and cited devices, each with its count over every record. */
let days: Map<string, number>;
let cited: Map<string, number>;

beforeAll(async () => {
  snapshotPath = await buildFixtureSnapshot();
  records = await allRecords(snapshotPath);
  days = new Map();
  for (const r of records) if (r.decisionDate !== null) days.set(r.decisionDate, (days.get(r.decisionDate) ?? 0) + 1);
  // A record counts once under each device its edges name, of any kind.
  const model = readModel(fileURLToPath(new URL('../fixtures/fda/predicates', import.meta.url)));
  cited = new Map();
  for (const r of records) for (const to of new Set((model.forward.get(r.kNumber) ?? []).map((e) => e.to))) cited.set(to, (cited.get(to) ?? 0) + 1);
});

const byValue = (m: Map<string, number>) => [...m].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([value, count]) => ({ value, count }));

async function hostWith(target: TargetName, max: number): Promise<{ url: string; close: () => Promise<void> }> {
  if (target === 'node') return startServer({ snapshotPath, facetValuesMax: max });
  return startWorker({ snapshotPath, storage: 'assets', vars: { FACET_VALUES_MAX: String(max) } });
}

for (const target of TARGETS) {
  describe(`a facet's values bounded on ${target}`, () => {
    for (const field of ['decisionDate', 'predicate'] as const) {
      const counts = () => (field === 'decisionDate' ? days : cited);

      describe(`${field}, bound at its count of values`, () => {
        let host: { url: string; close: () => Promise<void> };
        beforeAll(async () => {
          // Not vacuous: enough values that one less, and a size below, mean something.
          expect(counts().size).toBeGreaterThan(10);
          host = await hostWith(target, counts().size);
        });
        afterAll(() => host?.close());

        it('answers every value, each counted as the data says', async () => {
          const answer = await post(host.url, { version: 1, operation: 'device-510k.search', input: { ...NONE, facets: [{ field: 'decisionYear', size: null }, { field, size: null, order: 'value' }] } });
          expect(answer.status, answer.text.slice(0, 300)).toBe(200);
          const body = SearchResponse.parse(answer.json);
          expect(body.page.total).toBe(records.length);
          expect(body.facets[1]).toEqual({ field, values: byValue(counts()) });
        });
      });

      describe(`${field}, bound one below its count of values`, () => {
        let host: { url: string; close: () => Promise<void> };
        beforeAll(async () => {
          host = await hostWith(target, counts().size - 1);
        });
        afterAll(() => host?.close());

        it('refuses size null with a 400 that names the facet, its count and the bound', async () => {
          const max = counts().size - 1;
          const answer = await post(host.url, { version: 1, operation: 'device-510k.search', input: { ...NONE, facets: [{ field: 'decisionYear', size: null }, { field, size: null }] } });
          const body = expectError(answer, 400, 'invalid_input', 'device-510k.search');
          const n = (x: number) => x.toLocaleString('en-US');
          expect(body.error.details).toEqual([{ path: 'input.facets[1].size', message: expect.stringContaining(`would list ${n(counts().size)} values of "${field}"`) }]);
          expect(body.error.message).toContain(`input.facets[1].size`);
          expect(body.error.message).toContain(`at most ${n(max)} values`);
          expect(body.error.message).toContain(`a size from 1 to ${n(max)}`);
        });

        it('answers a size within the bound: the most frequent values first, counted as the data says', async () => {
          const size = counts().size - 1;
          const answer = await post(host.url, { version: 1, operation: 'device-510k.search', input: { ...NONE, facets: [{ field, size, order: 'count' }] } });
          expect(answer.status, answer.text.slice(0, 300)).toBe(200);
          const values = SearchResponse.parse(answer.json).facets[0]!.values as { value: string; count: number }[];
          expect(values).toHaveLength(size);
          for (const v of values) expect(v.count, v.value).toBe(counts().get(v.value));
          // Count descending, then value ascending: the one left out is the last of that order.
          const order = [...counts()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
          expect(values.map((v) => v.value)).toEqual(order.slice(0, size).map(([value]) => value));
        });

        if (target === 'node') {
          it('refuses count_by over MCP as a tool error naming its size argument', async () => {
            const res = await fetch(`${host.url}/mcp`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
              body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'count_by', arguments: { field, size: null } } }),
            });
            expect(res.status).toBe(200);
            const result = ((await res.json()) as { result: { isError?: boolean; content: { text: string }[] } }).result;
            expect(result.isError).toBe(true);
            expect(result.content[0]!.text).toMatch(new RegExp(`^invalid_input: arguments\\.size would list ${counts().size.toLocaleString('en-US')} values of "${field}"`));
          });

          it('answers count_by for exactly the host\'s bound of values, saying more follow', async () => {
            const size = counts().size - 1;
            const res = await fetch(`${host.url}/mcp`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
              body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'count_by', arguments: { field, size } } }),
            });
            expect(res.status).toBe(200);
            const result = ((await res.json()) as { result: { isError?: boolean; structuredContent: { values: { value: string; count: number }[]; hasMore: boolean } } }).result;
            expect(result.isError).not.toBe(true);
            const order = [...counts()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
            expect(result.structuredContent.values.map((v) => [v.value, v.count])).toEqual(order.slice(0, size));
            expect(result.structuredContent.hasMore).toBe(true);
          });
        }
      });
    }
  });
}

describe('the bound as a setting', () => {
  it('is a whole number from 1 to the contract\'s figure, refused at start-up otherwise', () => {
    for (const bad of [0, -1, 1.5, 50_001]) expect(() => resolveAppOptions({ snapshotPath: 'snapshot', facetValuesMax: bad })).toThrow(/`facetValuesMax` to be a whole number from 1 to 50000/);
    expect(resolveAppOptions({ snapshotPath: 'snapshot' }).facetValuesMax).toBe(50_000);
    expect(configFromEnv({ FACET_VALUES_MAX: '120' }).facetValuesMax).toBe(120);
    expect(() => configFromEnv({ FACET_VALUES_MAX: 'many' })).toThrow(/FACET_VALUES_MAX/);
  });
});
