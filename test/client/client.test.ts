import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { createClient, QueryError, type AnswerOf, type Client } from 'device-510k/client';
import { Manifest, LAYOUT } from '../../src/contract/index.ts';
import { sha256Hex } from '../../src/utils/sha256-hex.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { allProductCodes, allRecords, startServer, type Running } from '../server/helpers.ts';

/** The package's typed client (`device-510k/client`) against the real server over the fixture snapshot. */
let server: Running;
let client: Client;
let snapshotPath: string;

beforeAll(async () => {
  snapshotPath = await buildFixtureSnapshot();
  server = await startServer({ snapshotPath });
  client = createClient({ baseUrl: server.url });
});
afterAll(() => server?.close());

describe('createClient', () => {
  it('runs each operation and gives its answer, parsed and typed', async () => {
    const detail = await client.query('device-510k.detail', { id: ' k802527 ' });
    expectTypeOf(detail).toEqualTypeOf<AnswerOf<'device-510k.detail'>>();
    expect(detail.data.record.kNumber).toBe('K802527');

    const search = await client.query('device-510k.search', { query: 'pacemaker', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10 });
    expect(search.page.total).toBeGreaterThan(0);
    expect(search.facets.map((f) => f.field)).toEqual(['productCode', 'applicant', 'decisionYear']);

    const codes = await client.query('device-510k.top-product-codes', { limit: 3 });
    expect(codes.data.codes).toHaveLength(3);

    const first = await client.query('device-510k.catalog', { kind: 'clearance', limit: 2, cursor: null });
    const next = await client.query('device-510k.catalog', { kind: 'clearance', limit: 2, cursor: first.page.nextCursor });
    expect(next.data.items).toHaveLength(2);
    expect(next.data.items[0]).not.toEqual(first.data.items[0]);

    const meta = await client.query('device-510k.meta', {});
    expect(meta.data.title).toBe('FDA 510(k) Premarket Notifications');
  });

  it('tags catalog items with their kind, so that item.kind narrows them', async () => {
    const clearances = await client.query('device-510k.catalog', { kind: 'clearance', limit: 3, cursor: null });
    expectTypeOf(clearances.data.items[0]?.kNumber).toEqualTypeOf<string | undefined>();
    // Expected from the snapshot's shard files, in the catalog's order (kNumber, then productCode ascending).
    expect(clearances.data.items).toEqual((await allRecords(snapshotPath)).slice(0, 3).map((r) => ({ kind: 'clearance', ...r })));
    const codes = await client.query('device-510k.catalog', { kind: 'product-code', limit: 3, cursor: null });
    expect(codes.data.items).toEqual((await allProductCodes(snapshotPath)).slice(0, 3).map((e) => ({ kind: 'product-code', ...e })));

    const kind = 'product-code' as 'clearance' | 'product-code';
    const either = await client.query('device-510k.catalog', { kind, limit: 1, cursor: null });
    const names = either.data.items.map((item) => (item.kind === 'clearance' ? item.kNumber : item.productCode));
    expect(names).toEqual(codes.data.items.slice(0, 1).map((e) => e.productCode));
  });

  it('rejects with the error code and details of the contract', async () => {
    const missing = await client.query('device-510k.detail', { id: 'K999999' }).then(
      () => null,
      (err: unknown) => err,
    );
    expect(missing).toBeInstanceOf(QueryError);
    expect(missing).toMatchObject({ status: 404, code: 'record_not_found' });

    // A caller without types can still send a bad input; the server's answer comes back as a QueryError.
    const bad = await client.query('device-510k.top-product-codes', { limit: 500 }).catch((err: unknown) => err);
    expect(bad).toMatchObject({ status: 400, code: 'invalid_input', details: [{ path: 'input.limit', message: 'must be at most 100' }] });
  });

  it('tells whether a snapshot is loaded, and reads the snapshot files a mirror reads', async () => {
    expect(await client.health()).toEqual({ ok: true, status: 'ok' });
    const manifest = await client.snapshot.manifest();
    expect(manifest).toEqual(Manifest.parse(JSON.parse(await readFile(join(snapshotPath, LAYOUT.manifest), 'utf8'))));
    const entry = manifest.files.find((f) => f.path === LAYOUT.meta);
    expect(sha256Hex(await client.snapshot.file(LAYOUT.meta))).toBe(entry?.sha256);
    await expect(client.snapshot.file('no/such/file.json')).rejects.toThrow(`no/such/file.json could not be read from ${server.url}/snapshot/no/such/file.json: HTTP 404`);
  });
});
