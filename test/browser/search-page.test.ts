import { createHash } from 'node:crypto';
import { mkdir, readFile, realpath } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { findNginx } from '../../bench/lib/nginx.ts';
import { Manifest, type ClearanceRecord } from '../../src/contract/index.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { browserSkipReason, launchChromium, type Browser } from './chromium.ts';
import { matchesOf, readTruth, type Truth } from './fixture-truth.ts';
import { advertisesExtensions, collectErrors, listedKNumbers, seriousViolations, splitCopy, startHost, statusOf, totalIn, waitForStatus, type Host } from './page-helpers.ts';

const SHOTS = new URL('../../test-output/', import.meta.url);
const QUERY = 'pacemaker';
const PAGE_SIZE = 10;

const skip = browserSkipReason();
if (skip) console.warn(`Browser tests skipped: ${skip}`);

/** Product-code facet values as the API orders them: count descending, then code ascending. */
function topCodes(records: readonly ClearanceRecord[]): { value: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const r of records) if (r.productCode) counts.set(r.productCode, (counts.get(r.productCode) ?? 0) + 1);
  return [...counts]
    .map(([value, count]) => ({ value, count }))
    .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : 1))
    .slice(0, 10);
}

const yearOf = (r: ClearanceRecord): number | null => (r.decisionDate ? Number(r.decisionDate.slice(0, 4)) : null);

