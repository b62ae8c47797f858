import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAYOUT, Manifest, ShardIndex, type CatalogKind } from '../../src/contract/index.ts';
import { CursorCodec } from '../../src/operations/index.ts';
import { FIXTURE_SOURCES, buildFixture, buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { allProductCodes, allRecords, ask, expectOk, startServer, type Running } from '../server/helpers.ts';
import { TARGETS, hostFor } from './targets.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/**
 * The catalog's keyset walk (docs/contract.md section 6): every entry exactly once, in order, with any limit, on
 * each host of the API (the Node server and the Worker under workerd). The walk across a rebuild reloads the Node
 * server in-process, so it runs on Node only (test/worker/storage.test.ts publishes a new snapshot to the Worker).
 */
let snapshotPath: string;
let manifest: Manifest;
const keys: Record<CatalogKind, string[]> = { clearance: [], 'product-code': [] };

beforeAll(async () => {
  snapshotPath = await buildFixtureSnapshot();
  manifest = Manifest.parse(JSON.parse(await readFile(join(snapshotPath, LAYOUT.manifest), 'utf8')));
  keys.clearance = (await allRecords(snapshotPath)).map((r) => r.kNumber);
  keys['product-code'] = (await allProductCodes(snapshotPath)).map((e) => e.productCode);
});

type Page = { items: string[]; nextCursor: string | null; hasNextPage: boolean; total: number; warnings: string[] };

async function page(url: string, kind: CatalogKind, limit: number, cursor: string | null): Promise<Page> {
  const body = expectOk(await ask(url, 'device-510k.catalog', { kind, limit, cursor }), 'device-510k.catalog');
  const items = body.data.items.map((item) => ('kNumber' in item ? item.kNumber : item.productCode));
  expect(body.page).toMatchObject({ itemsReturned: items.length, totalRelation: 'exact', consistency: 'keyset', hasNextPage: body.page.nextCursor !== null });
  expect(items.length).toBeLessThanOrEqual(limit);
  if (body.page.hasNextPage) expect(items.length).toBe(limit);
  return { items, nextCursor: body.page.nextCursor, hasNextPage: body.page.hasNextPage, total: body.page.total, warnings: body.sourceState.warnings };
}

/** Follows the cursors to the end, with the limit of each page chosen by `limitFor`. */
async function walk(url: string, kind: CatalogKind, limitFor: (pageNumber: number) => number): Promise<{ seen: string[]; pages: number }> {
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const p = await page(url, kind, limitFor(pages), cursor);
    seen.push(...p.items);
    cursor = p.nextCursor;
    pages++;
    if (pages > 10_000) throw new Error('the walk does not end');
  } while (cursor !== null);
  return { seen, pages };
}

