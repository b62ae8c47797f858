import { expect, test } from 'vitest';
import { defaultSources } from '../../build/sources/default.ts';
import { buildFixture, buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { collectErrors, describeAgreement } from './page-helpers.ts';

const SNAPSHOTS = [
  { label: 'the fixture snapshot', build: async () => buildFixtureSnapshot(), minNonEmpty: 12, minNonEmptyCsv: 1, thin: null },
  // The bundled files are FDA's complete files to 1990 and samples after: the page must say how thin 1991-2014 is.
  {
    label: 'the bundled snapshot (57,830 clearances)',
    build: async () => (await buildFixture({ sources: (await defaultSources()).sources })).out,
    minNonEmpty: 22,
    minNonEmptyCsv: 4,
    thin: 'Only 58 for 1991–2014.',
  },
];

for (const { label, build, minNonEmpty, minNonEmptyCsv, thin } of SNAPSHOTS) {
  describeAgreement({
    label,
    build,
    minNonEmpty,
    minNonEmptyCsv,
    more: (ctx) => {
      test('the same coverage note in both modes, thin years included', async () => {
        const { browser, server, statics, errors } = ctx();
        for (const url of [server.url, statics.url]) {
          const p = await browser.context.newPage();
          collectErrors(p, errors);
          await p.goto(url);
          await p.waitForSelector('#coverage details', { timeout: 60_000 });
          if (thin) await expect.poll(() => p.locator('#coverage .coverage-warn').allInnerTexts(), { timeout: 60_000 }).toEqual([thin]);
          expect(await p.locator('#coverage summary').innerText()).not.toContain('[object');
          await p.close();
        }
        expect(errors).toEqual([]);
      }, 120_000);
    },
  });
}
