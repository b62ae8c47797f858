import { realpath } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { defaultSources } from '../../build/sources/default.ts';
import { buildFixture } from '../helpers/fixture-snapshot.ts';
import type { ModelItem } from '../helpers/lineage-model.ts';
import type { Browser } from './chromium.ts';
import { readTruth, type Truth } from './fixture-truth.ts';
import { collectErrors } from './page-helpers.ts';

/** What the page's lineage tests share: the data they build, the view's rows as shown, a page opened on a view. */

/** The shipped edge files, read as text by the test's own model (test/helpers/lineage-model.ts), not by the build. */
export const LINEAGE_EDGES = fileURLToPath(new URL('../../data/fda/predicates', import.meta.url));
/** Devices a page of the lineage view shows (public/js/lineage.js, LINEAGE_PAGE). */
export const LINEAGE_PAGE = 50;
/** A lineage shard's name: the number without its last three digits (a shard holds 1,000 consecutive numbers). */
export const shardOf = (k: string) => k.slice(0, -3);

export type LineageRow = { kNumber: string; depth: number; via: string; kind: string; source: string };
export const asRows = (items: ModelItem[]): LineageRow[] => items.map(({ kNumber, depth, via, kind, source }) => ({ kNumber, depth, via, kind, source }));

/** The rows of the lineage view's table as shown; `within`, a selector of the part of the page that holds it. */
export function lineageRows(page: Page, within?: string): Promise<LineageRow[]> {
  return page.locator(`${within ? `${within} ` : ''}.lineage-table tbody tr`).evaluateAll((trs) =>
    trs.map((tr) => {
      const d = (tr as HTMLElement).dataset;
      return { kNumber: d.k!, depth: Number(d.depth), via: d.via!, kind: d.kind!, source: d.source! };
    }),
  );
}

/** The bundled clearances and the shipped edges, built as `npm run build` reads them: the snapshot and its records. */
export async function buildBundledLineage(): Promise<{ snapshot: string; truth: Truth }> {
  const { sources, edges } = await defaultSources();
  const snapshot = await realpath((await buildFixture({ sources: [...sources, ...edges] })).out);
  return { snapshot, truth: await readTruth(snapshot) };
}

/**
 * A fresh page whose console errors go to `errors`, listing the lineage files it asks for (from `lineage/`, in
 * order), opened at the lineage view of `k` (or, with `before`, after `before` has seen the page: to hold its reads).
 */
export async function openLineageView(
  browser: Browser,
  errors: string[],
  url: string,
  k: string,
  direction: 'predicates' | 'descendants',
  before?: (page: Page) => Promise<unknown> | void,
): Promise<{ page: Page; files: string[] }> {
  const page = await browser.context.newPage();
  collectErrors(page, errors);
  const files: string[] = [];
  page.on('request', (r) => {
    const path = new URL(r.url()).pathname;
    const at = path.indexOf('/lineage/');
    if (at >= 0) files.push(path.slice(at + 1));
  });
  await before?.(page);
  await page.goto(`${url}#record=${k}&lineage=${direction}`);
  return { page, files };
}
