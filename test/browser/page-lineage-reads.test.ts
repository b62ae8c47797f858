import type { Page } from 'playwright-core';
import { afterAll, describe, expect, test } from 'vitest';
import { LINEAGE_CLOSURE_MAX } from '../../src/contract/index.ts';
import { modelWalk, readModel, type ModelItem } from '../helpers/lineage-model.ts';
import { browserSkipReason } from './chromium.ts';
import type { Truth } from './fixture-truth.ts';
import { LINEAGE_EDGES as EDGES, LINEAGE_PAGE as PAGE, asRows, buildBundledLineage, lineageRows, openLineageView, shardOf } from './lineage-view.ts';
import { collectErrors, seriousViolations, startHost, totalIn, useBrowser, type Host } from './page-helpers.ts';

const skip = browserSkipReason();

type Direction = 'predicates' | 'descendants';

/**
 * The files a lineage view reads in static mode, counted: a lineage a closure file holds is read from the lineage
 * header and that one file, however many steps it has (a walk of the shards reads at least one file per step); a
 * longer one walks the shards. Each view is checked against an independent walk of the edge files.
 */
describe.skipIf(skip !== null)('the lineage files a lineage view reads, static mode', () => {
  let truth: Truth;
  let statics: Host;
  const errors: string[] = [];
  const model = readModel(EDGES);

  const browser = useBrowser(async () => {
    let snapshot: string;
    ({ snapshot, truth } = await buildBundledLineage());
    statics = await startHost('static', snapshot);
    return [statics];
  });

  /** The deepest lineage (then the most devices) of a record within a closure entry, or past it. */
  function pick(direction: Direction, within: boolean): { k: string; want: ModelItem[] } {
    let best: { k: string; want: ModelItem[] } | null = null;
    for (const k of [...truth.records.keys()].sort()) {
      const want = modelWalk(model, k, direction, null, null).items;
      if (want.length === 0 || want.length <= LINEAGE_CLOSURE_MAX !== within) continue;
      const steps = want.at(-1)!.depth;
      if (!best || steps > best.want.at(-1)!.depth || (steps === best.want.at(-1)!.depth && want.length > best.want.length)) best = { k, want };
      if (!within) break;
    }
    expect(best, `the bundled data has a ${direction} lineage ${within ? 'within' : 'past'} a closure entry`).not.toBeNull();
    return best!;
  }

  /** Opens a lineage view on a fresh page; returns the lineage files it asked for up to the whole view, in order. */
  async function open(k: string, direction: Direction, want: ModelItem[], prepare?: (page: Page) => Promise<unknown>): Promise<{ page: Page; files: string[] }> {
    const { page, files } = await openLineageView(browser(), errors, statics.url, k, direction, prepare);
    const rows = () => lineageRows(page);
    const wanted = asRows(want.slice(0, PAGE));
    // The whole view, first perhaps without its records (a lineage known whole is drawn before they are read), then with them.
    for (const state of ['shows', 'records']) {
      await page.locator(`.lineage-body[data-${state}="${k} ${direction} 1"]`).waitFor({ timeout: 60_000 });
      expect(Number(await page.locator('.lineage-total').getAttribute('data-total')), `${k} ${direction} ${state}`).toBe(want.length);
      expect(await rows(), `${k} ${direction} ${state}`).toEqual(wanted);
    }
    expect(await page.locator('.lineage-body').getAttribute('aria-busy')).toBeNull();
    // Each device's record (or "no record") once the view has its records.
    for (const i of want.slice(0, PAGE)) {
      const record = truth.records.get(i.kNumber);
      const cell = await page.locator(`.lineage-table tbody tr[data-k="${i.kNumber}"] td`).nth(5).textContent();
      expect(cell, i.kNumber).toBe(record ? record.deviceName || 'no device name' : 'no record here: FDA’s page (opens in a new tab)');
    }
    return { page, files: [...new Set(files)] };
  }

  for (const direction of ['predicates', 'descendants'] as const) {
    test(`${direction}: a lineage of many steps is read from the header and one closure file`, async () => {
      const { k, want } = pick(direction, true);
      const steps = want.at(-1)!.depth;
      expect(steps, 'a lineage deep enough to tell one read from a walk').toBeGreaterThanOrEqual(3);
      const { page, files } = await open(k, direction, want);
      expect(files).toEqual(['lineage/index.json', `lineage/closure/${direction}/${shardOf(k)}.bin`]);
      // A walk reads the start's shard, then one read per step at least: the view now takes 2 reads, not steps + 1.
      expect(files.length).toBeLessThan(steps + 1);
      expect(await seriousViolations(page)).toEqual([]);
      await page.close();
    }, 300_000);
  }

  test('the view asks for its modules before its closure file, for its devices’ names before it is drawn, for its records after the names, and for the search index after them', async () => {
    // A phone's link carries answers in turn: a file asked for later arrives later, so the order of asking is what
    // these check (the order of requests, and whether the view was drawn when each record shard was asked for).
    const { k, want } = pick('predicates', true);
    const page = await browser().context.newPage();
    collectErrors(page, errors);
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
    const asked: string[] = [];
    const ranges: string[] = [];
    page.on('request', (r) => {
      asked.push(new URL(r.url()).pathname.replace(/^.*?\/(js|snapshot)\//, '$1/'));
      if (r.url().includes('/lineage/closure/')) ranges.push(r.headers()['range'] ?? 'whole');
    });
    await page.addInitScript(() => {
      const w = window as unknown as { recordsAsked: { path: string; drawn: boolean }[] };
      w.recordsAsked = [];
      const original = window.fetch.bind(window);
      window.fetch = (input, init) => {
        const url = String(input instanceof Request ? input.url : input);
        // The view's own reads: the search behind the view starts once it has its records.
        if (url.includes('/records/') && !document.querySelector('.lineage-body[data-records]')) w.recordsAsked.push({ path: new URL(url).pathname.replace(/^.*\/records\//, 'records/'), drawn: document.querySelector('.lineage-body[data-shows]') !== null });
        return original(input, init);
      };
    });
    await page.goto(`${statics.url}#record=${k}&lineage=predicates`);
    await page.locator(`.lineage-body[data-records="${k} predicates 1"]`).waitFor({ timeout: 60_000 });
    const closure = asked.indexOf(`snapshot/lineage/closure/predicates/${shardOf(k)}.bin`);
    expect(closure, asked.join(' ')).toBeGreaterThanOrEqual(0);
    // index.html's hints ask for the view's first files while the page loads, and the page uses what they read: each
    // file is asked for once.
    for (const once of ['snapshot/lineage/index.json', 'js/lineage.js', 'js/lineage-engine.js']) {
      expect(asked.filter((a) => a === once), `${once} in ${asked.join(' ')}`).toHaveLength(1);
    }
    // The header asked for by the hints (a link's preload), not by app.js once it runs.
    const initiators = await page.evaluate(() => performance.getEntriesByType('resource').map((e) => [new URL(e.name).pathname, (e as PerformanceResourceTiming).initiatorType]));
    expect(initiators.filter(([path]) => path!.endsWith('/lineage/index.json')).map(([, by]) => by)).toEqual(['link']);
    // The closure file in two ranges: its tables, then the start's entry, which the tables place past them.
    expect(ranges[0]).toBe('bytes=0-6003');
    expect(ranges).toHaveLength(2);
    const entry = /^bytes=(\d+)-(\d+)$/.exec(ranges[1]!);
    expect(entry, ranges.join(' ')).not.toBeNull();
    expect(Number(entry![1])).toBeGreaterThanOrEqual(4 + 6 * 2);
    expect(Number(entry![2])).toBeGreaterThanOrEqual(Number(entry![1]));
    for (const module of ['js/lineage.js', 'js/lineage-engine.js', 'js/lineage-source.js', 'js/record-names.js']) {
      expect(asked.indexOf(module), `${module} in ${asked.join(' ')}`).toBeGreaterThanOrEqual(0);
      expect(asked.indexOf(module), `${module} before the closure file in ${asked.join(' ')}`).toBeLessThan(closure);
    }
    // The devices' names asked for first, from the names index, before the view was drawn; then every record shard
    // of the page's devices with a record, once the names are in (this host serves one range of several, so the
    // records name the rest).
    const shards = [...new Set(want.slice(0, PAGE).filter((i) => truth.records.has(i.kNumber)).map((i) => `records/${i.kNumber.slice(0, 5)}.json`))].sort();
    expect(shards.length, 'a lineage with records').toBeGreaterThan(0);
    const viewAsked = await page.evaluate(() => (window as unknown as { recordsAsked: { path: string; drawn: boolean }[] }).recordsAsked);
    const namesAsked = viewAsked.filter((r) => r.path.startsWith('records/names/'));
    const recordsAsked = viewAsked.filter((r) => !r.path.startsWith('records/names/'));
    expect(namesAsked[0]).toEqual({ path: 'records/names/index.bin', drawn: false });
    expect([...new Set(recordsAsked.map((r) => r.path))].sort()).toEqual(shards);
    expect(viewAsked.findIndex((r) => !r.path.startsWith('records/names/')), viewAsked.map((r) => r.path).join(' ')).toBe(namesAsked.length);
    // The search behind the view reads the index's directory once the view has its records, and answers from it.
    await page.locator('#results[data-answers]').waitFor({ state: 'attached', timeout: 60_000 });
    const directory = asked.indexOf('snapshot/search/chunks.json');
    expect(directory, asked.join(' ')).toBeGreaterThan(Math.max(closure, ...shards.map((f) => asked.indexOf(`snapshot/${f}`))));
    expect(asked.lastIndexOf('snapshot/search/chunks.json')).toBe(directory);
    expect(totalIn(await page.locator('#status').innerText())).toBe(truth.records.size);
    await page.close();
  }, 300_000);

  test('a host that answers a range with the whole file: the closure file is read whole, with the same view', async () => {
    const { k, want } = pick('descendants', true);
    const whole: string[] = [];
    const { page, files } = await open(k, 'descendants', want, (page) =>
      page.route('**/lineage/closure/**', async (route) => {
        const headers = { ...route.request().headers() };
        delete headers['range'];
        const res = await route.fetch({ headers });
        expect(res.status()).toBe(200);
        whole.push(new URL(route.request().url()).pathname);
        await route.fulfill({ status: 200, body: await res.body(), headers: { 'content-type': 'application/octet-stream' } });
      }),
    );
    expect(files).toEqual(['lineage/index.json', `lineage/closure/descendants/${shardOf(k)}.bin`]);
    // The tables' range got the whole file, so the entry was not asked for again.
    expect(whole).toHaveLength(1);
    await page.close();
  }, 300_000);

  test('a lineage longer than a closure entry holds is walked over the shards, with the same view', async () => {
    const { k, want } = pick('predicates', false);
    const { page, files } = await open(k, 'predicates', want);
    expect(files.slice(0, 2).sort()).toEqual(['lineage/closure/predicates/' + shardOf(k) + '.bin', 'lineage/index.json'].sort());
    const shards = files.filter((f) => f.startsWith('lineage/predicates/'));
    // The start's shard, and those of the devices the walk expands.
    expect(shards).toContain(`lineage/predicates/${shardOf(k)}.bin`);
    expect(new Set(shards)).toEqual(new Set(shards.filter((f) => [k, ...want.map((i) => i.kNumber)].some((n) => f === `lineage/predicates/${shardOf(n)}.bin`))));
    await page.close();
  }, 300_000);

  afterAll(() => {
    expect(errors).toEqual([]);
  });
});
