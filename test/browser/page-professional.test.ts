import { realpath } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ClearanceRecord } from '../../src/contract/index.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { browserSkipReason, launchChromium, type Browser } from './chromium.ts';
import { matchesOf, readTruth, type Truth } from './fixture-truth.ts';
import { collectErrors, listedKNumbers, seriousViolations, startHost, waitForStatus, type Host } from './page-helpers.ts';

const skip = browserSkipReason();
const QUERY = 'catheter';

const dayNumber = (date: string) => Date.parse(`${date}T00:00:00Z`) / 86_400_000;

/** Nearest rank: the value at rank ⌈p × n⌉ of the sorted values (so each figure is a real review time). */
const rank = (sorted: number[], p: number) => sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;

/** Review days by decision year, computed from the records' two dates: what the page's chart and table must show. */
function reviewByYear(records: readonly ClearanceRecord[]): { year: number; count: number; median: number; p90: number }[] {
  const byYear = new Map<number, number[]>();
  for (const r of records) {
    if (!r.decisionDate || !r.receivedDate) continue;
    const year = Number(r.decisionDate.slice(0, 4));
    byYear.set(year, [...(byYear.get(year) ?? []), dayNumber(r.decisionDate) - dayNumber(r.receivedDate)]);
  }
  return [...byYear]
    .sort(([a], [b]) => a - b)
    .map(([year, days]) => {
      const sorted = days.sort((a, b) => a - b);
      return { year, count: sorted.length, median: rank(sorted, 0.5), p90: rank(sorted, 0.9) };
    });
}

