import { mkdtemp, readFile, realpath } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runGenerate } from '../../build/generate.ts';
import { defaultSources } from '../../build/sources/default.ts';
import { SEARCH_CHUNKS_PATH, SearchChunks } from '../../src/contract/search-chunks.ts';
import { buildFixture } from '../helpers/fixture-snapshot.ts';
import { browserSkipReason, launchChromium, type Browser } from './chromium.ts';
import { collectErrors, listedKNumbers, startHost, statusOf, totalIn, type Host } from './page-helpers.ts';

const skip = browserSkipReason();
const FOICLASS = 'data/fda/classification/Frederic1011_CICC-IBD-Healthcare-FDA510k-Weekly-Tracker/original_dataset_1_foiclass.txt';

/**
 * Searches of every kind the page makes: words, prefixes, a K number, a product code, phrases, exclusions, OR,
 * qualifiers, filters, sorts, pages and page sizes. Static mode reads the chunked index in parts; its totals, first
 * pages and facet counts must be the server's.
 */
const SEARCHES = [
  '',
  'page=3',
  'q=catheter',
  'q=cath',
  'q=c',
  'q=catheter+balloon',
  'q=balloon+catheter&size=50',
  'q=%22balloon+catheter%22',
  'q=catheter+-foley',
  'q=catheter+OR+stent',
  'q=dqy',
  'q=k9',
  'q=device%3Acatheter',
  'q=applicant%3Amedtronic',
  'q=catheter&panel=cardiovascular',
  'q=catheter&code=DQY',
  'q=stent&from=2020',
  'from=1985&to=1986',
  'q=pump&page=2',
  'q=catheter&sort=kNumber%3Aasc',
  'q=catheter&sort=receivedDate%3Adesc',
  'q=reviewdays%3A%3E180+catheter',
  'q=x-ray&class=2',
  'q=zzzzqx',
] as const;

type Answer = { total: number; kNumbers: string[]; facets: string[] };

/** Total, first page and every facet value with its count, once the counts are final (not "Loading filter counts…"). */
async function answer(page: Page, base: string, search: string): Promise<Answer> {
  const hash = search ? `#${search}` : '#';
  await page.goto(`${base}${hash}`);
  await page.waitForSelector('html[data-ready]', { timeout: 120_000 });
  // The address as the page writes it back (its own spelling, defaults left out): wait until these results are on screen.
  await page.waitForFunction(() => {
    const answers = document.getElementById('results')?.dataset.answers;
    return answers !== undefined && answers === (location.hash || '#');
  }, null, { timeout: 120_000 });
  await page.waitForFunction(() => {
    const f = document.getElementById('facets');
    return !!f && f.querySelector('details') !== null && !/Loading filter counts/.test(f.textContent ?? '');
  }, null, { timeout: 120_000 });
  const status = await statusOf(page);
  const facets = await page.locator('#facets a.facet-value').evaluateAll((links) =>
    links.map((a) => `${a.closest('details')?.className}|${(a as HTMLElement).dataset.value}|${(a as HTMLElement).dataset.count}`),
  );
  return { total: /^No clearances/.test(status) ? 0 : totalIn(status), kNumbers: await listedKNumbers(page), facets };
}

const SNAPSHOTS = [
  { label: 'the bundled snapshot (57,830 clearances)', build: async () => (await buildFixture({ sources: (await defaultSources()).sources })).out },
  {
    // A generated snapshot past the bundled one: 175,000 takes minutes to build, too long for the suite; 80,000
    // already cuts the word list into about sixty chunks and the documents into forty K number blocks.
    label: 'a generated snapshot of 80,000 clearances',
    build: async () => {
      const dir = await mkdtemp(join(tmpdir(), 'device-510k-generated-'));
      await runGenerate({ records: 80_000, out: join(dir, 'pmn'), seed: '510k' });
      return (await buildFixture({ sources: [join(dir, 'pmn'), resolve(FOICLASS)], out: join(dir, 'snapshot') })).out;
    },
  },
];

for (const { label, build } of SNAPSHOTS) {
  describe.skipIf(skip !== null)(`static mode over the chunked index agrees with the server over ${label}`, () => {
    let snapshot: string;
    let server: Host;
    let statics: Host;
    let browser: Browser;
    const errors: string[] = [];

    beforeAll(async () => {
      snapshot = await realpath(await build());
      [server, statics] = await Promise.all([startHost('server', snapshot), startHost('static', snapshot)]);
      browser = await launchChromium();
    }, 600_000);

    afterAll(async () => {
      await browser?.close();
      await server?.close();
      await statics?.close();
    });

    test('the same searches give the same totals, first pages and facet counts', async () => {
      const directory = SearchChunks.parse(JSON.parse(await readFile(join(snapshot, SEARCH_CHUNKS_PATH), 'utf8')));
      expect(directory.termChunks.length).toBeGreaterThan(20);
      const [a, b] = [await browser.context.newPage(), await browser.context.newPage()];
      collectErrors(a, errors);
      collectErrors(b, errors);
      let nonEmpty = 0;
      for (const search of SEARCHES) {
        const [fromServer, fromStatic] = [await answer(a, server.url, search), await answer(b, statics.url, search)];
        expect(await b.getAttribute('html', 'data-engine')).toBe('index');
        expect(fromStatic, search).toEqual(fromServer);
        if (fromServer.total > 0) nonEmpty++;
      }
      expect(nonEmpty).toBeGreaterThanOrEqual(18);
      expect(errors).toEqual([]);
    }, 900_000);

    test('shows the first page and its exact total before the facet columns arrive, then the counts', async () => {
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
      expect(await page.locator('#facets a.facet-value').count()).toBe(0);
      // The first page read word chunks, not the columns.
      expect(fetched.some((p) => /\/search\/chunks\/terms-/.test(p))).toBe(true);
      expect(fetched.some((p) => /\/search\/(part-\d+|chunks\/docTerms-)/.test(p))).toBe(false);
      await expect.poll(() => held.length, { timeout: 60_000 }).toBeGreaterThan(0);
      // While the columns are held, the counts show how many of their bytes have arrived, out of the sizes the
      // directory gives for the files the counts read: at least the product code and applicant columns, at most all.
      const directory = SearchChunks.parse(JSON.parse(await readFile(join(snapshot, SEARCH_CHUNKS_PATH), 'utf8')));
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
      await page.waitForSelector('#facets a.facet-value', { timeout: 120_000 });
      // The total shown first was final.
      expect(await statusOf(page)).toBe(status);
      await page.close();
    }, 300_000);
  });
}
