import { readFile, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { defaultSources } from '../../build/sources/default.ts';
import { buildFixture } from '../helpers/fixture-snapshot.ts';
import { browserSkipReason } from './chromium.ts';
import { matchesOf, readTruth, type Truth } from './fixture-truth.ts';
import { collectErrors, csvRows, downloadCsv, STATIC_CSV_CAP, startHost, useBrowser, waitForStatus, type Host } from './page-helpers.ts';

const skip = browserSkipReason();

/**
 * Over the bundled data (FDA's complete files to 1990, samples after): what a regulatory professional meets on the
 * page, in both modes.
 */
describe.skipIf(skip !== null)('the page over the bundled data, server and static mode', () => {
  let truth: Truth;
  let snapshot: string;
  let server: Host;
  let statics: Host;
  let a: Page;
  let b: Page;
  const errors: string[] = [];

  const browser = useBrowser(async () => {
    snapshot = await realpath((await buildFixture({ sources: (await defaultSources()).sources })).out);
    truth = await readTruth(snapshot);
    [server, statics] = await Promise.all([startHost('server', snapshot), startHost('static', snapshot)]);
    return [server, statics];
  });

  beforeAll(async () => {
    [a, b] = [await browser().context.newPage(), await browser().context.newPage()];
    collectErrors(a, errors);
    collectErrors(b, errors);
  });

  test('the CSV of static mode is the server export, byte for byte, with the same name', async () => {
    // K882225's device name starts with "-": a spreadsheet would run it as a formula.
    const k = truth.records.get('K882225')!;
    expect(k.deviceName).toBe('-AMYLASE EPS');
    const searches = ['#q=K882225', '#q=amylase', '#q=catheter+-foley', '#q=glove&from=1985&to=1986&sort=decisionDate%3Aasc', '#code=DQY&applicant=C.R.+BARD%2C+INC.'];
    for (const hash of searches) {
      const [fromServer, fromStatic] = [await downloadCsv(a, server.url, hash), await downloadCsv(b, statics.url, hash)];
      expect(await a.getAttribute('html', 'data-mode')).toBe('server');
      expect(await b.getAttribute('html', 'data-mode')).toBe('static');
      const rows = csvRows(fromServer.bytes);
      expect(rows.length, hash).toBeGreaterThan(1);
      expect(rows.length - 1, hash).toBeLessThanOrEqual(STATIC_CSV_CAP);
      expect(fromStatic.bytes.equals(fromServer.bytes), hash).toBe(true);
      expect(fromStatic.name, hash).toBe(fromServer.name);
      expect(fromStatic.name, hash).toMatch(/^device-510k-[a-z0-9-]+\.csv$/);
    }
    // The row of K882225 as the server writes it: the name behind an apostrophe, all 24 columns.
    const one = csvRows((await downloadCsv(b, statics.url, '#q=K882225')).bytes);
    expect(one[0]!.split(',')).toHaveLength(24);
    expect(one[1]!.startsWith("K882225,'-AMYLASE EPS,")).toBe(true);
  }, 600_000);

  test('a search that finds nothing suggests what was probably meant, each checked and counted', async () => {
    /** Records every word of `text` finds (each word the start of a word of the record's fields): a plain scan. */
    const allOf = (...words: string[]) => words.map((w) => new Set(matchesOf(truth, w))).reduce((a, b) => new Set([...a].filter((r) => b.has(r))));
    const catheter = allOf('catheter');
    const foley = allOf('foley');
    const examples = [
      // NOT is a plain word here, so the query asks for records with "not" too.
      { q: 'catheter NOT foley', found: allOf('catheter', 'not', 'foley').size, want: 'catheter -foley', count: [...catheter].filter((r) => !foley.has(r)).length },
      // Quoted, applicant: asks for the whole name; FDA's is "C.R. BARD, INC." and the like.
      {
        q: 'applicant:"c.r. bard"',
        found: [...truth.records.values()].filter((r) => r.applicant?.replace(/\s+/g, ' ').trim().toLowerCase() === 'c.r. bard').length,
        want: 'c.r. bard',
        count: allOf('c', 'r', 'bard').size,
      },
    ];
    for (const { q, found, want, count } of examples) {
      expect(found, q).toBe(0);
      expect(count, q).toBeGreaterThan(100);
      for (const [page, url] of [[a, server.url], [b, statics.url]] as const) {
        await page.goto(`${url}#q=${encodeURIComponent(q)}`);
        await waitForStatus(page, /^No clearances match/);
        const link = page.locator(`#suggest a.suggestion[data-q="${want.replace(/"/g, '\\"')}"]`);
        await link.waitFor({ timeout: 30_000 });
        expect(Number(await link.getAttribute('data-count')), `${q} ${page === a ? 'server' : 'static'}`).toBe(count);
        expect(await link.locator('xpath=..').innerText()).toContain(`${count.toLocaleString('en-US')} clearances`);
        // Every suggestion shown finds something.
        for (const n of await page.locator('#suggest a.suggestion').evaluateAll((as) => as.map((x) => Number(x.getAttribute('data-count'))))) expect(n).toBeGreaterThan(0);
        await link.click();
        const status = await waitForStatus(page, new RegExp(`match “${want.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}”`));
        expect(status.startsWith(`${count.toLocaleString('en-US')} clearances`)).toBe(true);
      }
    }
  }, 300_000);

  test('"cathter": did you mean "catheter", with its exact count, from the index\'s own words; clicking it runs it', async () => {
    const count = matchesOf(truth, 'catheter').length;
    expect(matchesOf(truth, 'cathter')).toHaveLength(0);
    expect(count).toBeGreaterThan(100);
    // The word lists static mode may read: those whose words can start with "c" (search/chunks.json's own list).
    const directory = JSON.parse(await readFile(join(snapshot, 'search/chunks.json'), 'utf8')) as { words: { chunks: { first: string; last: string; file: { path: string } }[] } };
    const ofC = directory.words.chunks.filter((c) => c.last >= 'c' && c.first < 'd').map((c) => c.file.path);
    expect(ofC.length).toBeLessThan(directory.words.chunks.length);
    for (const [mode, url] of [['server', server.url], ['static', statics.url]] as const) {
      // A page of its own: the pages above searched "catheter" already, and a page keeps the word lists it read.
      const page = await browser().context.newPage();
      collectErrors(page, errors);
      const wordLists: string[] = [];
      const listen = (r: { url(): string }) => {
        const m = /\/(search\/chunks\/words-[0-9a-f]+\.bin\.gz)$/.exec(new URL(r.url()).pathname);
        if (m) wordLists.push(m[1]!);
      };
      page.on('request', listen);
      await page.goto(`${url}#q=cathter`);
      await waitForStatus(page, /^No clearances match/);
      const link = page.locator('#suggest a.suggestion.spelling[data-q="catheter"]');
      await link.waitFor({ timeout: 60_000 });
      page.off('request', listen);
      expect(await page.locator('#suggest h3').innerText(), mode).toBe('Did you mean');
      // The first suggestion, with the count of a plain scan of the records.
      expect(await page.locator('#suggest a.suggestion').first().getAttribute('data-q'), mode).toBe('catheter');
      expect(Number(await link.getAttribute('data-count')), mode).toBe(count);
      expect(await link.locator('xpath=..').innerText(), mode).toContain(`${count.toLocaleString('en-US')} clearances`);
      // The server corrects; a static page reads the word lists of "c" only, never every list.
      if (mode === 'server') expect(wordLists).toEqual([]);
      else expect([...new Set(wordLists)].sort()).toEqual([...ofC].sort());
      await link.click();
      const status = await waitForStatus(page, /match “catheter”/);
      expect(status.startsWith(`${count.toLocaleString('en-US')} clearances`), mode).toBe(true);
      await page.close();
    }
  }, 300_000);

  test('a field name that is not a qualifier: the search is refused, and the qualifier meant is suggested', async () => {
    const count = [...truth.records.values()].filter((r) => /\bbard/i.test(r.applicant ?? '')).length;
    for (const [page, url] of [[a, server.url], [b, statics.url]] as const) {
      await page.goto(`${url}#q=company%3Abard`);
      // The query's mistake, not a failure of the search.
      const status = await waitForStatus(page, /^Not searched: the query has a mistake/);
      expect(status).not.toMatch(/failed/);
      expect(await page.locator('#alert').innerText()).toContain('"company:" is not a qualifier');
      const link = page.locator('#suggest a.suggestion[data-q="applicant:bard"]');
      await link.waitFor({ timeout: 30_000 });
      expect(Number(await link.getAttribute('data-count'))).toBe(count);
    }
  }, 120_000);

  test('"Follow": the feed of exactly the search in server mode; in static mode the feed of all new clearances, saying so', async () => {
    for (const [page, url] of [[a, server.url], [b, statics.url]] as const) {
      await page.goto(`${url}#q=catheter&code=DQY`);
      await waitForStatus(page, /clearances? match/);
      const link = page.locator('#follow');
      await link.waitFor({ timeout: 20_000 });
      const href = new URL((await link.getAttribute('href'))!);
      if (page === a) {
        expect(await link.innerText()).toBe('Follow this search');
        expect(href.pathname).toMatch(/\/v1\/feed$/);
        expect(href.searchParams.get('query')).toBe('catheter');
        expect(href.searchParams.get('productCode')).toBe('DQY');
      } else {
        // No feed per search on a static host: the link says it follows every new clearance, and that there is none.
        expect(await link.innerText()).toBe('Follow all new clearances (no search feed)');
        expect(await link.getAttribute('title')).toMatch(/no feed per search/);
        expect(href.pathname).toMatch(/\/feeds\/new\.atom$/);
        expect((await fetch(href)).status).toBe(200);
      }
    }
  }, 120_000);

  afterAll(() => {
    // The 400 of the refused query is logged by the browser as a failed resource in server mode.
    expect(errors.filter((e) => !/status of 400/.test(e))).toEqual([]);
  });
});
