import type { Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { LINEAGE_CLOSURE_MAX } from '../../src/contract/index.ts';
import { modelWalk, readModel, type Model, type ModelItem } from '../helpers/lineage-model.ts';
import { browserSkipReason } from './chromium.ts';
import type { Truth } from './fixture-truth.ts';
import { LINEAGE_EDGES as EDGES, LINEAGE_PAGE as PAGE, asRows, buildBundledLineage, lineageRows, openLineageView, shardOf } from './lineage-view.ts';
import { seriousViolations, startHost, useBrowser, type Host } from './page-helpers.ts';

const skip = browserSkipReason();

/**
 * Static mode draws a lineage as its walk goes: the first devices before the answer, then the whole view. The walk's
 * shard reads are held by the test and let through one level at a time, so that each drawing before the answer is
 * seen while the walk waits; each is checked against an independent walk of the edge files (never the page's engine):
 * it is the answer's first devices exactly, all those within the steps it says, and it says it is still loading.
 */
describe.skipIf(skip !== null)('a lineage drawn as its walk goes, static mode', () => {
  let truth: Truth;
  let model: Model;
  let statics: Host;
  const errors: string[] = [];

  const browser = useBrowser(async () => {
    let snapshot: string;
    ({ snapshot, truth } = await buildBundledLineage());
    statics = await startHost('static', snapshot);
    return [statics];
  });

  /** Each device of a walk by level (0: the start). */
  const levelsOf = (k: string, items: ModelItem[]) => {
    const levels: string[][] = [[k]];
    for (const i of items) (levels[i.depth] ??= []).push(i.kNumber);
    return levels;
  };

  /**
   * A record whose predicate chain is at least three steps deep and whose walk must read a shard of its own for a
   * level past the first (so that the walk waits there, with a level done and drawn before it), with more devices
   * than a closure file holds (a shorter lineage is read whole from it, with no walk).
   */
  let start: string;
  beforeAll(() => {
    model = readModel(EDGES);
    const present = new Set([...model.devices].map(shardOf));
    for (const k of [...truth.records.keys()].sort()) {
      const items = modelWalk(model, k, 'predicates', null, null).items;
      if ((items.at(-1)?.depth ?? 0) < 3 || items.length <= LINEAGE_CLOSURE_MAX) continue;
      const levels = levelsOf(k, items);
      const read = new Set<string>();
      let waits = false;
      levels.forEach((level, l) => {
        const fresh = level.map(shardOf).filter((s) => present.has(s) && !read.has(s));
        if (l >= 2 && fresh.length > 0) waits = true;
        for (const s of fresh) read.add(s);
      });
      if (waits) {
        start = k;
        break;
      }
    }
    expect(start, 'the bundled data has a record with a deep predicate chain across shards').toBeDefined();
  });

  const rowsOf = (page: Page) => lineageRows(page, '.lineage-body');

  test('each drawing before the answer is the answer’s first devices, says it is loading, and the answer follows', async () => {
    const want = modelWalk(model, start, 'predicates', null, null).items;
    const levels = levelsOf(start, want);
    const present = new Set([...model.devices].map(shardOf));
    const held: Route[] = [];
    const released = new Set<string>();
    const { page } = await openLineageView(browser(), errors, statics.url, start, 'predicates', (p) => p.route(/\/lineage\/predicates\/[^/]+\.bin$/, (route) => void held.push(route)));

    const complete = () => page.locator(`.lineage-body[data-shows="${start} predicates 1"]`).count().then((n) => n > 0);
    let checked = 0;
    let audited = false;
    for (;;) {
      // The walk waits on a shard read, or it has ended.
      await expect.poll(async () => held.length > 0 || (await complete()), { timeout: 60_000 }).toBe(true);
      if (held.length === 0) break;
      // The level the walk is at: the first with a device in a shard not yet let through. Every level before it is
      // done, and the page draws them (their records are not held).
      const at = levels.findIndex((level) => level.some((k) => present.has(shardOf(k)) && !released.has(shardOf(k))));
      expect(at, 'a held read belongs to a level of the walk').toBeGreaterThanOrEqual(0);
      if (at >= 2) {
        const done = at - 1;
        await page.waitForFunction((d) => Number((document.querySelector('.lineage-body .lineage-partial') as HTMLElement | null)?.dataset.depth ?? 0) >= d, done, { timeout: 60_000 });
        const part = page.locator('.lineage-body .lineage-partial');
        const known = want.filter((i) => i.depth <= done);
        expect(Number(await part.getAttribute('data-depth'))).toBe(done);
        expect(Number(await part.getAttribute('data-known'))).toBe(known.length);
        expect(await part.innerText()).toMatch(/still loading/);
        // What is drawn is the answer's first devices, every one within those steps (up to a page), no more.
        expect(await rowsOf(page)).toEqual(asRows(known.slice(0, PAGE)));
        const nodes = await page.locator('.lineage-body svg.lineage-chart a.node').evaluateAll((as) => as.map((a) => a.getAttribute('data-k')));
        expect(nodes).toEqual([start, ...known.slice(0, PAGE).map((i) => i.kNumber)]);
        for (const i of known.slice(0, PAGE)) {
          const date = truth.records.get(i.kNumber)?.decisionDate ?? null;
          expect(await page.locator(`svg.lineage-chart a.node[data-k="${i.kNumber}"] text`).textContent(), i.kNumber).toBe(date ? `${i.kNumber} · ${date.slice(0, 4)}` : i.kNumber);
        }
        // The table's decision and device: the year the data gives (the record itself may still be loading), or that
        // this snapshot has no record of it.
        const cells = await page.locator('.lineage-body .lineage-table tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.children[5]!.textContent, tr.children[6]!.textContent]));
        cells.forEach(([decided, device], n) => {
          const record = truth.records.get(known[n]!.kNumber);
          if (!record) expect([decided, device], known[n]!.kNumber).toEqual(['', 'no record here: FDA’s page (opens in a new tab)']);
          else {
            expect([record.decisionDate ?? '', record.decisionDate?.slice(0, 4) ?? ''], known[n]!.kNumber).toContain(decided);
            expect([record.deviceName || 'no device name', 'loading its record…'], known[n]!.kNumber).toContain(device);
          }
        });
        // Busy, with no total or pager yet, and a status that says so.
        expect(await page.locator('.lineage-body').getAttribute('aria-busy')).toBe('true');
        expect(await page.locator('.lineage-body .lineage-total, .lineage-body .lineage-pager').count()).toBe(0);
        expect(await page.locator('.lineage-progress[role="status"]').textContent()).toMatch(/^Loading the lineage: /);
        if (!audited) {
          expect(await seriousViolations(page)).toEqual([]);
          audited = true;
        }
        checked++;
      }
      for (const route of held.splice(0)) {
        released.add(new URL(route.request().url()).pathname.split('/').pop()!.replace(/\.bin$/, ''));
        await route.continue();
      }
    }
    expect(checked, 'a drawing before the answer was seen').toBeGreaterThan(0);

    // The whole view: the answer's total and first page, no longer busy, and the status says it is loaded.
    expect(Number(await page.locator('.lineage-total').getAttribute('data-total'))).toBe(want.length);
    expect(await rowsOf(page)).toEqual(asRows(want.slice(0, PAGE)));
    expect(await page.locator('.lineage-body').getAttribute('aria-busy')).toBeNull();
    expect(await page.locator('.lineage-body .lineage-partial').count()).toBe(0);
    expect(await page.locator('.lineage-progress[role="status"]').textContent()).toMatch(new RegExp(`^Lineage loaded: ${want.length} devices in ${want.at(-1)!.depth} steps\\.$`));
    expect(await seriousViolations(page)).toEqual([]);
    await page.close();
  }, 300_000);

  afterAll(() => {
    expect(errors).toEqual([]);
  });
});