/** A CSV file's rows as cells (RFC 4180 quoting), byte-order mark and final line end removed. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [[]];
  let cell = '';
  let quoted = false;
  const body = text.replace(/^\ufeff/, '');
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (quoted) {
      if (c === '"' && body[i + 1] === '"') (cell += '"'), i++;
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') rows.at(-1)!.push(cell), (cell = '');
    else if (c === '\r' && body[i + 1] === '\n') rows.at(-1)!.push(cell), (cell = ''), rows.push([]), i++;
    else cell += c;
  }
  if (rows.at(-1)!.length === 0 && cell === '') rows.pop();
  return rows;
}

const nginxMissing = (await findNginx()) === null;

const VARIANTS = [
  { label: 'server', mode: 'server', engine: 'api', split: 0, via: 'node', query: '' },
  // The same page in server mode against the API as a Cloudflare Worker under workerd (npm run worker).
  { label: 'server-worker', mode: 'server', engine: 'api', split: 0, via: 'worker', query: '' },
  { label: 'static', mode: 'static', engine: 'index', split: 0, via: 'node', query: '' },
  // Pagefind, the fallback for an index too large to download, over a browser index in three parts.
  { label: 'static-pagefind', mode: 'static', engine: 'pagefind', split: 3, via: 'node', query: '?engine=pagefind' },
  // A mirror, precompressed siblings and all, served as plain files by a stock nginx.
  { label: 'static-nginx-mirror', mode: 'static', engine: 'index', split: 0, via: 'nginx', query: '' },
] as const;

for (const { label, mode, engine, split, via, query } of VARIANTS) {
  const title = `the search page in ${mode} mode (${engine})${split ? `, its Pagefind index in ${split} parts` : ''}${via === 'nginx' ? ', a mirror served by plain nginx' : ''}${via === 'worker' ? ', the API as a Worker under workerd' : ''}`;
  describe.skipIf(skip !== null || (via === 'nginx' && nginxMissing))(title, () => {
    let truth: Truth;
    let host: Host;
    let base: string;
    let browser: Browser;
    let page: Page;
    const errors: string[] = [];
    let page1: string[] = [];
    let facetCode = '';
    let filtered: ClearanceRecord[] = [];
    let opened = '';
    // With the search extensions the page filters by day and downloads through the service's export.
    let extended = false;

    beforeAll(async () => {
      const snapshot = await buildFixtureSnapshot();
      truth = await readTruth(await realpath(snapshot));
      host = await startHost(mode, split ? await splitCopy(snapshot, truth, split) : snapshot, { via });
      base = `${host.url}${query}`;
      extended = engine !== 'pagefind' && (await advertisesExtensions(host.url));
      browser = await launchChromium();
      page = await browser.context.newPage();
      collectErrors(page, errors);
      await mkdir(SHOTS, { recursive: true });
    });

    afterAll(async () => {
      await browser?.close();
      await host?.close();
    });

    test('starts in the right mode without being told, and lists every clearance', async () => {
      // No ?mode=: service.json says whether an API is beside the page; a static host's copy says none.
      await page.goto(base);
      await page.waitForSelector('html[data-ready]', { timeout: 20_000 });
      expect(await page.getAttribute('html', 'data-mode')).toBe(mode);
      expect(await page.getAttribute('html', 'data-engine')).toBe(engine);
      const status = await statusOf(page);
      expect(totalIn(status)).toBe(truth.records.size);
      expect(await page.locator('#list li').count()).toBe(PAGE_SIZE);
      await expect.poll(() => page.locator('#freshness').innerText()).toMatch(/newest decision \d{4}-\d{2}-\d{2}/);
      // Every control a person can reach has a name a screen reader can say.
      const unnamed = await page.evaluate(() =>
        Array.from(document.querySelectorAll('a[href], button, input, select, summary'))
          .filter((el) => !(el.getAttribute('aria-label') || (el as HTMLInputElement).labels?.[0]?.textContent || el.textContent)?.trim())
          .map((el) => el.outerHTML.slice(0, 80)),
      );
      expect(unnamed).toEqual([]);
      expect(await page.locator('#freshness').innerText()).toMatch(/Snapshot built 2026-01-01 00:00:00 UTC/);
      // The mode probe leaves nothing in the console.
      expect(errors).toEqual([]);
    });

    test('links the bulk downloads in the footer where the host serves them, each the file the manifest lists', async () => {
      const manifest = Manifest.parse(JSON.parse(await readFile(`${await realpath(await buildFixtureSnapshot())}/manifest.json`, 'utf8')));
      const downloads = page.locator('#downloads');
      // The Worker's assets leave the downloads out (25 MiB a file), and a snapshot searched with Pagefind reads no meta.
      if (via === 'worker' || engine === 'pagefind') {
        await expect.poll(() => page.locator('#freshness').innerText()).toMatch(/freshness/);
        expect(await downloads.isVisible()).toBe(false);
        return;
      }
      await expect.poll(() => downloads.isVisible(), { timeout: 20_000 }).toBe(true);
      const links = await downloads.locator('a').evaluateAll((as) => as.map((a) => ({ text: a.textContent, href: (a as HTMLAnchorElement).href })));
      expect(links.map((l) => l.text?.replace(/ \(.*\)$/, ''))).toEqual(['Parquet', 'SQLite']);
      for (const [i, path] of ['downloads/clearances.parquet', 'downloads/clearances.sqlite'].entries()) {
        const link = links[i]!;
        expect(link.href.endsWith(`/${path}`)).toBe(true);
        const body = Buffer.from(await (await fetch(link.href)).arrayBuffer());
        const listed = manifest.files.find((f) => f.path === path);
        expect({ bytes: body.length, sha256: createHash('sha256').update(body).digest('hex') }).toEqual({ bytes: listed?.bytes, sha256: listed?.sha256 });
      }
    });

    test('says what the snapshot holds, with the sources behind "About this data"', async () => {
      const coverage = page.locator('#coverage');
      await expect.poll(() => coverage.isVisible(), { timeout: 20_000 }).toBe(true);
      expect(await coverage.locator('.coverage-line').innerText()).toBe(
        `This snapshot holds ${truth.records.size.toLocaleString('en-US')} clearances decided ${minDate(truth)} to ${maxDate(truth)}.`,
      );
      const table = coverage.locator('details table');
      expect(await table.isVisible()).toBe(false);
      await coverage.locator('details > summary').focus();
      await page.keyboard.press('Enter');
      await table.waitFor({ state: 'visible' });
      // The fixture's four sources, the classification file among them.
      expect(await table.locator('tbody tr').count()).toBe(4);
      expect(await table.locator('tbody').innerText()).toContain("FDA's product classification file");
      // Pagefind would need all its filter files for the years; that fallback leaves them out.
      if (engine === 'pagefind') return;
      const perYear = await coverage.locator('.years-line').innerText();
      const years = new Map<number, number>();
      for (const r of truth.records.values()) if (yearOf(r) !== null) years.set(yearOf(r)!, (years.get(yearOf(r)!) ?? 0) + 1);
      const newest = Math.max(...years.keys());
      expect(perYear).toContain(`${newest}: ${years.get(newest)!.toLocaleString('en-US')}`);
      await page.screenshot({ path: new URL(`browser-${label}-coverage.png`, SHOTS).pathname, fullPage: false });
      await coverage.locator('details > summary').click();
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
      // Each result shows its decision day, not just the year.
      const first = truth.records.get(listed[0]!)!;
      expect(await page.locator('#list .result-meta .date').first().innerText()).toBe(`Decided ${first.decisionDate}`);
    });

    test('shows facet counts over all matches, product codes with their device type, years in year order', async () => {
      const matches = matchesOf(truth, QUERY);
      const expected = topCodes(matches);
      const first = expected[0]!;
      const facet = page.locator(`#facets a.facet-value[data-value="${first.value}"]`);
      await facet.waitFor({ timeout: 20_000 });
      const codes = await page.locator('#facet-productCode + ul .facet-code').allInnerTexts();
      const counts = await page.locator('#facet-productCode + ul a').evaluateAll((as) => as.map((a) => (a as HTMLElement).dataset.count));
      expect(codes.map((c, i) => ({ value: c, count: Number(counts[i]) }))).toEqual(expected);
      // Device types arrive from the classifications; a code FDA's file lacks keeps its bare code.
      await expect
        .poll(() => page.locator('#facet-productCode + ul .facet-name').allInnerTexts(), { timeout: 20_000 })
        .toEqual(expected.map((c) => truth.deviceTypes.get(c.value)).filter((t): t is string => !!t));

      const years = await page.locator('#facet-decisionYear + ul .facet-code').allInnerTexts();
      expect(years.length).toBeGreaterThan(1);
      expect(years.map(Number)).toEqual([...years.map(Number)].sort((a, b) => a - b));
      const yearCounts = await page.locator('#facet-decisionYear + ul a').evaluateAll((as) => as.map((a) => (a as HTMLElement).dataset.count));
      for (const [i, y] of years.entries()) expect(Number(yearCounts[i]), y).toBe(matches.filter((r) => yearOf(r) === Number(y)).length);

      expect(first.count).toBeGreaterThan(PAGE_SIZE);
      await facet.focus();
      await page.keyboard.press('Enter');
      const status = await waitForStatus(page, new RegExp(`^${first.count} clearances match`));
      expect(totalIn(status)).toBe(first.count);
      expect(page.url()).toContain(`code=${first.value}`);
      await expect.poll(() => page.locator('#active .chip').allTextContents()).toEqual([`Product code ${first.value}×`]);
      for (const meta of await page.locator('#list .result-meta').allInnerTexts()) expect(meta).toContain(`Code ${first.value}`);
      facetCode = first.value;
      filtered = matches.filter((r) => r.productCode === facetCode);
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

    test('opens a record for people: FDA fields in words, links to FDA, the classification, related clearances', async () => {
      const link = page.locator('#list .result-title').first();
      opened = (await page.locator('#list .result-meta .k').first().innerText()).trim();
      await link.click();
      await page.waitForSelector('#record:not([hidden]) dd[data-field="kNumber"]', { timeout: 20_000 });
      expect(page.url()).toContain(`record=${opened}`);
      expect(await page.isHidden('#results')).toBe(true);
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('record-heading');

      const record = truth.records.get(opened)!;
      // A field the record leaves empty has no row: it is named in the one line of what FDA's record does not give.
      const field = async (name: string) => {
        const dd = page.locator(`#record dd[data-field="${name}"]`);
        if ((await dd.count()) > 0) return dd.first().innerText();
        const missing = (await page.locator('#record .not-given').first().getAttribute('data-fields'))?.split(' ') ?? [];
        return missing.includes(name) ? 'Not given' : `no row for ${name}`;
      };
      const words = (v: string | boolean | null) => (v === null ? 'Not given' : v === true ? 'Yes' : v === false ? 'No' : v);
      const code = (record as { decisionCode?: string | null }).decisionCode;
      expect(await field('decisionDescription')).toBe(record.decisionDescription ? `${record.decisionDescription}${code ? ` (${code})` : ''}` : words(code ?? null));
      for (const key of ['kNumber', 'deviceName', 'applicant', 'decisionDate', 'receivedDate', 'advisoryCommittee',
        'classificationCommittee', 'statementOrSummary', 'submissionType', 'thirdParty', 'expeditedReview'] as const) {
        expect(await field(key), key).toBe(words(record[key]));
      }
      const days = record.receivedDate && record.decisionDate ? (Date.parse(record.decisionDate) - Date.parse(record.receivedDate)) / 86_400_000 : null;
      expect(await field('reviewDays')).toBe(days === null ? 'Not given' : `${days.toLocaleString('en-US')} days from receipt to decision`);
      if (record.countryCode === 'US') expect(await field('countryCode')).toBe('United States (US)');
      // Bookkeeping members of the API's record say nothing to a reader.
      for (const internal of ['evidenceStatus', 'id', 'title', 'sourceId', 'schemaVersion', 'textOrigin', 'collection']) {
        expect(await page.locator(`#record dd[data-field="${internal}"]`).count(), internal).toBe(0);
      }
      expect(await page.locator('#record').innerText()).not.toMatch(/Evidence status|Schema version|Text origin/);
      expect(await page.getAttribute('#record .record-links a >> nth=0', 'href')).toBe(record.source.sourceUrl);

      const deviceType = truth.deviceTypes.get(record.productCode!) ?? null;
      await page.waitForSelector('#classification dd[data-field="deviceType"]', { timeout: 20_000 });
      expect(await page.locator('#classification dd[data-field="deviceType"]').innerText()).toBe(words(deviceType));
      if (deviceType) await expect.poll(() => field('productCode')).toContain(`${record.productCode} (${deviceType})`);

      // Other clearances of the same product code: the newest few, and a link to all of them.
      const sameCode = [...truth.records.values()].filter((r) => r.productCode === record.productCode);
      const related = page.locator('#related .related-list').first();
      await related.waitFor({ timeout: 20_000 });
      expect(await related.locator('h3').innerText()).toBe(`Other clearances with product code ${record.productCode}`);
      const listed = await related.locator('li').allInnerTexts();
      expect(listed.length).toBe(Math.min(5, sameCode.length - 1));
      for (const item of listed) expect(sameCode.some((r) => item.includes(r.kNumber) && r.kNumber !== opened)).toBe(true);
      if (sameCode.length > 6) expect(await related.locator('p a').innerText()).toBe(`All ${sameCode.length} of them, this one included`);
      await page.screenshot({ path: new URL(`browser-${label}-record.png`, SHOTS).pathname, fullPage: true });
      expect(await seriousViolations(page)).toEqual([]);
    });

    test("links a clearance's 510(k) summary PDF where FDA publishes one", async () => {
      const withSummary = [...truth.records.values()].find((r) => r.statementOrSummary && Number(r.kNumber.slice(1, 3)) >= 2 && Number(r.kNumber.slice(1, 3)) < 76)!;
      expect(withSummary).toBeDefined();
      await page.goto(`${base}#record=${withSummary.kNumber}`);
      const pdf = page.locator('#record .record-links a', { hasText: 'PDF' });
      await pdf.waitFor({ timeout: 20_000 });
      const yy = Number(withSummary.kNumber.slice(1, 3));
      expect(await pdf.getAttribute('href')).toBe(`https://www.accessdata.fda.gov/cdrh_docs/pdf${yy}/${withSummary.kNumber}.pdf`);
      const old = [...truth.records.values()].find((r) => Number(r.kNumber.slice(1, 3)) >= 76 && Number(r.kNumber.slice(1, 3)) < 96)!;
      await page.goto(`${base}#record=${old.kNumber}`);
      await page.waitForSelector(`#record dd[data-field="kNumber"]:text("${old.kNumber}")`, { timeout: 20_000 });
      expect(await page.locator('#record .record-links a', { hasText: 'PDF' }).count()).toBe(0);
    });

    test('back returns to the same page of results, and forward to the record', async () => {
      await page.goto(`${base}#q=${QUERY}&code=${facetCode}&page=2`);
      await waitForStatus(page, /page 2 of/);
      await page.locator('#list .result-title', { hasText: truth.records.get(opened)?.deviceName ?? '' }).first().click();
      await page.waitForSelector(`#record:not([hidden]) dd[data-field="kNumber"]:text("${opened}")`);
      await page.goBack();
      await page.waitForSelector('#results:not([hidden])');
      expect(await page.isHidden('#record')).toBe(true);
      expect(await statusOf(page)).toMatch(/page 2 of/);
      expect(await listedKNumbers(page)).toContain(opened);
      await page.goForward();
      await page.waitForSelector(`#record:not([hidden]) dd[data-field="kNumber"]:text("${opened}")`);
    });

    test('page size: 25 a page, chosen from the keyboard', async () => {
      const all = matchesOf(truth, QUERY);
      await page.goto(`${base}#q=${QUERY}`);
      await waitForStatus(page, new RegExp(`^${all.length} clearances`));
      await page.locator('#size').focus();
      await page.keyboard.press('ArrowDown');
      await waitForStatus(page, new RegExp(`page 1 of ${Math.ceil(all.length / 25)}$`));
      expect(page.url()).toContain('size=25');
      expect(await page.locator('#list li').count()).toBe(Math.min(25, all.length));
    });

    test('a decision-date range narrows the results; a range inside a year says it covers whole years', async () => {
      const years = [...new Set(filtered.flatMap((r) => (yearOf(r) === null ? [] : [yearOf(r)!])))].sort();
      const from = years[0]!;
      const to = years[Math.floor(years.length / 2)]!;
      const inYears = (r: ClearanceRecord) => yearOf(r) !== null && yearOf(r)! >= from && yearOf(r)! <= to;
      const expected = filtered.filter(inYears);
      await page.goto(`${base}#q=${QUERY}&code=${facetCode}`);
      await waitForStatus(page, new RegExp(`^${filtered.length} clearances`));
      await page.locator('#from').fill(`${from}-01-01`);
      await page.locator('#to').fill(`${to}-12-31`);
      await page.locator('#dates button').click();
      const status = await waitForStatus(page, new RegExp(`^${expected.length} clearance`));
      expect(totalIn(status)).toBe(expected.length);
      expect(page.url()).toContain(`from=${from}&to=${to}`);
      expect(await page.locator('#date-note').isHidden()).toBe(true);
      // Days inside the years: a service with the decided: qualifier filters by day; one without filters by whole
      // years, and the page says so.
      const lo = `${from}-03-01`;
      const hi = `${to}-10-31`;
      const byDay = filtered.filter((r) => r.decisionDate !== null && r.decisionDate >= lo && r.decisionDate <= hi);
      await page.goto(`${base}#q=${QUERY}&code=${facetCode}&from=${lo}&to=${hi}`);
      await waitForStatus(page, new RegExp(`^${(extended ? byDay : expected).length} clearance|^No clearances`));
      if (extended) expect(await page.locator('#date-note').isHidden()).toBe(true);
      else expect(await page.locator('#date-note').innerText()).toMatch(/whole years/);
      await expect.poll(() => page.locator('#active .chip').allTextContents()).toEqual([`Product code ${facetCode}×`, `Decided ${from}-03-01 to ${to}-10-31×`]);
    });

    test('a K number finds that one clearance and offers to open it', async () => {
      const k = [...truth.records.keys()].sort()[0]!;
      await page.goto(`${base}#q=${k.toLowerCase()}`);
      await waitForStatus(page, new RegExp(`^1 clearance matches “${k.toLowerCase()}”`));
      expect(await listedKNumbers(page)).toEqual([k]);
      await page.locator('#k-shortcut a').click();
      await page.waitForSelector(`#record:not([hidden]) dd[data-field="kNumber"]:text("${k}")`);
    });

    test.skipIf(engine === 'pagefind')('downloads the whole result set as CSV, in the order of the results', async () => {
      await page.goto(`${base}#q=${QUERY}&code=${facetCode}`);
      await waitForStatus(page, new RegExp(`^${filtered.length} clearances`));
      const firstPage = await listedKNumbers(page);
      await page.locator('#download').focus();
      const [download] = await Promise.all([page.waitForEvent('download', { timeout: 20_000 }), page.keyboard.press('Enter')]);
      const text = await readFile((await download.path())!, 'utf8');
      const rows = parseCsv(text);
      expect(text.charCodeAt(0)).toBe(0xfeff);
      expect(rows[0]!.slice(0, 4)).toEqual(['kNumber', 'deviceName', 'applicant', 'productCode']);
      const kNumbers = rows.slice(1).map((r) => r[0]);
      expect(kNumbers).toHaveLength(filtered.length);
      expect(new Set(kNumbers)).toEqual(new Set(filtered.map((r) => r.kNumber)));
      expect(kNumbers.slice(0, firstPage.length)).toEqual(firstPage);
      const one = truth.records.get(kNumbers[0]!)!;
      expect(rows[1]!.slice(0, 5)).toEqual([one.kNumber, one.deviceName, one.applicant ?? '', one.productCode ?? '', one.decisionDate ?? '']);
      // The service's export streams to the browser (its status says so as it starts); the static page builds the file.
      await expect.poll(() => page.locator('#download-status').innerText()).toBe(`${extended && mode === 'server' ? 'Downloading' : 'Downloaded'} all ${filtered.length} clearances as CSV.`);
    });

    test('passes an accessibility audit with no serious or critical violations', async () => {
      await page.goto(`${base}#q=${QUERY}`);
      await waitForStatus(page, new RegExp(`match “${QUERY}”`));
      await page.locator('#facets a.facet-value').first().waitFor({ timeout: 20_000 });
      await page.locator('#coverage').waitFor({ state: 'visible', timeout: 20_000 });
      expect(await seriousViolations(page)).toEqual([]);
    });

    test('fits a phone screen: results first, and choosing a filter folds the filters away again', async () => {
      const phone = await browser.context.newPage();
      collectErrors(phone, errors);
      await phone.setViewportSize({ width: 390, height: 844 });
      await phone.goto(`${base}#q=${QUERY}`);
      await waitForStatus(phone, new RegExp(`match “${QUERY}”`));
      const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow).toBe(0);
      expect(await phone.locator('#filters-panel').getAttribute('open')).toBeNull();
      const firstResult = await phone.locator('#list .result').first().boundingBox();
      expect(firstResult!.y + firstResult!.height).toBeLessThan(844);
      await phone.screenshot({ path: new URL(`browser-${label}-phone.png`, SHOTS).pathname, fullPage: false });
      await phone.locator('#filters-panel > summary').click();
      const facet = phone.locator(`#facets a.facet-value[data-value="${facetCode}"]`);
      await facet.waitFor({ timeout: 20_000 });
      await phone.screenshot({ path: new URL(`browser-${label}-phone-filters.png`, SHOTS).pathname, fullPage: false });
      await facet.click();
      await waitForStatus(phone, new RegExp(`^${filtered.length} clearances match`));
      expect(await phone.locator('#filters-panel').getAttribute('open')).toBeNull();
      await expect.poll(() => phone.evaluate(() => document.activeElement?.id)).toBe('results-heading');
      const top = await phone.locator('#list .result').first().boundingBox();
      const scroll = await phone.evaluate(() => scrollY);
      expect(top!.y - scroll + top!.height).toBeLessThan(844);
      await phone.locator('#list .result-title').first().click();
      await phone.waitForSelector('#classification dd[data-field="deviceType"]', { timeout: 20_000 });
      expect(await phone.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);
      await phone.screenshot({ path: new URL(`browser-${label}-phone-record.png`, SHOTS).pathname, fullPage: true });
      expect(await seriousViolations(phone)).toEqual([]);
      await phone.close();
      expect(errors).toEqual([]);
    });
  });
}

function minDate(truth: Truth): string {
  return [...truth.records.values()].flatMap((r) => (r.decisionDate ? [r.decisionDate] : [])).sort()[0]!;
}
function maxDate(truth: Truth): string {
  return [...truth.records.values()].flatMap((r) => (r.decisionDate ? [r.decisionDate] : [])).sort().at(-1)!;
}
