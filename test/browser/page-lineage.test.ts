import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { LINEAGE_CLOSURE_MAX } from '../../src/contract/index.ts';
import { modelWalk, readModel, type Model } from '../helpers/lineage-model.ts';
import { browserSkipReason } from './chromium.ts';
import type { Truth } from './fixture-truth.ts';
import { LINEAGE_EDGES as EDGES, LINEAGE_PAGE as PAGE, asRows, buildBundledLineage, lineageRows as tableRows, openLineageView } from './lineage-view.ts';
import { collectErrors, csvRows, seriousViolations, startHost, useBrowser, type Host } from './page-helpers.ts';

const skip = browserSkipReason();

/**
 * The page's lineage over the bundled data, in server and static mode: a record's predicates and the clearances that
 * cite it, then its lineage followed two steps up and one down, each view checked against an independent walk of the
 * edge files; the picture, the pages of a much-cited device, the CSV, the follow link, and axe-core.
 */
describe.skipIf(skip !== null)('the lineage on the page, server and static mode', () => {
  let truth: Truth;
  let model: Model;
  let server: Host;
  let statics: Host;
  const errors: string[] = [];
  const pages = new Map<string, Page>();
  /** The record opened, its predicate, that one's predicate, and a clearance that names the last one. */
  let start: string;
  let up1: string;
  let up2: string;
  let down: string;
  /** The device the most clearances name: its descendants take several pages. */
  let cited: string;

  const browser = useBrowser(async () => {
    let snapshot: string;
    ({ snapshot, truth } = await buildBundledLineage());
    [server, statics] = await Promise.all([startHost('server', snapshot), startHost('static', snapshot)]);
    return [server, statics];
  });

  beforeAll(async () => {
    model = readModel(EDGES);
    const walk = (k: string, direction: 'predicates' | 'descendants', depth: number | null) => modelWalk(model, k, direction, depth, null).items;
    // The first record (by number) whose first predicate has a predicate of its own that other clearances name too.
    for (const k of [...truth.records.keys()].sort()) {
      const p1 = walk(k, 'predicates', 1)[0]?.kNumber;
      const p2 = p1 ? walk(p1, 'predicates', 1)[0]?.kNumber : undefined;
      const d = p2 ? walk(p2, 'descendants', 1).slice(0, PAGE).find((i) => i.kNumber !== p1 && i.kNumber !== k) : undefined;
      if (p1 && p2 && d && walk(k, 'descendants', 1).length > 0) {
        [start, up1, up2, down] = [k, p1, p2, d.kNumber];
        break;
      }
    }
    expect(start, 'the bundled data has a record with two steps of predicates').toBeDefined();
    cited = [...model.devices].sort().reduce((a, b) => ((model.reverse.get(b)?.length ?? 0) > (model.reverse.get(a)?.length ?? 0) ? b : a));
    expect(model.reverse.get(cited)!.length).toBeGreaterThan(PAGE);
    for (const [mode, host] of [['server', server], ['static', statics]] as const) {
      const page = await browser().context.newPage();
      collectErrors(page, errors);
      pages.set(mode, page);
      await page.goto(host.url);
      await page.waitForSelector(`html[data-mode="${mode}"]`, { timeout: 60_000 });
    }
  }, 120_000);

  /** The lineage view of `k` as shown, checked against the model: total, the first page's rows, the picture. */
  async function checkView(page: Page, k: string, direction: 'predicates' | 'descendants') {
    await page.locator(`.lineage-body[data-records="${k} ${direction} 1"]`).waitFor({ timeout: 60_000 });
    expect(new URLSearchParams((await page.evaluate(() => location.hash)).slice(1)).get('record')).toBe(k);
    const want = modelWalk(model, k, direction, null, null).items;
    expect(Number(await page.locator('.lineage-total').getAttribute('data-total')), `${k} ${direction}`).toBe(want.length);
    expect(await tableRows(page), `${k} ${direction}`).toEqual(asRows(want.slice(0, PAGE)));
    // The picture: the start and one node per device of the page, each with an accessible name; an edge each; the
    // kind of each edge told apart by its class (solid or dashed).
    const nodes = await page.locator('svg.lineage-chart a.node').evaluateAll((as) => as.map((a) => ({ k: a.getAttribute('data-k'), label: a.getAttribute('aria-label'), cls: a.getAttribute('class') })));
    // The picture is drawn when there is a device to draw (a chain that ends here has none).
    expect(nodes.map((n) => n.k)).toEqual(want.length ? [k, ...want.slice(0, PAGE).map((i) => i.kNumber)] : []);
    for (const n of nodes) expect(n.label).toMatch(new RegExp(`^${n.k}( · \\d{4})?: `));
    expect(nodes.slice(1).map((n) => /node-(predicate|named)/.exec(n.cls!)![1])).toEqual(want.slice(0, PAGE).map((i) => i.kind));
    expect(await page.locator('svg.lineage-chart path.edge-predicate').count()).toBe(want.slice(0, PAGE).filter((i) => i.kind === 'predicate').length);
    expect(await page.locator('svg.lineage-chart path.edge-named').count()).toBe(want.slice(0, PAGE).filter((i) => i.kind === 'named').length);
    // Decision years where the snapshot has the record.
    for (const i of want.slice(0, PAGE)) {
      const date = truth.records.get(i.kNumber)?.decisionDate ?? null;
      const year = await page.locator(`svg.lineage-chart a.node[data-k="${i.kNumber}"] text`).textContent();
      expect(year, i.kNumber).toBe(date ? `${i.kNumber} · ${date.slice(0, 4)}` : i.kNumber);
    }
    return want;
  }

  for (const mode of ['server', 'static'] as const) {
    test(`${mode}: the record's predicates and citations, then its lineage two steps up and one down`, async () => {
      const page = pages.get(mode)!;
      const url = mode === 'server' ? server.url : statics.url;
      await page.goto(`${url}#record=${start}`);
      await page.locator('#lineage .named-count').waitFor({ timeout: 60_000 });
      const named = modelWalk(model, start, 'predicates', 1, null).items;
      const citing = modelWalk(model, start, 'descendants', 1, null).items;
      expect(await page.locator('#lineage .named-list > li').evaluateAll((lis) => lis.map((li) => [(li as HTMLElement).dataset.k, (li as HTMLElement).dataset.kind]))).toEqual(
        named.map((i) => [i.kNumber, i.kind]),
      );
      expect(Number(await page.locator('#lineage .cited-count').getAttribute('data-count'))).toBe(citing.length);
      expect(await page.locator('#lineage .cited-count').innerText()).toBe(`Cited as a predicate by ${citing.length.toLocaleString('en-US')} ${citing.length === 1 ? 'clearance' : 'clearances'}`);
      expect(await page.locator('#lineage .cited-list > li').evaluateAll((lis) => lis.map((li) => (li as HTMLElement).dataset.k))).toEqual(citing.slice(0, 25).map((i) => i.kNumber));
      expect(await seriousViolations(page)).toEqual([]);

      // Up the chain: the record's lineage, then its predicate's, then that one's.
      await page.locator('#lineage a', { hasText: 'predicates up to the oldest' }).click();
      await checkView(page, start, 'predicates');
      expect(await seriousViolations(page)).toEqual([]);
      await page.locator(`.lineage-table tr[data-k="${up1}"] th a`).click();
      await checkView(page, up1, 'predicates');
      await page.locator(`.lineage-table tr[data-k="${up2}"][data-depth="1"] th a`).click();
      await checkView(page, up2, 'predicates');
      // One step down: the clearances that name it, then one of them.
      await page.locator('a', { hasText: 'Its descendants instead' }).click();
      await checkView(page, up2, 'descendants');
      await page.locator(`svg.lineage-chart a.node[data-k="${down}"]`).click();
      await checkView(page, down, 'descendants');
      expect(await seriousViolations(page)).toEqual([]);

      // "Follow": the feed of new clearances that name it (server), or the static host says it has none.
      const follow = page.locator('.lineage-follow');
      if (mode === 'server') {
        expect(new URL((await follow.locator('a').getAttribute('href'))!).search).toBe(`?predicate=${down}`);
      } else {
        expect(await follow.locator('a').getAttribute('href')).toMatch(/\/feeds\/new\.atom$/);
        expect(await follow.innerText()).toContain(`this host has no feed of the clearances that name ${down}`);
      }
    }, 300_000);

    test(`${mode}: a much-cited device's descendants page by page, and as CSV`, async () => {
      const page = pages.get(mode)!;
      const url = mode === 'server' ? server.url : statics.url;
      await page.goto(`${url}#record=${cited}&lineage=descendants`);
      const want = await checkView(page, cited, 'descendants');
      expect(want.length).toBeGreaterThan(PAGE);
      await page.locator('.lineage-pager button.next').click();
      await page.locator(`.lineage-body[data-records="${cited} descendants 2"]`).waitFor({ timeout: 60_000 });
      expect(await tableRows(page)).toEqual(asRows(want.slice(PAGE, 2 * PAGE)));
      await page.locator('.lineage-pager button.prev').click();
      await page.locator(`.lineage-body[data-records="${cited} descendants 1"]`).waitFor({ timeout: 60_000 });
      expect(await tableRows(page)).toEqual(asRows(want.slice(0, PAGE)));
      // By decision year, over the whole lineage (not the page): from the records of the snapshot.
      const years = new Map<string, number>();
      for (const i of want) {
        const date = truth.records.get(i.kNumber)?.decisionDate ?? null;
        const key = date ? date.slice(0, 4) : 'no record or date';
        years.set(key, (years.get(key) ?? 0) + 1);
      }
      const shownYears = await page.locator('.lineage-counts').nth(1).locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.querySelector('th')!.textContent, Number(tr.querySelector('td')!.textContent!.replace(/,/g, ''))]));
      expect(new Map(shownYears as [string, number][])).toEqual(years);

      if (mode === 'static') {
        // Static mode reads only the lineage files the question needs: the header and the start's closure file (its
        // whole lineage, in ranges); for a lineage longer than a closure entry holds, then the descendants shard of the start
        // and of each device reached (a shard holds 1,000 consecutive numbers), no predicates shard.
        const { page: fresh, files: read } = await openLineageView(browser(), errors, url, cited, 'descendants');
        await fresh.locator(`.lineage-body[data-records="${cited} descendants 1"]`).waitFor({ timeout: 60_000 });
        const closure = `lineage/closure/descendants/${cited.slice(0, -3)}.bin`;
        const shards = want.length > LINEAGE_CLOSURE_MAX ? new Set([cited, ...want.map((i) => i.kNumber)].map((n) => `lineage/descendants/${n.slice(0, -3)}.bin`)) : new Set<string>();
        expect(new Set(read)).toEqual(new Set(['lineage/index.json', closure, ...shards]));
        // Each file once, but the closure file, read in ranges: its tables, then the start's entry (unless the file is
        // shorter than the tables' range, which then holds it whole).
        expect(read.filter((f) => f !== closure)).toHaveLength(shards.size + 1);
        expect(read.filter((f) => f === closure).length).toBeGreaterThanOrEqual(1);
        expect(read.filter((f) => f === closure).length).toBeLessThanOrEqual(2);
        await fresh.close();
      }

      const [download] = await Promise.all([page.waitForEvent('download', { timeout: 120_000 }), page.locator('button.lineage-csv').click()]);
      const rows = csvRows(await readFile((await download.path())!));
      expect(rows[0]).toMatch(/^\uFEFFkNumber,depth,via,kind,source,deviceName,/);
      const cells = rows.slice(1).map((r) => r.split(',').slice(0, 5));
      expect(cells).toEqual(want.map((i) => [i.kNumber, String(i.depth), i.via, i.kind, i.source]));
      expect(download.suggestedFilename()).toMatch(new RegExp(`^device-510k-lineage-${cited.toLowerCase()}-descendants-[a-z0-9-]+\\.csv$`));
    }, 300_000);
  }

  afterAll(() => {
    expect(errors).toEqual([]);
  });
});
