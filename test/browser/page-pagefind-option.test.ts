import { existsSync } from 'node:fs';
import { readFile, realpath, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { SEARCH_CHUNKS_DIR, SEARCH_CHUNKS_PATH } from '../../src/contract/search-chunks.ts';
import { SEARCH_INDEX_PATH } from '../../src/contract/search-index.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { browserSkipReason } from './chromium.ts';
import { matchesOf, readTruth, type Truth } from './fixture-truth.ts';
import { collectErrors, splitCopy, startHost, useBrowser, waitForStatus, type Host } from './page-helpers.ts';

const skip = browserSkipReason();

/**
 * A snapshot holds a Pagefind index only when built with --pagefind. Static mode searches the chunked index; asked
 * for Pagefind where there is none, the page says so instead of failing somewhere inside Pagefind's script or
 * quietly searching another way. A snapshot from before the chunked index, whose whole index is too large to
 * download, still searches with the Pagefind index such builds always wrote.
 */
describe.skipIf(skip !== null)('the Pagefind index is an option of the build', () => {
  let truth: Truth;
  let snapshot: string;
  let plain: Host;
  let older: Host;

  const browser = useBrowser(async () => {
    snapshot = await realpath(await buildFixtureSnapshot());
    truth = await readTruth(snapshot);
    // A snapshot as builds before the chunked index wrote it: no chunks, a Pagefind index.
    const copy = await splitCopy(snapshot, truth, 1);
    await rm(join(copy, SEARCH_CHUNKS_DIR), { recursive: true, force: true });
    for (const suffix of ['', '.br', '.gz']) await rm(join(copy, `${SEARCH_CHUNKS_PATH}${suffix}`), { force: true });
    [plain, older] = await Promise.all([startHost('static', snapshot), startHost('static', copy)]);
    return [plain, older];
  });

  test('a snapshot built without it has no pagefind/ folder, and static mode searches its chunked index', async () => {
    expect(existsSync(join(snapshot, 'pagefind'))).toBe(false);
    const page = await browser().context.newPage();
    const errors: string[] = [];
    collectErrors(page, errors);
    const fetched: string[] = [];
    page.on('request', (r) => fetched.push(new URL(r.url()).pathname));
    await page.goto(`${plain.url}#q=catheter`);
    const status = await waitForStatus(page, /match “catheter”/);
    expect(status.startsWith(`${matchesOf(truth, 'catheter').length.toLocaleString('en-US')} clearances`)).toBe(true);
    expect(await page.getAttribute('html', 'data-engine')).toBe('index');
    expect(fetched.filter((p) => p.includes('/pagefind/'))).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  test('?engine=pagefind on a snapshot without Pagefind says so on the page, and searches nothing else', async () => {
    const page = await browser().context.newPage();
    const errors: string[] = [];
    collectErrors(page, errors);
    await page.goto(`${plain.url}?engine=pagefind#q=catheter`);
    await waitForStatus(page, /^The page could not start/);
    await page.locator('#alert').waitFor({ state: 'visible', timeout: 20_000 });
    expect(await page.locator('#alert').innerText()).toMatch(/^This snapshot has no Pagefind index \(it was built without --pagefind\)/);
    expect(await page.getAttribute('html', 'data-engine')).toBeNull();
    expect(await page.locator('#list .result').count()).toBe(0);
    // The look-ups for Pagefind's files are answered 404, which the browser logs; nothing else went wrong.
    expect(errors.filter((e) => !/status of 404/.test(e))).toEqual([]);
    await page.close();
  }, 120_000);

  test('a snapshot from before the chunked index, its whole index too large to download, searches with its Pagefind index', async () => {
    const page = await browser().context.newPage();
    // The fixture's whole index is small: its header claims the size of one of about 600,000 clearances.
    const header = JSON.parse(await readFile(join(snapshot, SEARCH_INDEX_PATH), 'utf8')) as Record<string, unknown>;
    await page.route(/\/snapshot\/search\/index\.json$/, (route) => route.fulfill({ json: { ...header, blobBytes: 200 * 2 ** 20 } }));
    await page.goto(`${older.url}#q=catheter`);
    await waitForStatus(page, /match “catheter”/);
    expect(await page.getAttribute('html', 'data-engine')).toBe('pagefind');
    expect(await page.locator('#list .result').count()).toBeGreaterThan(0);
    await page.close();
  }, 120_000);
});
