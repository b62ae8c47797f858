import { readFile, realpath } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ClearanceRecord } from '../../src/contract/index.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { browserSkipReason, launchChromium, type Browser } from './chromium.ts';
import { matchesOf, readTruth, type Truth } from './fixture-truth.ts';
import { advertisesExtensions, collectErrors, listedKNumbers, seriousViolations, startHost, waitForStatus, type Host } from './page-helpers.ts';

/**
 * The page over the search's extensions (qualifiers, sorts, the facets input, the export), in both modes. They are
 * used only where meta advertises them, so against a service without them these tests have nothing to test.
 */
const skip = browserSkipReason();
const QUERY = 'catheter';

const VARIANTS = [
  { mode: 'server', via: 'node' },
  // The page in server mode against the API as a Cloudflare Worker under workerd (npm run worker).
  { mode: 'server', via: 'worker' },
  { mode: 'static', via: 'node' },
] as const;

for (const { mode, via } of VARIANTS) {
  describe.skipIf(skip !== null)(`the page over the search extensions, ${mode} mode${via === 'worker' ? ', the API as a Worker under workerd' : ''}`, () => {
    let truth: Truth;
    let host: Host;
    let browser: Browser;
    let page: Page;
    let extended = false;
    const errors: string[] = [];

    beforeAll(async () => {
      const snapshot = await buildFixtureSnapshot();
      truth = await readTruth(await realpath(snapshot));
      host = await startHost(mode, snapshot, { via });
      extended = await advertisesExtensions(host.url);
      browser = await launchChromium();
      page = await browser.context.newPage();
      collectErrors(page, errors);
    });

    afterAll(async () => {
      await browser?.close();
      await host?.close();
    });

    test('a qualifier facet value is a filter chip whose count is the total it gives', async (ctx) => {
      if (!extended) ctx.skip();
      await page.goto(`${host.url}#q=${QUERY}`);
      await waitForStatus(page, new RegExp(`match “${QUERY}”`));
      // Static mode shows the first page before the facet counts, whose columns load after it.
      await expect
        .poll(() => page.locator('#facets .facet > summary').allInnerTexts(), { timeout: 30_000 })
        .toEqual(expect.arrayContaining(['Review committee', 'Device class', 'Decision', 'Third-party review', '510(k) summary or statement']));
      for (const field of ['advisoryCommittee', 'deviceClass', 'thirdParty']) {
        const value = page.locator(`#facet-${field} + ul a`).first();
        const count = Number(await value.getAttribute('data-count'));
        await value.focus();
        await page.keyboard.press('Enter');
        await waitForStatus(page, new RegExp(`^${count} clearance`));
        expect(await page.locator('#active .chip').count()).toBe(1);
        // Removing the chip from the keyboard brings back every match.
        await page.locator('#active .chip').focus();
        await page.keyboard.press('Enter');
        await waitForStatus(page, new RegExp(`^${matchesOf(truth, QUERY).length} clearances match`));
      }
      expect(await seriousViolations(page)).toEqual([]);
    });

    test('every decision year of the matches, in year order, and a day-precise range', async (ctx) => {
      if (!extended) ctx.skip();
      const matches = matchesOf(truth, QUERY);
      const years = [...new Set(matches.flatMap((r) => (r.decisionDate ? [Number(r.decisionDate.slice(0, 4))] : [])))].sort((a, b) => a - b);
      await page.goto(`${host.url}#q=${QUERY}`);
      await waitForStatus(page, new RegExp(`match “${QUERY}”`));
      await expect.poll(() => page.locator('#facet-decisionYear + ul .facet-code').allInnerTexts()).toEqual(years.map(String));
      const dated = matches.filter((r) => r.decisionDate).sort((a, b) => (a.decisionDate! < b.decisionDate! ? -1 : 1));
      const from = dated[1]!.decisionDate!;
      const to = dated.at(-2)!.decisionDate!;
      const expected = dated.filter((r) => r.decisionDate! >= from && r.decisionDate! <= to);
      await page.locator('#from').fill(from);
      await page.locator('#to').fill(to);
      await page.locator('#dates button').click();
      await waitForStatus(page, new RegExp(`^${expected.length} clearance`));
      expect(await page.locator('#date-note').isHidden()).toBe(true);
      expect(new Set(await listedKNumbers(page)).size).toBe(Math.min(10, expected.length));
    });

    test('sorts, chosen from the keyboard', async (ctx) => {
      if (!extended) ctx.skip();
      await page.goto(`${host.url}#q=${QUERY}`);
      await waitForStatus(page, new RegExp(`match “${QUERY}”`));
      await page.locator('#sort').focus();
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('ArrowDown');
      await expect.poll(() => page.url()).toContain('sort=decisionDate%3Aasc');
      // The first key press asks for newest first: wait for the answer to the second, not for any sorted one.
      await page.waitForFunction(() => document.getElementById('results')?.dataset.answers?.includes('sort=decisionDate%3Aasc'));
      const dates = (await listedKNumbers(page)).map((k) => truth.records.get(k)!.decisionDate);
      const known = dates.filter((d): d is string => d !== null);
      expect(known.length).toBeGreaterThan(1);
      expect(known).toEqual([...known].sort());
    });

    test('downloads every match as CSV in the order of the results', async (ctx) => {
      if (!extended) ctx.skip();
      const matches = matchesOf(truth, QUERY);
      await page.goto(`${host.url}#q=${QUERY}&sort=kNumber:asc`);
      await waitForStatus(page, new RegExp(`^${matches.length} clearances`));
      const [download] = await Promise.all([page.waitForEvent('download', { timeout: 20_000 }), page.locator('#download').click()]);
      // Server mode hands the service's export URL to the browser; static mode builds the file itself.
      if (mode === 'server') expect(download.url()).toMatch(/\/v1\/export\?query=catheter&sort=kNumber%3Aasc&format=csv$/);
      const text = await readFile((await download.path())!, 'utf8');
      const kNumbers = text.replace(/^\ufeff/, '').split(/\r?\n/).slice(1).filter(Boolean).map((line) => line.split(',')[0]!.replace(/"/g, ''));
      const sorted = matches.map((r: ClearanceRecord) => r.kNumber).sort();
      expect(kNumbers).toEqual(sorted);
      expect(errors).toEqual([]);
    });
  });
}
