import { cp, mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ClearanceRecord } from '../../src/contract/index.ts';
import { writePagefindIndex } from '../../build/index/pagefind.ts';
import { SnapshotWriter } from '../../build/write/writer.ts';
import { findNginx } from '../../bench/lib/nginx.ts';
import { runMirror } from '../../build/mirror/run.ts';
import { createApp } from '../../src/server/app.ts';
import type { Logger } from '../../src/server/log.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { browserSkipReason, launchChromium, type Browser } from './chromium.ts';
import { matchesOf, readTruth, type Truth } from './fixture-truth.ts';
import { startNginxHost } from './nginx-host.ts';
import { PUBLIC_DIR, startStaticHost } from './static-host.ts';

const SHOTS = new URL('../../test-output/', import.meta.url);
const QUERY = 'pacemaker';
const PAGE_SIZE = 10;

const skip = browserSkipReason();
if (skip) console.warn(`Browser tests skipped: ${skip}`);

const silent: Logger = { request: () => {}, info: () => {}, error: () => {} };

type Host = { url: string; close: () => Promise<void> };

/**
 * A copy of the snapshot whose browser index is rebuilt in `parts` Pagefind indexes, so that the static page's
 * merging of indexes (results, totals and facet counts summed over them) is tested on the fixture too, whose
 * clearances fit in one bucket of the real size.
 */
async function splitCopy(snapshot: string, truth: Truth, parts: number): Promise<string> {
  const dir = join(await mkdtemp(join(tmpdir(), 'device-510k-split-')), 'snapshot');
  await cp(await realpath(snapshot), dir, { recursive: true });
  await rm(join(dir, 'pagefind'), { recursive: true });
  const writer = new SnapshotWriter(dir);
  await writePagefindIndex([...truth.records.values()], truth.deviceTypes, writer, { bucketRecords: Math.ceil(truth.records.size / parts) });
  await writer.flush();
  return dir;
}

/** A mirror of `snapshot` made by `npm run mirror`'s code from our server, the way an operator would make one. */
async function mirrorOf(snapshot: string): Promise<string> {
  const origin = await createApp({ snapshotPath: snapshot, publicDir: null, syncStatePath: null, pollMs: 0, watch: false, logger: silent });
  const { url } = await origin.listen(0, '127.0.0.1');
  try {
    const to = join(await mkdtemp(join(tmpdir(), 'device-510k-mirror-')), 'snapshot');
    await runMirror({ from: `${url}/snapshot`, to });
    return to;
  } finally {
    await origin.close({ graceMs: 1000 });
  }
}

async function startHost(mode: 'server' | 'static', snapshot: string, via: 'node' | 'nginx' = 'node'): Promise<Host> {
  if (via === 'nginx') return startNginxHost(await mirrorOf(snapshot));
  if (mode === 'static') return startStaticHost(await realpath(snapshot));
  const app = await createApp({ snapshotPath: snapshot, publicDir: PUBLIC_DIR, syncStatePath: null, pollMs: 0, watch: false, logger: silent });
  const { url } = await app.listen(0, '127.0.0.1');
  return { url: `${url}/`, close: () => app.close({ graceMs: 1000 }) };
}

const statusOf = (page: Page) => page.locator('#status').innerText();

async function waitForStatus(page: Page, pattern: RegExp): Promise<string> {
  await page.waitForFunction((source) => new RegExp(source).test(document.getElementById('status')?.textContent ?? ''), pattern.source, {
    timeout: 20_000,
  });
  return statusOf(page);
}

const totalIn = (status: string): number => Number(/^([\d,]+) clearance/.exec(status)?.[1]?.replace(/,/g, '') ?? NaN);

async function listedKNumbers(page: Page): Promise<string[]> {
  return page.locator('#list .result-meta .k').allInnerTexts();
}

/** Product-code facet values as the API orders them: count descending, then code ascending. */
function topCodes(records: readonly ClearanceRecord[]): { value: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const r of records) if (r.productCode) counts.set(r.productCode, (counts.get(r.productCode) ?? 0) + 1);
  return [...counts]
    .map(([value, count]) => ({ value, count }))
    .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : 1))
    .slice(0, 10);
}

const shown = (v: string | boolean | null): string => (v === null ? 'Not given' : v === true ? 'Yes' : v === false ? 'No' : v);

const nginxMissing = (await findNginx()) === null;

const VARIANTS = [
  { label: 'server', mode: 'server', split: 0, via: 'node' },
  { label: 'static', mode: 'static', split: 0, via: 'node' },
  { label: 'static-split', mode: 'static', split: 3, via: 'node' },
  // A mirror, precompressed siblings and all, served as plain files by a stock nginx.
  { label: 'static-nginx-mirror', mode: 'static', split: 0, via: 'nginx' },
] as const;

