import type { Page, Route } from 'playwright-core';
import { afterAll, describe, expect, test } from 'vitest';
import { findNginx } from '../../bench/lib/nginx.ts';
import { LINEAGE_CLOSURE_MAX } from '../../src/contract/index.ts';
import { modelWalk, readModel, type ModelItem } from '../helpers/lineage-model.ts';
import { browserSkipReason } from './chromium.ts';
import type { Truth } from './fixture-truth.ts';
import { LINEAGE_EDGES as EDGES, LINEAGE_PAGE as PAGE, asRows, buildBundledLineage, lineageRows, openLineageView } from './lineage-view.ts';
import { seriousViolations, startHost, useBrowser, type Host } from './page-helpers.ts';

const skip = browserSkipReason();
const nginxMissing = (await findNginx()) === null;

/**
 * A lineage view names its devices from the record names files (two requests of byte ranges) before their record
 * shards are read, on a host that serves several ranges in one answer (nginx as docs/deploy.md sets it up); a host
 * that answers them with the whole file leaves the naming to the records. Names are checked against the records as
 * the shards hold them, read by the test itself.
 */
describe.skipIf(skip !== null || nginxMissing)('a lineage view’s device names, static mode on nginx', () => {
  let truth: Truth;
  let nginx: Host;
  const errors: string[] = [];
  const model = readModel(EDGES);

  const browser = useBrowser(async () => {
    let snapshot: string;
    ({ snapshot, truth } = await buildBundledLineage());
    nginx = await startHost('static', snapshot, { via: 'nginx' });
    return [nginx];
  });

  /** The predicate lineage within a closure entry whose first page has the most devices with a record. */
  function pick(): { k: string; want: ModelItem[] } {
    let best: { k: string; want: ModelItem[]; named: number } | null = null;
    for (const k of [...truth.records.keys()].sort()) {
      const want = modelWalk(model, k, 'predicates', null, null).items;
      if (want.length === 0 || want.length > LINEAGE_CLOSURE_MAX) continue;
      const named = want.slice(0, PAGE).filter((i) => truth.records.has(i.kNumber)).length;
      if (!best || named > best.named) best = { k, want, named };
    }
    expect(best?.named ?? 0, 'a lineage whose devices have records').toBeGreaterThanOrEqual(3);
    return best!;
  }

  /** The device cell of each row of the page's table, by number. */
  const deviceCells = (page: Page) =>
    page.locator('.lineage-table tbody tr').evaluateAll((trs) => trs.map((tr) => [(tr as HTMLElement).dataset.k!, tr.lastElementChild!.textContent!] as const));
  /** What the device cell says once the view has the device's name: the record's name, or that it has no record. */
  const named = (k: string) => {
    const record = truth.records.get(k);
    return record ? record.deviceName || 'no device name' : 'no record here: FDA’s page (opens in a new tab)';
  };

  test('every row is named from the names files while the record shards are held back, as the records then name it', async () => {
    const { k, want } = pick();
    const held: Route[] = [];
    let holding = true;
    const namesRanges: [string, string][] = [];
    const { page } = await openLineageView(browser(), errors, nginx.url, k, 'predicates', async (page) => {
      page.on('request', (r) => {
        if (r.url().includes('/records/names/')) namesRanges.push([new URL(r.url()).pathname.replace(/^.*\/records\//, 'records/'), r.headers()['range'] ?? 'whole']);
      });
      await page.route(/\/snapshot\/records\/K\d{4}\.json$/, (route) => (holding ? void held.push(route) : route.continue()));
    });
    await page.locator(`.lineage-body[data-shows="${k} predicates 1"]`).waitFor({ timeout: 60_000 });
    expect(await lineageRows(page)).toEqual(asRows(want.slice(0, PAGE)));
    // Named with no record shard answered: every record shard the view asked for is still held.
    await page.waitForFunction(() => !document.querySelector('.lineage-table tbody td:last-child .record-loading'), null, { timeout: 60_000 });
    expect(await page.locator('.lineage-body').getAttribute('data-records')).toBeNull();
    const wanted = want.slice(0, PAGE).map((i) => [i.kNumber, named(i.kNumber)] as const);
    expect(await deviceCells(page)).toEqual(wanted);
    // Two requests, each of several ranges: the devices' index entries, then their names.
    expect(namesRanges.map(([path]) => path)).toEqual(['records/names/index.bin', 'records/names/names.bin']);
    for (const [, range] of namesRanges) expect(range).toMatch(/^bytes=\d+-\d+(,\d+-\d+)+$/);
    // The records, let through, name the rows the same.
    expect(held.length).toBeGreaterThan(0);
    holding = false;
    for (const route of held) await route.continue();
    await page.locator(`.lineage-body[data-records="${k} predicates 1"]`).waitFor({ timeout: 60_000 });
    expect(await deviceCells(page)).toEqual(wanted);
    expect(await seriousViolations(page)).toEqual([]);
    await page.close();
  }, 300_000);

  test('a host that answers several ranges with the whole file: the names file is left unread, the records name the rows', async () => {
    const { k, want } = pick();
    const whole: string[] = [];
    const { page } = await openLineageView(browser(), errors, nginx.url, k, 'predicates', (page) =>
      page.route('**/records/names/**', async (route) => {
        const headers = { ...route.request().headers() };
        delete headers['range'];
        const res = await route.fetch({ headers });
        whole.push(new URL(route.request().url()).pathname.replace(/^.*\/records\//, 'records/'));
        await route.fulfill({ status: 200, body: await res.body(), headers: { 'content-type': 'application/octet-stream' } });
      }),
    );
    await page.locator(`.lineage-body[data-records="${k} predicates 1"]`).waitFor({ timeout: 60_000 });
    // The index's whole answer was given up on, so the names were never asked for.
    expect(whole).toEqual(['records/names/index.bin']);
    expect(await deviceCells(page)).toEqual(want.slice(0, PAGE).map((i) => [i.kNumber, named(i.kNumber)] as const));
    await page.close();
  }, 300_000);

  afterAll(() => {
    expect(errors).toEqual([]);
  });
});