for (const mode of ['server', 'static'] as const) {
  describe.skipIf(skip !== null)(`what a regulatory professional needs on the page, ${mode} mode`, () => {
    let truth: Truth;
    let host: Host;
    let browser: Browser;
    let page: Page;
    const errors: string[] = [];

    beforeAll(async () => {
      const snapshot = await realpath(await buildFixtureSnapshot());
      truth = await readTruth(snapshot);
      host = await startHost(mode, snapshot);
      browser = await launchChromium();
      page = await browser.context.newPage();
      collectErrors(page, errors);
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      await host?.close();
    });

    test('review time: median and 90th percentile by decision year, as a chart with a table, and in each result line', async () => {
      const matches = matchesOf(truth, QUERY);
      const want = reviewByYear(matches);
      expect(want.length).toBeGreaterThan(2);
      await page.goto(`${host.url}#q=${QUERY}`);
      await waitForStatus(page, new RegExp(`match “${QUERY}”`));
      await page.locator('#review:not([hidden])').waitFor({ timeout: 20_000 });

      const all = matches.filter((r) => r.decisionDate && r.receivedDate).map((r) => dayNumber(r.decisionDate!) - dayNumber(r.receivedDate!)).sort((a, b) => a - b);
      const line = page.locator('#review .review-line');
      expect(Number(await line.getAttribute('data-median'))).toBe(rank(all, 0.5));
      expect(Number(await line.getAttribute('data-p90'))).toBe(rank(all, 0.9));
      expect(await line.innerText()).toContain(`over ${all.length} clearances with both dates`);

      // The table behind the chart: one row a year.
      await page.locator('#review .review-table-details summary').click();
      const rows = await page.locator('#review .review-table tbody tr').evaluateAll((trs) =>
        trs.map((tr) => Array.from(tr.querySelectorAll('th, td')).map((c) => Number(c.textContent!.replace(/,/g, '')))));
      expect(rows.map(([year, count, median, p90]) => ({ year, count, median, p90 }))).toEqual(want);

      // The chart: accessible by its title and description, one group of bars a year, in year order.
      const svg = page.locator('#review svg.review-chart');
      expect(await svg.getAttribute('role')).toBe('img');
      expect(await page.locator('#review-chart-title').textContent()).toMatch(/median and 90th percentile/);
      expect(await svg.locator('g.year').evaluateAll((gs) => gs.map((g) => Number(g.getAttribute('data-year'))))).toEqual(want.map((w) => w.year));
      // A true year axis: the bars' places are proportional to their years, so a gap of years shows as a gap.
      const bars = await svg.locator('g.year').evaluateAll((gs) =>
        gs.map((g) => ({
          x: Number(g.querySelector('rect.median')!.getAttribute('x')),
          width: Number(g.querySelector('rect.median')!.getAttribute('width')),
          count: g.querySelector('text.count')?.textContent ?? null,
          few: g.classList.contains('few'),
        })),
      );
      const gaps = want.slice(1).map((w, i) => w.year - want[i]!.year);
      expect(Math.max(...gaps), 'the fixture has a gap of years').toBeGreaterThan(1);
      const perYear = (bars.at(-1)!.x - bars[0]!.x) / (want.at(-1)!.year - want[0]!.year);
      bars.forEach((b, i) => expect(b.x - bars[0]!.x).toBeCloseTo((want[i]!.year - want[0]!.year) * perYear, 3));
      // Each year's count is shown under its bar (as a compact number), and a small sample is marked.
      const compact = (n: number) => (n < 1000 ? String(n) : n < 10_000 ? `${(n / 1000).toFixed(1).replace(/\.0$/, '')}k` : `${Math.round(n / 1000)}k`);
      if (bars[0]!.width * 1.25 >= 14) expect(bars.map((b) => b.count)).toEqual(want.map((w) => compact(w.count)));
      expect(bars.map((b) => b.few)).toEqual(want.map((w) => w.count < 10));
      expect(bars.some((b) => b.few)).toBe(true);
      expect(await page.locator('#review .legend').innerText()).toContain('fewer than 10');

      // Each result line says its review time.
      const listed = await listedKNumbers(page);
      const lines = await page.locator('#list .result-meta').allInnerTexts();
      listed.forEach((k, i) => {
        const r = truth.records.get(k)!;
        if (r.decisionDate && r.receivedDate) {
          const days = dayNumber(r.decisionDate) - dayNumber(r.receivedDate);
          expect(lines[i]).toContain(`Decided ${r.decisionDate}, ${days.toLocaleString('en-US')}-day review`);
        } else expect(lines[i]).not.toContain('review');
      });
      expect(await seriousViolations(page)).toEqual([]);
      expect(errors).toEqual([]);
    });

    test('syntax help beside the search box lists the qualifiers meta reports, and its examples run', async () => {
      const meta = (await fetch(new URL('snapshot/meta.json', host.url)).then((r) => r.json())) as { qualifiers: { name: string; accepts: string }[] };
      expect(meta.qualifiers.length).toBeGreaterThan(5);
      await page.goto(`${host.url}#`);
      await page.waitForSelector('html[data-ready]', { timeout: 20_000 });
      const help = page.locator('#syntax');
      expect(await help.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
      // Beside the search box: inside the search form, next to its hint.
      expect(await help.evaluate((d) => d.closest('form')?.id)).toBe('search');
      await help.locator('summary').click();
      expect(await help.locator('summary').innerText()).toMatch(/Search syntax/);
      const listed = await help.locator('.qualifier dt').allInnerTexts();
      expect(listed).toEqual(meta.qualifiers.map((q) => q.name));
      expect(await help.locator('.qualifier dd').allInnerTexts()).toEqual(meta.qualifiers.map((q) => q.accepts));
      const text = await help.innerText();
      for (const rule of ['-word', 'OR', '"balloon catheter"', 'decided:2020..2024']) expect(text).toContain(rule);
      await help.locator('a.example', { hasText: 'catheter -foley' }).click();
      const status = await waitForStatus(page, /match “catheter -foley”/);
      const want = matchesOf(truth, 'catheter').filter((r) => !matchesOf(truth, 'foley').includes(r)).length;
      expect(status).toMatch(new RegExp(`^${want} clearances? match`));
      expect(errors).toEqual([]);
    });

    test('"Copy link" copies an address that reproduces the search', async () => {
      await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(host.url).origin });
      const hash = `#q=${QUERY}&from=1980-03-15&sort=decisionDate%3Aasc&page=2`;
      await page.goto(`${host.url}${hash}`);
      const status = await waitForStatus(page, new RegExp(`match “${QUERY}”`));
      const listed = await listedKNumbers(page);
      expect(listed.length).toBeGreaterThan(0);
      await page.locator('#copy-link').click();
      await expect.poll(() => page.locator('#link-status').innerText()).toMatch(/^Link copied/);
      const link = await page.evaluate(() => navigator.clipboard.readText());
      expect(link).toBe(await page.locator('#copy-link').getAttribute('data-link'));
      expect(new URL(link).hash).toBe(hash);
      const other = await browser.context.newPage();
      collectErrors(other, errors);
      await other.goto(link);
      expect(await waitForStatus(other, new RegExp(`match “${QUERY}”`))).toBe(status);
      expect(await listedKNumbers(other)).toEqual(listed);
      await other.close();
      expect(errors).toEqual([]);
    });

    test('the record view has one "Submission type" row and no rows of "Not given"', async () => {
      // A clearance with empty fields (the older files give no submission type or summary) and a classified code.
      const record = [...truth.records.values()].find((r) => r.productCode && truth.deviceTypes.get(r.productCode) && (r.expeditedReview === null || r.statementOrSummary === null))!;
      expect(record).toBeDefined();
      await page.goto(`${host.url}#record=${record.kNumber}`);
      await page.waitForSelector('#classification dd[data-field="deviceType"]', { timeout: 20_000 });
      const labels = await page.locator('#record dt').allInnerTexts();
      expect(labels.filter((l) => l === 'Submission type')).toHaveLength(record.submissionType ? 1 : 0);
      expect(await page.locator('#record dd').allInnerTexts()).not.toContain('Not given');
      expect(await page.locator('#record').innerText()).not.toMatch(/Not given/);
      // The empty fields are named once, in words, so that a reader still learns what FDA does not say.
      const empty = (['submissionType', 'statementOrSummary', 'expeditedReview', 'thirdParty'] as const).filter((k) => record[k] === null);
      expect(empty.length).toBeGreaterThan(0);
      const missing = (await page.locator('#record .not-given').first().getAttribute('data-fields'))!.split(' ');
      expect(missing).toEqual(expect.arrayContaining([...empty]));
      expect(await page.locator('#record .not-given').first().innerText()).toMatch(/^Not in FDA's record: /);
      expect(await seriousViolations(page)).toEqual([]);
      expect(errors).toEqual([]);
    });
  });
}