for (const { label, mode, split, via } of VARIANTS) {
  const title = `the search page in ${mode} mode${split ? `, its browser index in ${split} parts` : ''}${via === 'nginx' ? ', a mirror served by plain nginx' : ''}`;
  describe.skipIf(skip !== null || (via === 'nginx' && nginxMissing))(title, () => {
    let truth: Truth;
    let host: Host;
    let browser: Browser;
    let page: Page;
    const pageErrors: string[] = [];
    let page1: string[] = [];
    let facetCode = '';
    let filtered: ClearanceRecord[] = [];
    let opened = '';

    beforeAll(async () => {
      const snapshot = await buildFixtureSnapshot();
      truth = await readTruth(await realpath(snapshot));
      host = await startHost(mode, split ? await splitCopy(snapshot, truth, split) : snapshot, via);
      browser = await launchChromium();
      page = await browser.context.newPage();
      page.on('pageerror', (err) => pageErrors.push(err.message));
      await mkdir(SHOTS, { recursive: true });
    });

    afterAll(async () => {
      await browser?.close();
      await host?.close();
    });

    test('starts in the right mode without being told, and lists every clearance', async () => {
      // No ?mode=: the page probes /v1/query once; the static host answers 405 and the page falls back.
      await page.goto(host.url);
      await page.waitForSelector('html[data-ready]', { timeout: 20_000 });
      expect(await page.getAttribute('html', 'data-mode')).toBe(mode);
      const status = await statusOf(page);
      expect(totalIn(status)).toBe(truth.records.size);
      expect(await page.locator('#list li').count()).toBe(PAGE_SIZE);
      await expect.poll(() => page.locator('#freshness').innerText()).toMatch(/newest decision \d{4}-\d{2}-\d{2}/);
      // Every control a person can reach has a name a screen reader can say.
      const unnamed = await page.evaluate(() =>
        Array.from(document.querySelectorAll('a[href], button, input, summary'))
          .filter((el) => !(el.getAttribute('aria-label') || (el as HTMLInputElement).labels?.[0]?.textContent || el.textContent)?.trim())
          .map((el) => el.outerHTML.slice(0, 80)),
      );
      expect(unnamed).toEqual([]);
      expect(await page.locator('#freshness').innerText()).toMatch(/Snapshot built 2026-01-01 00:00:00 UTC/);
    });

    test('searches: every clearance the contract says matches, and only those', async () => {
      const expected = matchesOf(truth, QUERY);
      expect(expected.length).toBeGreaterThan(PAGE_SIZE);
      await page.locator('#q').fill(QUERY);
      await page.locator('#q').press('Enter');
      const status = await waitForStatus(page, new RegExp(`match “${QUERY}”`));
      expect(totalIn(status)).toBe(expected.length);
      expect(page.url()).toContain(`#q=${QUERY}`);
      const listed = await listedKNumbers(page);
      expect(listed).toHaveLength(PAGE_SIZE);
      const expectedSet = new Set(expected.map((r) => r.kNumber));
      for (const k of listed) expect(expectedSet.has(k), `${k} does not match "${QUERY}"`).toBe(true);
    });

    test('shows facet counts over all matches, and a facet chosen from the keyboard filters the results', async () => {
      const expected = topCodes(matchesOf(truth, QUERY));
      const first = expected[0]!;
      const facet = page.locator('#facets a.facet-value').filter({ has: page.locator('.facet-label', { hasText: new RegExp(`^${first.value}$`) }) });
      await facet.waitFor({ timeout: 20_000 });
      const codes = await page.locator('#facet-productCode + ul .facet-label').allInnerTexts();
      const counts = await page.locator('#facet-productCode + ul .count').allInnerTexts();
      expect(codes.map((c, i) => ({ value: c, count: Number(counts[i]) }))).toEqual(expected);
      expect(first.count).toBeGreaterThan(PAGE_SIZE);

      await facet.focus();
      await page.keyboard.press('Enter');
      const status = await waitForStatus(page, new RegExp(`^${first.count} clearances match`));
      expect(totalIn(status)).toBe(first.count);
      expect(page.url()).toContain(`code=${first.value}`);
      await expect.poll(() => page.locator('#active .chip').allTextContents()).toEqual([`Product code ${first.value}×`]);
      for (const meta of await page.locator('#list .result-meta').allInnerTexts()) expect(meta).toContain(`Code ${first.value}`);
      facetCode = first.value;
      filtered = matchesOf(truth, QUERY).filter((r) => r.productCode === facetCode);
      page1 = await listedKNumbers(page);
    });

    test('pages through the filtered results', async () => {
      const pages = Math.ceil(filtered.length / PAGE_SIZE);
      await page.locator('#pager a[rel="next"]').click();
      await waitForStatus(page, new RegExp(`page 2 of ${pages}$`));
      expect(page.url()).toContain('page=2');
      expect(await page.getAttribute('#list', 'start')).toBe(String(PAGE_SIZE + 1));
      const page2 = await listedKNumbers(page);
      expect(page2).toHaveLength(filtered.length - PAGE_SIZE);
      expect(new Set([...page1, ...page2])).toEqual(new Set(filtered.map((r) => r.kNumber)));
      await page.screenshot({ path: new URL(`browser-${label}-results.png`, SHOTS).pathname, fullPage: true });
    });

    test('opens a record with every field, a link to FDA and its product code’s classification', async () => {
      const link = page.locator('#list .result-title').first();
      opened = (await page.locator('#list .result-meta .k').first().innerText()).trim();
      await link.click();
      await page.waitForSelector('#record:not([hidden]) dd[data-field="kNumber"]', { timeout: 20_000 });
      expect(page.url()).toContain(`record=${opened}`);
      expect(await page.isHidden('#results')).toBe(true);
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('record-heading');

      const record = truth.records.get(opened)!;
      const field = (name: string) => page.locator(`#record dd[data-field="${name}"]`).first().innerText();
      for (const key of ['kNumber', 'deviceName', 'applicant', 'decisionDate', 'decisionDescription', 'receivedDate', 'advisoryCommittee',
        'classificationCommittee', 'statementOrSummary', 'submissionType', 'thirdParty', 'expeditedReview', 'countryCode', 'evidenceStatus', 'id', 'title'] as const) {
        expect(await field(key), key).toBe(shown(record[key]));
      }
      expect(await field('productCode')).toContain(record.productCode!);
      expect(await field('sourceId')).toBe(record.source.sourceId);
      expect(await page.getAttribute('#record a.fda', 'href')).toBe(record.source.sourceUrl);

      const deviceType = truth.deviceTypes.get(record.productCode!) ?? null;
      await page.waitForSelector('#classification dd[data-field="deviceType"]', { timeout: 20_000 });
      expect(await page.locator('#classification dd[data-field="deviceType"]').innerText()).toBe(shown(deviceType));
      await page.screenshot({ path: new URL(`browser-${label}-record.png`, SHOTS).pathname, fullPage: true });
    });

    test('back returns to the same page of results, and forward to the record', async () => {
      await page.goBack();
      await page.waitForSelector('#results:not([hidden])');
      expect(await page.isHidden('#record')).toBe(true);
      expect(await statusOf(page)).toMatch(/page 2 of/);
      expect(await listedKNumbers(page)).toContain(opened);
      await page.goForward();
      await page.waitForSelector(`#record:not([hidden]) dd[data-field="kNumber"]:text("${opened}")`);
    });

    test('a year range narrows the results to those decision years', async () => {
      const years = [...new Set(filtered.flatMap((r) => (r.decisionDate ? [Number(r.decisionDate.slice(0, 4))] : [])))].sort();
      const from = years[0]!;
      const to = years[Math.floor(years.length / 2)]!;
      const expected = filtered.filter((r) => r.decisionDate && Number(r.decisionDate.slice(0, 4)) >= from && Number(r.decisionDate.slice(0, 4)) <= to);
      await page.goto(`${host.url}#q=${QUERY}&code=${facetCode}`);
      await waitForStatus(page, new RegExp(`^${filtered.length} clearances`));
      await page.locator('#from').fill(String(from));
      await page.locator('#to').fill(String(to));
      await page.locator('#years button').click();
      const status = await waitForStatus(page, new RegExp(`^${expected.length} clearance`));
      expect(totalIn(status)).toBe(expected.length);
      expect(page.url()).toContain(`from=${from}&to=${to}`);
    });

    test('a K number finds that one clearance and offers to open it', async () => {
      const k = [...truth.records.keys()].sort()[0]!;
      await page.goto(`${host.url}#q=${k.toLowerCase()}`);
      await waitForStatus(page, new RegExp(`^1 clearance matches “${k.toLowerCase()}”`));
      expect(await listedKNumbers(page)).toEqual([k]);
      await page.locator('#k-shortcut a').click();
      await page.waitForSelector(`#record:not([hidden]) dd[data-field="kNumber"]:text("${k}")`);
    });

    test('fits a phone screen: results first, filters folded away until asked for', async () => {
      const phone = await browser.context.newPage();
      phone.on('pageerror', (err) => pageErrors.push(err.message));
      await phone.setViewportSize({ width: 390, height: 844 });
      await phone.goto(`${host.url}#q=${QUERY}&code=${facetCode}`);
      await waitForStatus(phone, new RegExp(`match “${QUERY}”`));
      const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow).toBe(0);
      expect(await phone.locator('#filters-panel').getAttribute('open')).toBeNull();
      const firstResult = await phone.locator('#list .result').first().boundingBox();
      expect(firstResult!.y + firstResult!.height).toBeLessThan(844);
      await phone.screenshot({ path: new URL(`browser-${label}-phone.png`, SHOTS).pathname, fullPage: false });
      await phone.locator('#filters-panel > summary').click();
      await phone.locator('#facets a.facet-value').first().waitFor({ timeout: 20_000 });
      expect(await phone.locator('#facets a.facet-value').first().isVisible()).toBe(true);
      await phone.locator('#list .result-title').first().click();
      await phone.waitForSelector('#classification dd[data-field="deviceType"]', { timeout: 20_000 });
      expect(await phone.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);
      await phone.screenshot({ path: new URL(`browser-${label}-phone-record.png`, SHOTS).pathname, fullPage: true });
      await phone.close();
      expect(pageErrors).toEqual([]);
    });
  });
}
