import { realpath } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { defaultSources } from '../../build/sources/default.ts';
import { buildFixture, buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { browserSkipReason, launchChromium, type Browser } from './chromium.ts';
import { collectErrors, listedKNumbers, startHost, statusOf, totalIn, type Host } from './page-helpers.ts';

const skip = browserSkipReason();

/**
 * Twenty searches a person might type, with filters, paging and page sizes: server mode and static mode must give
 * the same total and the same first page, K number for K number.
 */
const SEARCHES = [
  '',
  'q=catheter',
  'q=cath',
  'q=catheter+foley',
  'q=pacemaker',
  'q=bard',
  'q=DQY',
  'q=k80',
  'q=balloon+catheter',
  'q=x-ray',
  'q=stent&from=2020',
  'q=catheter&code=DQY',
  'q=pump&page=2',
  'q=syringe&size=50',
  'from=1985&to=1986',
  'q=glove&size=25',
  'q=lens&from=1980&to=1989',
  'q=implant&size=25&page=2',
  'q=ortho',
  'q=surgical+instrument&page=3',
] as const;

type Answer = { total: number; kNumbers: string[] };

async function answer(page: Page, base: string, search: string): Promise<Answer> {
  const hash = search ? `#${search}` : '#';
  await page.goto(`${base}${hash}`);
  await page.waitForSelector('html[data-ready]', { timeout: 60_000 });
  // The address as the page writes it back (defaults left out): wait until these results are on screen.
  await page.waitForFunction((h) => document.getElementById('results')?.dataset.answers === h, hash, { timeout: 60_000 });
  const status = await statusOf(page);
  return { total: /^No clearances/.test(status) ? 0 : totalIn(status), kNumbers: await listedKNumbers(page) };
}

const SNAPSHOTS = [
  { label: 'the fixture snapshot', build: async () => buildFixtureSnapshot(), thin: null },
  // The bundled files are FDA's complete files to 1990 and samples after: the page must say how thin 1991-2014 is.
  { label: 'the bundled snapshot', build: async () => (await buildFixture({ sources: (await defaultSources()).sources })).out, thin: 'Only 58 for 1991–2014.' },
];

for (const { label, build, thin } of SNAPSHOTS) {
  describe.skipIf(skip !== null)(`server and static mode agree over ${label}`, () => {
    let server: Host;
    let statics: Host;
    let browser: Browser;
    const errors: string[] = [];

    beforeAll(async () => {
      const snapshot = await realpath(await build());
      [server, statics] = await Promise.all([startHost('server', snapshot), startHost('static', snapshot)]);
      browser = await launchChromium();
    }, 300_000);

    afterAll(async () => {
      await browser?.close();
      await server?.close();
      await statics?.close();
    });

    test('the same twenty searches give the same totals and the same first pages', async () => {
      const [a, b] = [await browser.context.newPage(), await browser.context.newPage()];
      collectErrors(a, errors);
      collectErrors(b, errors);
      let nonEmpty = 0;
      for (const search of SEARCHES) {
        const [fromServer, fromStatic] = [await answer(a, server.url, search), await answer(b, statics.url, search)];
        expect(await a.getAttribute('html', 'data-mode')).toBe('server');
        expect(await b.getAttribute('html', 'data-mode')).toBe('static');
        expect(fromStatic, search).toEqual(fromServer);
        if (fromServer.total > 0) nonEmpty++;
      }
      // Most searches find something, so the comparison is of real lists, not of empty answers.
      expect(nonEmpty).toBeGreaterThanOrEqual(15);
      // The same coverage note in both modes, thin years included.
      for (const p of [a, b]) {
        await p.waitForSelector('#coverage details', { timeout: 60_000 });
        if (thin) await expect.poll(() => p.locator('#coverage .coverage-warn').allInnerTexts(), { timeout: 60_000 }).toEqual([thin]);
        expect(await p.locator('#coverage summary').innerText()).not.toContain('[object');
      }
      expect(errors).toEqual([]);
    }, 300_000);
  });
}
