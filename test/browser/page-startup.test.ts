import { realpath, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { createApp } from '../../src/server/app.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { browserSkipReason } from './chromium.ts';
import { collectErrors, listedKNumbers, silent, statusOf, totalIn, useBrowser, waitForStatus } from './page-helpers.ts';
import { PUBLIC_DIR } from './static-host.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

const skip = browserSkipReason();

/**
 * A page opened while the server has no snapshot yet (the first build of `npm start` on a fresh clone): the server
 * answers 503 until one is published. The page must say that the data is being prepared, keep asking, and work as
 * soon as the snapshot is there, without a reload.
 */
describe.skipIf(skip !== null)('the page opened before the server has data', () => {
  let url: string;
  let link: string;
  let snapshot: string;

  const browser = useBrowser(async () => {
    snapshot = await realpath(await buildFixtureSnapshot());
    // The link the server follows does not exist yet: publishing it is what the first build does when it finishes.
    link = join(await testTempDir('device-510k-startup-'), 'snapshot');
    const app = await createApp({ snapshotPath: link, publicDir: PUBLIC_DIR, syncStatePath: null, pollMs: 100, watch: true, logger: silent });
    url = `${(await app.listen(0, '127.0.0.1')).url}/`;
    return [{ close: () => app.close({ graceMs: 1000 }) }];
  }, 120_000);

  test('says the data is being prepared, retries, and shows results once the server is ready', async () => {
    const page = await browser().context.newPage();
    const errors: string[] = [];
    collectErrors(page, errors);
    const metaAnswers: number[] = [];
    page.on('response', (res) => {
      if (res.url().endsWith('/v1/query') && res.request().method() === 'POST' && (res.request().postData() ?? '').includes('device-510k.meta')) metaAnswers.push(res.status());
    });
    await page.goto(`${url}#q=catheter`);
    await waitForStatus(page, /^The data is being prepared/);
    expect(await page.getAttribute('html', 'data-preparing')).toBe('true');
    expect(await page.locator('#alert').isHidden()).toBe(true);
    // Still asking: a second 503 arrives before the snapshot is published.
    await expect.poll(() => metaAnswers.filter((s) => s === 503).length, { timeout: 20_000 }).toBeGreaterThanOrEqual(2);
    expect(await page.getAttribute('html', 'data-mode')).toBeNull();

    await symlink(snapshot, link);
    const status = await waitForStatus(page, /match “catheter”/);
    expect(totalIn(status)).toBeGreaterThan(0);
    expect(await page.getAttribute('html', 'data-mode')).toBe('server');
    expect(await page.getAttribute('html', 'data-preparing')).toBeNull();
    expect((await listedKNumbers(page)).length).toBeGreaterThan(0);
    expect(metaAnswers.at(-1)).toBe(200);
    expect(await statusOf(page)).not.toMatch(/failed/);
    // The browser logs each 503 answer as a failed resource; anything else is an error of the page.
    expect(errors.filter((e) => !/status of 503/.test(e))).toEqual([]);
  }, 120_000);
});
