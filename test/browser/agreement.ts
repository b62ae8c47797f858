import type { Page } from 'playwright-core';

/**
 * What server mode and static mode must answer alike, and how the two are compared: shared by the browser tests
 * (describeAgreement in page-helpers.ts) and by bench/page-agreement.ts, which runs the same searches over a snapshot
 * too large for the test suite. No test runner here, so that a script can import it.
 */

export const statusOf = (page: Page) => page.locator('#status').innerText();

export const totalIn = (status: string): number => Number(/^([\d,]+) clearance/.exec(status)?.[1]?.replace(/,/g, '') ?? NaN);

export const listedKNumbers = (page: Page): Promise<string[]> => page.locator('#list .result-meta .k').allInnerTexts();

/** What the page shows for a search once its counts are final: the total, the first page, every facet value and count. */
export type PageAnswer = { total: number; kNumbers: string[]; facets: string[] };

/** The answer to `search` (a hash without its #) at `base`, read once the facet counts are final, not "Loading…". */
export async function pageAnswer(page: Page, base: string, search: string, timeout = 120_000): Promise<PageAnswer> {
  await page.goto(`${base}#${search}`);
  await page.waitForSelector('html[data-ready]', { timeout });
  // The address as the page writes it back (its own spelling, defaults left out): wait until these results are on screen.
  await page.waitForFunction(() => {
    const answers = document.getElementById('results')?.dataset.answers;
    return answers !== undefined && answers === (location.hash || '#');
  }, null, { timeout });
  await page.waitForFunction(() => {
    const f = document.getElementById('facets');
    return !!f && f.querySelector('details') !== null && !/Loading filter counts/.test(f.textContent ?? '');
  }, null, { timeout });
  const status = await statusOf(page);
  const facets = await page.locator('#facets a.facet-value').evaluateAll((links) =>
    links.map((a) => `${a.closest('details')?.className}|${(a as HTMLElement).dataset.value}|${(a as HTMLElement).dataset.count}`),
  );
  return { total: /^No clearances/.test(status) ? 0 : totalIn(status), kNumbers: await listedKNumbers(page), facets };
}

/**
 * How `got` differs from `want`, one line per kind of difference (the total, the first page, the facet counts);
 * empty when they agree.
 */
export function answerDifferences(want: PageAnswer, got: PageAnswer): string[] {
  const out: string[] = [];
  if (got.total !== want.total) out.push(`total ${got.total} where ${want.total}`);
  if (got.kNumbers.join() !== want.kNumbers.join()) {
    const at = want.kNumbers.findIndex((k, i) => got.kNumbers[i] !== k);
    const i = at === -1 ? want.kNumbers.length : at;
    out.push(`first page differs at #${i + 1}: ${got.kNumbers[i] ?? 'nothing'} where ${want.kNumbers[i] ?? 'nothing'} (${got.kNumbers.length} and ${want.kNumbers.length} listed)`);
  }
  if (got.facets.join('\n') !== want.facets.join('\n')) {
    const wanted = new Set(want.facets);
    const gotten = new Set(got.facets);
    const missing = want.facets.filter((f) => !gotten.has(f));
    const extra = got.facets.filter((f) => !wanted.has(f));
    const shown = (list: string[]) => `${list.slice(0, 3).join(', ')}${list.length > 3 ? ` and ${list.length - 3} more` : ''}`;
    if (missing.length === 0 && extra.length === 0) out.push('facet counts in another order');
    else out.push(`facet counts: ${missing.length} missing (${shown(missing)}), ${extra.length} not expected (${shown(extra)})`);
  }
  return out;
}

/**
 * The searches both modes must answer alike at every size: words, prefixes, a K number prefix, a product code,
 * phrases, exclusions, OR, qualifiers, dates (whole years and days), facet filters, sorts, pages, page sizes, and a
 * search that finds nothing.
 */
export const AGREEMENT_SEARCHES = [
  '',
  'page=3',
  'q=catheter',
  'q=cath',
  'q=c',
  'q=catheter+balloon',
  'q=balloon+catheter&size=50',
  'q=%22balloon+catheter%22',
  'q=catheter+-foley',
  'q=catheter+OR+stent',
  'q=pacemaker+OR+defibrillator+-lead',
  'q=dqy',
  'q=k9',
  'q=device%3Acatheter',
  'q=applicant%3Amedtronic',
  'q=catheter&panel=cardiovascular',
  'q=catheter&code=DQY',
  'q=stent&from=2020',
  'from=1985&to=1986',
  'q=catheter&from=2019-03-01&to=2019-06-30',
  'q=pump&page=2',
  'q=catheter&sort=kNumber%3Aasc',
  'q=catheter&sort=receivedDate%3Adesc',
  'q=reviewdays%3A%3E180+catheter',
  'q=x-ray&class=2',
  'q=glove&size=25',
  'q=surgical+instrument&page=3',
  'q=zzzzqx',
] as const;