for (const target of TARGETS) {
  describe(`on ${target}`, () => {
    const server = hostFor(target, () => snapshotPath);

    describe.each(['clearance', 'product-code'] as const)('kind %s', (kind) => {
      it.each([1, 7, 50, 100, 500])('limit %i returns every entry once, in key order', async (limit) => {
        const { seen, pages } = await walk(server.url, kind, () => limit);
        expect(keys[kind].length).toBeGreaterThan(100);
        expect(seen).toEqual(keys[kind]);
        expect(pages).toBe(Math.max(1, Math.ceil(keys[kind].length / limit)));
      });

      it('any mix of limits returns every entry once', async () => {
        await fc.assert(
          fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 500 }), { minLength: 1, maxLength: 20 }), async (limits) => {
            const { seen } = await walk(server.url, kind, (n) => limits[n % limits.length] as number);
            expect(seen).toEqual(keys[kind]);
          }),
          { numRuns: 15 },
        );
      });

      it('the first page: total, token, and a cursor', async () => {
        const body = expectOk(await ask(server.url, 'device-510k.catalog', { kind, limit: 3, cursor: null }), 'device-510k.catalog');
        expect(body.page).toMatchObject({ itemsReturned: 3, total: keys[kind].length, hasNextPage: true, snapshotToken: manifest.snapshotId });
        expect(body.page.nextCursor).toMatch(/^[A-Za-z0-9_-]+$/);
        expect(body.sourceState.warnings).toEqual([]);
      });

      it('one page holds everything when the limit allows: no cursor', async () => {
        const p = await page(server.url, kind, 500, null);
        expect(p.items).toEqual(keys[kind]);
        expect(p.nextCursor).toBeNull();
        expect(p.hasNextPage).toBe(false);
      });

      it('a page that ends on the last entry has no next cursor', async () => {
        const n = keys[kind].length;
        const first = await page(server.url, kind, n - 4, null);
        const last = await page(server.url, kind, 4, first.nextCursor);
        expect(last.items).toEqual(keys[kind].slice(n - 4));
        expect(last.nextCursor).toBeNull();
      });

      it('a cursor after the last key answers an empty last page', async () => {
        const beyond = kind === 'clearance' ? 'K999999' : 'ZZZ';
        const cursor = new CursorCodec().encode({ v: 1, k: kind, a: beyond, s: manifest.snapshotId });
        const p = await page(server.url, kind, 10, cursor);
        expect(p).toMatchObject({ items: [], nextCursor: null, hasNextPage: false, total: keys[kind].length, warnings: [] });
      });
    });

    it('pages that are whole record shards, as a mirror walks them, are each shard\'s entries byte for byte', async () => {
      const index = ShardIndex.parse(JSON.parse(await readFile(join(snapshotPath, LAYOUT.recordIndex), 'utf8')));
      expect(index.shards.length).toBeGreaterThan(2);
      const head = '{"version":1,"operation":"device-510k.catalog","data":{"items":';
      let cursor: string | null = null;
      for (const [i, shard] of index.shards.entries()) {
        const last = i === index.shards.length - 1;
        // The last shard also with a limit past its count: the page is still that shard, with no cursor after it.
        for (const limit of last ? [shard.count, shard.count + 5] : [shard.count]) {
          const res = await ask(server.url, 'device-510k.catalog', { kind: 'clearance', limit, cursor });
          expect(res.status).toBe(200);
          // The shard's entries as JSON.stringify writes the array they make: one line each in the file, no newline here.
          const entries = JSON.stringify(JSON.parse(await readFile(join(snapshotPath, shard.path), 'utf8')));
          expect(res.text.slice(0, head.length + entries.length + 2)).toBe(`${head}${entries}},`);
          const body = res.json as { page: { nextCursor: string | null; itemsReturned: number } };
          expect(body.page.itemsReturned).toBe(shard.count);
          if (last) expect(body.page.nextCursor).toBeNull();
          else cursor = body.page.nextCursor;
        }
      }
    });
  });
}

describe('a cursor survives a rebuild', () => {
  let out: string;
  let rebuilt: Running;

  beforeAll(async () => {
    out = join(await testTempDir('device-510k-cursor-'), 'snapshot');
    await buildFixture({ out });
    rebuilt = await startServer({ snapshotPath: out });
  });
  afterAll(async () => {
    await rebuilt?.close();
  });

  it('goes on after its key in the new snapshot and says the snapshot changed', async () => {
    const first = await page(rebuilt.url, 'clearance', 40, null);
    const cursor = first.nextCursor as string;
    const lastKey = first.items[first.items.length - 1] as string;

    // A new build without the openFDA sample: fewer records, another snapshot id.
    const next = await buildFixture({ out, sources: FIXTURE_SOURCES.slice(1), epoch: 1_800_000_000 });
    expect(await rebuilt.app.reload()).toBe('switched');
    const newKeys = (await allRecords(out)).map((r) => r.kNumber);
    expect(newKeys).not.toEqual(keys.clearance);

    const second = await page(rebuilt.url, 'clearance', 40, cursor);
    expect(second.items).toEqual(newKeys.filter((k) => k > lastKey).slice(0, 40));
    expect(second.total).toBe(newKeys.length);
    expect(second.warnings).toHaveLength(1);
    expect(second.warnings[0]).toContain(next.manifest.snapshotId);
    expect(second.warnings[0]).toContain(lastKey);

    // Cursors issued by the new snapshot carry no warning, and the walk ends with every later key once.
    const rest = [...second.items];
    let c = second.nextCursor;
    while (c !== null) {
      const p = await page(rebuilt.url, 'clearance', 40, c);
      expect(p.warnings).toEqual([]);
      rest.push(...p.items);
      c = p.nextCursor;
    }
    expect(rest).toEqual(newKeys.filter((k) => k > lastKey));
  });
});
