import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS, FACET_FIELDS, OPERATION_NAMES, type ErrorCode, type OperationName } from '../../src/contract/index.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { VALID_INPUT, allProductCodes, allRecords, envelope, expectError, expectOk, post, type Answer, type Running } from '../server/helpers.ts';
import { readModel } from '../helpers/lineage-model.ts';
import { startNodeAndWorkers, type NamedWorker } from './hosts.ts';

/**
 * The contract's core against both hosts: every answer of the Worker under workerd (over R2 and over static
 * assets) is checked with the contract's schemas, and equals the Node server's answer to the same request byte for
 * byte once `servedAt` is blanked.
 */
let node: Running;
let targets: NamedWorker[];
let close: (() => Promise<void>) | undefined;
let snapshotPath: string;

beforeAll(async () => {
  snapshotPath = await buildFixtureSnapshot();
  ({ node, workers: targets, close } = await startNodeAndWorkers(snapshotPath, { uncached: true }));
});
afterAll(async () => {
  await close?.();
});

const SERVED_AT = /"servedAt":"[^"]*"/g;
const blank = (text: string) => text.replace(SERVED_AT, '"servedAt":""');

type Case = { body: unknown; headers?: Record<string, string> };

/** Sends the same request to Node and to each Worker; checks status, JSON headers and bytes; returns the answers. */
async function same(c: Case): Promise<Answer[]> {
  const nodeAnswer = await post(node.url, c.body, c.headers);
  const answers = [nodeAnswer];
  for (const { name, worker } of targets) {
    const answer = await post(worker.url, c.body, c.headers);
    expect({ target: name, status: answer.status }).toEqual({ target: name, status: nodeAnswer.status });
    expect(answer.headers.get('content-type')).toBe(nodeAnswer.headers.get('content-type'));
    expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    expect(blank(answer.text), name).toBe(blank(nodeAnswer.text));
    answers.push(answer);
  }
  return answers;
}

async function ok<N extends OperationName>(operation: N, input: unknown) {
  const answers = await same({ body: envelope(operation, input) });
  return answers.map((a) => expectOk(a, operation));
}

async function fails(c: Case, code: ErrorCode, operation: string | null = null) {
  const answers = await same(c);
  for (const a of answers) expectError(a, ERROR_STATUS[code], code, operation);
}

describe('every operation answers the same bytes on Node and on the Worker', () => {
  it('detail, for every record of the snapshot', async () => {
    const records = await allRecords(snapshotPath);
    expect(records.length).toBeGreaterThan(100);
    for (const r of records) {
      const [fromNode, ...fromWorkers] = await ok('device-510k.detail', { id: r.kNumber });
      expect(fromNode?.data.record).toEqual(r);
      expect(fromWorkers).toHaveLength(3);
    }
  }, 180_000);

  it('classification, for every product code', async () => {
    const codes = await allProductCodes(snapshotPath);
    expect(codes.length).toBeGreaterThan(10);
    for (const c of codes) await ok('device-510k.classification', { productCode: c.productCode });
  }, 180_000);

  it('meta and top-product-codes', async () => {
    await ok('device-510k.meta', {});
    for (const limit of [1, 5, 50]) await ok('device-510k.top-product-codes', { limit });
  });

  it('search: words, prefixes, filters, pages and no match', async () => {
    const base = VALID_INPUT['device-510k.search'];
    const inputs = [
      base,
      { ...base, query: 'catheter', pageSize: 50 },
      { ...base, query: 'pace', page: 2, pageSize: 5 },
      { ...base, query: '', yearFrom: 2000, yearTo: 2020 },
      { ...base, query: 'system', productCode: 'HSX' },
      { ...base, query: 'k26', applicant: null },
      { ...base, query: 'zzzzqqq' },
      // Over the chunked index: every facet and the statistics (whole columns), sorts, a phrase and qualifiers.
      { ...base, query: 'pump', facets: FACET_FIELDS.map((field) => ({ field })), stats: true },
      { ...base, query: '', facets: FACET_FIELDS.map((field) => ({ field })) },
      { ...base, query: 'catheter', sort: 'kNumber:asc', pageSize: 20 },
      { ...base, query: 'system', sort: 'receivedDate:desc', page: 3, pageSize: 7 },
      { ...base, query: '"infusion pump"' },
      { ...base, query: 'class:2 catheter', sort: 'reviewDays:desc' },
    ];
    for (const input of inputs) await ok('device-510k.search', input);
    // Predicates: the most-cited device (as every host counts it), its citers with and without a kind, and kind: alone.
    const [top] = (await ok('device-510k.search', { ...base, facets: [{ field: 'predicate', size: 1 }] })) as { facets: { values: { value: string; count: number }[] }[] }[];
    const cited = top!.facets[0]!.values[0]!;
    expect(cited.count).toBeGreaterThan(0);
    for (const query of [`predicate:${cited.value}`, `predicate:${cited.value} kind:named`, `-predicate:${cited.value} kind:named`, 'kind:predicate']) {
      await ok('device-510k.search', { ...base, query, facets: [{ field: 'predicate', size: null }], pageSize: 50 });
    }
  });

  it('catalog: whole walks of both kinds, each cursor of one host accepted by the others', async () => {
    for (const kind of ['clearance', 'product-code'] as const) {
      let cursor: string | null = null;
      let pages = 0;
      let turn = 0;
      do {
        const answers: { page: { nextCursor: string | null } }[] = await ok('device-510k.catalog', { kind, limit: 37, cursor });
        // The cursor to follow comes from Node, then from each Worker in turn: all of them sign it the same way.
        const from = answers[turn++ % answers.length];
        cursor = from?.page.nextCursor ?? null;
        pages++;
      } while (cursor !== null);
      expect(pages).toBeGreaterThan(1);
    }
  });

  it('lineage: walks both ways over the same lineage files, pages and cursors from each host, records and cycles', async () => {
    const model = readModel(new URL('../fixtures/fda/predicates', import.meta.url).pathname);
    const cited = [...model.reverse.keys()].sort().reduce((a, b) => ((model.reverse.get(b)?.length ?? 0) > (model.reverse.get(a)?.length ?? 0) ? b : a));
    const starts = [cited, 'K875083', 'K880522', 'K142247', 'DEN200002', ...[...model.forward.keys()].sort().slice(0, 20)];
    let items = 0;
    for (const id of starts) {
      for (const direction of ['predicates', 'descendants'] as const) {
        for (const kinds of [null, ['predicate']]) {
          let cursor: string | null = null;
          let turn = 0;
          do {
            const answers: { page: { nextCursor: string | null }; data: { items: unknown[] } }[] = await ok('device-510k.lineage', { id, direction, depth: null, kinds, limit: 7, cursor });
            items += answers[0]?.data.items.length ?? 0;
            cursor = answers[turn++ % answers.length]?.page.nextCursor ?? null;
          } while (cursor !== null);
        }
      }
    }
    expect(items).toBeGreaterThan(100);
  }, 180_000);
});

