import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Route } from 'playwright-core';
import { expect, test } from 'vitest';
import { runGenerate } from '../../build/generate.ts';
import { SEARCH_CHUNKS_PATH, SearchChunks } from '../../src/contract/search-chunks.ts';
import { buildFixture } from '../helpers/fixture-snapshot.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';
import { describeAgreement, listedKNumbers, statusOf, totalIn } from './page-helpers.ts';

const FOICLASS = 'data/fda/classification/Frederic1011_CICC-IBD-Healthcare-FDA510k-Weekly-Tracker/original_dataset_1_foiclass.txt';

/** About FDA's whole 510(k) database: the size at which static mode must still give the API's exact answers. */
const RECORDS = 175_000;

/**
 * Static mode over the chunked index of a generated snapshot of 175,000 clearances, built by the project's own
 * generator and build (the default build: the chunked index, no Pagefind index): the same searches and CSVs as over
 * the bundled data (page-agreement.test.ts), and the first page before the facet columns.
 */
describeAgreement({
  label: `a generated snapshot of ${RECORDS.toLocaleString('en-US')} clearances`,
  build: async () => {
    const dir = await testTempDir('device-510k-generated-');
    await runGenerate({ records: RECORDS, out: join(dir, 'pmn'), seed: '510k' });
    const built = await buildFixture({ sources: [join(dir, 'pmn'), resolve(FOICLASS)], out: join(dir, 'snapshot') });
    expect(built.manifest.counts.records).toBe(RECORDS);
    return built.out;
  },
  minNonEmpty: 22,
  minNonEmptyCsv: 4,
  more: (ctx) => {
    test('the index is cut into many chunks, and a search shows its first page and exact total before the facet columns arrive', async () => {
      const { snapshot, browser, statics } = ctx();
      const directory = SearchChunks.parse(JSON.parse(await readFile(join(snapshot, SEARCH_CHUNKS_PATH), 'utf8')));
      expect(directory.termChunks.length).toBeGreaterThan(50);
      const page = await browser.context.newPage();
      const held: Route[] = [];
      const fetched: string[] = [];
      page.on('request', (r) => fetched.push(new URL(r.url()).pathname));
      // Every whole column is held back until the first page is on screen.
      await page.route(/\/search\/chunks\/doc[A-Z][A-Za-z]*-[0-9a-f]+\.bin\.gz$/, (route) => void held.push(route));
      await page.goto(`${statics.url}#q=catheter`);
      await page.waitForSelector('html[data-ready]', { timeout: 120_000 });
      const status = await statusOf(page);
      expect(totalIn(status)).toBeGreaterThan(0);
      expect(await listedKNumbers(page)).toHaveLength(10);
      expect(await page.locator('#facets').innerText()).toMatch(/Loading filter counts/);
      // Facets whose columns are small (the decision years) may be counted already; those of held columns are not.
      expect(await page.locator('#facets :is(.facet-productCode, .facet-applicant, .facet-advisoryCommittee) a.facet-value').count()).toBe(0);
      // The first page read word chunks, not the columns.
      expect(fetched.some((p) => /\/search\/chunks\/terms-/.test(p))).toBe(true);
      expect(fetched.some((p) => /\/search\/(part-\d+|chunks\/docTerms-)/.test(p))).toBe(false);
      await expect.poll(() => held.length, { timeout: 60_000 }).toBeGreaterThan(0);
      // While the columns are held, the counts show how many of their bytes have arrived, out of the sizes the
      // directory gives for the files the counts read: at least the product code and applicant columns, at most all.
      const bar = page.locator('#facets progress.load-progress');
      await bar.waitFor({ timeout: 60_000 });
      const [value, max] = await bar.evaluate((p) => [(p as HTMLProgressElement).value, (p as HTMLProgressElement).max]);
      const all = Object.values(directory.files).reduce((n, f) => n + f.bytes, 0);
      expect(max).toBeGreaterThanOrEqual(directory.files.docCode.bytes + directory.files.docApplicant.bytes);
      expect(max).toBeLessThanOrEqual(all);
      expect(value).toBeLessThan(max - directory.files.docCode.bytes + 1);
      expect(await page.locator('#facets').innerText()).toMatch(/Loading filter counts…\s+[\d,.]+ [KM]B of [\d,.]+ [KM]B/);
      await page.unroute(/\/search\/chunks\/doc/);
      for (const r of held.splice(0)) await r.continue();
      await page.waitForSelector('#facets .facet-applicant a.facet-value', { timeout: 120_000 });
      // The total shown first was final.
      expect(await statusOf(page)).toBe(status);
      await page.close();
    }, 300_000);

    test('each facet shows its counts as soon as its own column is in, the others still loading', async () => {
      const { browser, statics } = ctx();
      const page = await browser.context.newPage();
      const held: Route[] = [];
      const applicants = /\/search\/chunks\/docApplicant-[0-9a-f]+\.bin\.gz$/;
      await page.route(applicants, (route) => void held.push(route));
      await page.goto(`${statics.url}#q=catheter`);
      await expect.poll(() => held.length, { timeout: 60_000 }).toBe(1);
      const fields = () => page.locator('#facets details').evaluateAll((ds) => ds.map((d) => d.className.replace('facet facet-', '')));
      const values = (field: string) => page.locator(`#facets details.facet-${field} a.facet-value`).evaluateAll((as) => as.map((a) => `${(a as HTMLElement).dataset.value}|${(a as HTMLElement).dataset.count}`));
      // While the applicant column is held: the product codes and the years are counted, the applicants are not.
      await expect.poll(fields, { timeout: 60_000 }).toEqual(expect.arrayContaining(['productCode', 'decisionYear']));
      expect(await fields()).not.toContain('applicant');
      expect(await page.locator('#facets').innerText()).toMatch(/Loading filter counts…/);
      const [codes, years] = [await values('productCode'), await values('decisionYear')];
      expect(codes.length).toBeGreaterThan(0);
      for (const r of held.splice(0)) await r.continue();
      await page.unroute(applicants);
      await page.waitForFunction(() => !/Loading filter counts/.test(document.getElementById('facets')?.textContent ?? ''), null, { timeout: 120_000 });
      expect((await fields()).slice(0, 3)).toEqual(['productCode', 'applicant', 'decisionYear']);
      expect((await values('applicant')).length).toBeGreaterThan(0);
      // The counts shown early were final.
      expect(await values('productCode')).toEqual(codes);
      expect(await values('decisionYear')).toEqual(years);
      await page.close();
    }, 300_000);

    test('a phrase shows the bytes of the whole forward word lists as they arrive, then its results', async () => {
      const { snapshot, browser, statics } = ctx();
      const { files } = SearchChunks.parse(JSON.parse(await readFile(join(snapshot, SEARCH_CHUNKS_PATH), 'utf8')));
      const page = await browser.context.newPage();
      const held: Route[] = [];
      const forward = /\/search\/chunks\/(docTerms|docSeq)-[0-9a-f]+\.bin\.gz$/;
      await page.route(forward, (route) => void held.push(route));
      await page.goto(`${statics.url}#q=%22balloon+catheter%22`);
      await expect.poll(() => held.length, { timeout: 60_000 }).toBe(2);
      // The progress counts at least both lists, at most every file the directory names besides them.
      const bar = page.locator('#search-loading progress.load-progress');
      await bar.waitFor({ timeout: 60_000 });
      const [value, max] = await bar.evaluate((p) => [(p as HTMLProgressElement).value, (p as HTMLProgressElement).max]);
      const all = Object.values(files).reduce((n, f) => n + f.bytes, 0);
      expect(max).toBeGreaterThanOrEqual(files.docTerms.bytes + files.docSeq.bytes);
      expect(max).toBeLessThan(all);
      expect(value).toBeLessThanOrEqual(max - files.docTerms.bytes - files.docSeq.bytes);
      expect(await page.locator('#search-loading').innerText()).toMatch(/^Loading the search index for this search…\s+[\d,.]+ [KM]B of [\d,.]+ MB$/);
      expect(await page.locator('#list .result').count()).toBe(0);
      for (const r of held.splice(0)) await r.continue();
      await page.unroute(forward);
      await page.waitForFunction(() => document.getElementById('results')?.dataset.answers === location.hash, null, { timeout: 120_000 });
      expect(totalIn(await statusOf(page))).toBeGreaterThan(0);
      expect(await page.locator('#search-loading').innerText()).toBe('');
      await page.close();
    }, 300_000);

    test('the review figures show the bytes of their date columns as they arrive, then the figures', async () => {
      const { snapshot, browser, statics } = ctx();
      const { files } = SearchChunks.parse(JSON.parse(await readFile(join(snapshot, SEARCH_CHUNKS_PATH), 'utf8')));
      const page = await browser.context.newPage();
      const held: Route[] = [];
      const received = /\/search\/chunks\/docReceived-[0-9a-f]+\.bin\.gz$/;
      await page.route(received, (route) => void held.push(route));
      await page.goto(`${statics.url}#q=stent`);
      await expect.poll(() => held.length, { timeout: 60_000 }).toBe(1);
      // The receipt dates at least (the decision dates may have come with the facet counts), at most both date columns.
      const bar = page.locator('#review progress.load-progress');
      await bar.waitFor({ timeout: 60_000 });
      const [value, max] = await bar.evaluate((p) => [(p as HTMLProgressElement).value, (p as HTMLProgressElement).max]);
      expect(max).toBeGreaterThanOrEqual(files.docReceived.bytes);
      expect(max).toBeLessThanOrEqual(files.docReceived.bytes + files.decided.bytes);
      expect(value).toBeLessThanOrEqual(max - files.docReceived.bytes);
      expect(await page.locator('#review').innerText()).toMatch(/^Review time\s+Loading the review figures…\s+[\d,.]+ KB of [\d,.]+ KB$/);
      for (const r of held.splice(0)) await r.continue();
      await page.unroute(received);
      await page.locator('#review .review-line').waitFor({ timeout: 120_000 });
      expect(await page.locator('#review progress').count()).toBe(0);
      await page.close();
    }, 300_000);
  },
});