describe('every error answers the same bytes on Node and on the Worker', () => {
  const json = { 'content-type': 'application/json' };
  it('malformed_json: not JSON, and not UTF-8', async () => {
    await fails({ body: '{"version":1,', headers: json }, 'malformed_json');
    await fails({ body: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]), headers: json }, 'malformed_json');
  });
  it('invalid_request, unsupported_version, unknown_operation', async () => {
    await fails({ body: [1, 2] }, 'invalid_request');
    await fails({ body: { version: '1', input: 3 } }, 'invalid_request');
    await fails({ body: { version: 2, operation: 'device-510k.meta', input: {} } }, 'unsupported_version', 'device-510k.meta');
    await fails({ body: envelope('device-510k.nothing', {}) }, 'unknown_operation');
  });
  it('invalid_input for every operation', async () => {
    for (const operation of OPERATION_NAMES) {
      if (operation === 'device-510k.meta') continue;
      await fails({ body: envelope(operation, { ...VALID_INPUT[operation], unexpected: true, limit: -1, pageSize: 0 }) }, 'invalid_input', operation);
    }
  });
  it('invalid_cursor: an altered one', async () => {
    const first = await ok('device-510k.catalog', { kind: 'clearance', limit: 5, cursor: null });
    const cursor = first[0]?.page?.nextCursor ?? '';
    const altered = `${cursor.slice(0, -2)}${cursor.endsWith('AA') ? 'AB' : 'AA'}`;
    await fails({ body: envelope('device-510k.catalog', { kind: 'clearance', limit: 5, cursor: altered }) }, 'invalid_cursor', 'device-510k.catalog');
  });
  it('record_not_found and product_code_not_found', async () => {
    await fails({ body: envelope('device-510k.detail', { id: 'K000000' }) }, 'record_not_found', 'device-510k.detail');
    await fails({ body: envelope('device-510k.lineage', { ...VALID_INPUT['device-510k.lineage'], id: 'K000001' }) }, 'record_not_found', 'device-510k.lineage');
    await fails({ body: envelope('device-510k.classification', { productCode: 'QQQ' }) }, 'product_code_not_found', 'device-510k.classification');
  });
  it('unsupported_media_type', async () => {
    await fails({ body: JSON.stringify(envelope('device-510k.meta', {})), headers: { 'content-type': 'text/plain' } }, 'unsupported_media_type', 'device-510k.meta');
  });
  it('request_too_large, by its length', async () => {
    await fails({ body: `{"version":1,"operation":"device-510k.meta","input":{"pad":"${'x'.repeat(70 * 1024)}"}}`, headers: json }, 'request_too_large');
  });
  it('method_not_allowed and not_found', async () => {
    for (const target of [node.url, ...targets.map((t) => t.worker.url)]) {
      const get = await fetch(`${target}/v1/query`);
      const text = await get.text();
      expectError({ status: get.status, headers: get.headers, text, json: JSON.parse(text) }, 405, 'method_not_allowed');
      expect(get.headers.get('allow')).toBe('POST, OPTIONS');
      const options = await fetch(`${target}/v1/query`, { method: 'OPTIONS' });
      expect(options.status).toBe(204);
      expect(options.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS');
    }
  });
  it('healthz and the OpenAPI document are the same', async () => {
    for (const path of ['/healthz', '/v1/openapi.json']) {
      const expected = blank(await (await fetch(`${node.url}${path}`)).text());
      for (const { worker } of targets) expect(blank(await (await fetch(`${worker.url}${path}`)).text())).toBe(expected);
    }
  });
});
