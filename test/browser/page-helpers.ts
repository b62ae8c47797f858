import { createRequire } from 'node:module';
import { cp, readFile, realpath, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { writePagefindIndex } from '../../build/index/pagefind.ts';
import { runMirror } from '../../build/mirror/run.ts';
import { SnapshotWriter } from '../../build/write/writer.ts';
import type { ClearanceRecord } from '../../src/contract/index.ts';
import { createApp } from '../../src/server/app.ts';
import type { Logger } from '../../src/server/log.ts';
import { AGREEMENT_SEARCHES, answerDifferences, pageAnswer, statusOf, type PageAnswer } from './agreement.ts';
import { browserSkipReason, launchChromium, type Browser } from './chromium.ts';
import { matchesOf, readTruth, type Truth } from './fixture-truth.ts';
import { startNginxHost } from './nginx-host.ts';
import { PUBLIC_DIR, startStaticHost } from './static-host.ts';
import { startWorkerHost } from './worker-host.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

export { AGREEMENT_SEARCHES, answerDifferences, listedKNumbers, pageAnswer, statusOf, totalIn, type PageAnswer } from './agreement.ts';

export const silent: Logger = { request: () => {}, info: () => {}, error: () => {} };

export type Host = { url: string; close: () => Promise<void> };

/**
 * A copy of the snapshot whose browser index is rebuilt in `parts` Pagefind indexes, so that the static page's
 * merging of indexes (results, totals and facet counts summed over them) is tested on the fixture too, whose
 * clearances fit in one bucket of the real size.
 */
export async function splitCopy(snapshot: string, truth: Truth, parts: number): Promise<string> {
  const dir = join(await testTempDir('device-510k-split-'), 'snapshot');
  await cp(await realpath(snapshot), dir, { recursive: true });
  await rm(join(dir, 'pagefind'), { recursive: true, force: true });
  const writer = new SnapshotWriter(dir);
  await writePagefindIndex([...truth.records.values()], truth.deviceTypes, writer, { bucketRecords: Math.ceil(truth.records.size / parts) });
  await writer.flush();
  return dir;
}

/** A mirror of `snapshot` made by `npm run mirror`'s code from our server, the way an operator would make one. */
export async function mirrorOf(snapshot: string): Promise<string> {
  const origin = await createApp({ snapshotPath: snapshot, publicDir: null, syncStatePath: null, pollMs: 0, watch: false, logger: silent });
  const { url } = await origin.listen(0, '127.0.0.1');
  try {
    const to = join(await testTempDir('device-510k-mirror-'), 'snapshot');
    await runMirror({ from: `${url}/snapshot`, to });
    return to;
  } finally {
    await origin.close({ graceMs: 1000 });
  }
}

export async function startHost(
  mode: 'server' | 'static',
  snapshot: string,
  options: { via?: 'node' | 'nginx' | 'worker'; syncStatePath?: string | null } = {},
): Promise<Host> {
  if (options.via === 'nginx') return startNginxHost(await mirrorOf(snapshot));
  if (options.via === 'worker') {
    if (mode === 'static') throw new Error('The Worker host answers the API: start it in server mode');
    return startWorkerHost(snapshot);
  }
  if (mode === 'static') return startStaticHost(await realpath(snapshot));
  const app = await createApp({ snapshotPath: snapshot, publicDir: PUBLIC_DIR, syncStatePath: options.syncStatePath ?? null, pollMs: 0, watch: false, logger: silent });
  const { url } = await app.listen(0, '127.0.0.1');
  return { url: `${url}/`, close: () => app.close({ graceMs: 1000 }) };
}

/**
 * A browser test's set-up, in a describe: before its tests, `setup` (build a snapshot, start what serves it: it returns
 * what to close) and a fresh browser; after them, the browser and what `setup` returned, closed. Returns the browser.
 */
export function useBrowser(setup: () => Promise<readonly { close: () => Promise<void> }[]>, timeoutMs = 300_000): () => Browser {
  let browser: Browser | undefined;
  let opened: readonly { close: () => Promise<void> }[] = [];
  beforeAll(async () => {
    opened = await setup();
    browser = await launchChromium();
  }, timeoutMs);
  afterAll(async () => {
    await browser?.close();
    for (const o of opened) await o.close();
  });
  return () => {
    if (!browser) throw new Error('the browser is not started: its set-up failed, or a test ran before it');
    return browser;
  };
}

export async function waitForStatus(page: Page, pattern: RegExp): Promise<string> {
  await page.waitForFunction((source) => new RegExp(source).test(document.getElementById('status')?.textContent ?? ''), pattern.source, {
    timeout: 20_000,
  });
  return statusOf(page);
}

/** Every console error and uncaught exception of a page, from the moment it is created. */
export function collectErrors(page: Page, into: string[]): void {
  page.on('pageerror', (err) => into.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') into.push(`console: ${msg.text()}`);
  });
}

/** Whether the service behind `url` advertises the search extensions (qualifiers, sorts, facets, export) in meta. */
export async function advertisesExtensions(url: string): Promise<boolean> {
  const meta = (await fetch(new URL('snapshot/meta.json', url)).then((r) => r.json())) as { qualifiers?: unknown[] };
  return Array.isArray(meta.qualifiers) && meta.qualifiers.length > 0;
}

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/** axe-core's audit of the page as it is now: the violations of serious or critical impact, as short strings. */
export async function seriousViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ path: AXE });
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target.join(' ')).slice(0, 3) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.impact} ${v.id}: ${v.targets.join(', ')}`);
}

/** Records static mode's CSV holds at most (public/js/static-source.js, STATIC_EXPORT_LIMIT); the page states it. */
export const STATIC_CSV_CAP = 5_000;

/** Downloads the CSV of the search at `hash`: the file's bytes, the name the browser saves it under, the page's note. */
export async function downloadCsv(page: Page, url: string, hash: string): Promise<{ bytes: Buffer; name: string; status: string }> {
  await page.goto(`${url}${hash}`);
  await page.waitForSelector('html[data-ready]', { timeout: 120_000 });
  await page.waitForFunction(() => {
    const answers = document.getElementById('results')?.dataset.answers;
    return answers !== undefined && answers === (location.hash || '#');
  }, null, { timeout: 120_000 });
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: 300_000 }), page.locator('#download').click()]);
  const bytes = await readFile((await download.path())!);
  await page.waitForFunction(() => /^Download/.test(document.getElementById('download-status')?.textContent ?? ''), null, { timeout: 60_000 });
  return { bytes, name: download.suggestedFilename(), status: await page.locator('#download-status').innerText() };
}

/** The CSV's rows, header first, each with its CRLF, split at the CRLF that ends a row outside quotes. */
export function csvRows(bytes: Buffer): string[] {
  const text = bytes.toString('utf8');
  const rows: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '"') quoted = !quoted;
    else if (!quoted && text[i] === '\r' && text[i + 1] === '\n') {
      rows.push(text.slice(start, i + 2));
      start = i + 2;
      i++;
    }
  }
  return rows;
}

/** Searches whose CSV the two modes must give byte for byte (past STATIC_CSV_CAP: static mode's first rows, stated). */
export const AGREEMENT_CSV_SEARCHES = ['q=%22balloon+catheter%22&sort=kNumber%3Aasc', 'q=catheter+-foley&code=DQY', 'q=applicant%3Amedtronic&from=2018', 'from=1985&to=1986'] as const;

const kNumbersOf = (records: readonly ClearanceRecord[]) => new Set(records.map((r) => r.kNumber));

/**
 * Totals by a plain scan of the snapshot's records (fixture-truth.ts: a word finds the records where it starts a
 * word of the searched fields), independent of the engine both modes run.
 */
export const AGREEMENT_SCANS: readonly { search: (typeof AGREEMENT_SEARCHES)[number]; total: (truth: Truth) => number }[] = [
  { search: '', total: (t) => t.records.size },
  { search: 'q=catheter', total: (t) => matchesOf(t, 'catheter').length },
  {
    search: 'q=catheter+-foley',
    total: (t) => {
      const foley = kNumbersOf(matchesOf(t, 'foley'));
      return matchesOf(t, 'catheter').filter((r) => !foley.has(r.kNumber)).length;
    },
  },
  { search: 'q=catheter+OR+stent', total: (t) => new Set([...kNumbersOf(matchesOf(t, 'catheter')), ...kNumbersOf(matchesOf(t, 'stent'))]).size },
  { search: 'q=catheter&code=DQY', total: (t) => matchesOf(t, 'catheter').filter((r) => r.productCode === 'DQY').length },
  { search: 'from=1985&to=1986', total: (t) => [...t.records.values()].filter((r) => r.decisionDate !== null && r.decisionDate >= '1985-01-01' && r.decisionDate <= '1986-12-31').length },
  { search: 'q=zzzzqx', total: () => 0 },
];

export type AgreementContext = { snapshot: string; server: Host; statics: Host; browser: Browser; errors: string[] };

/**
 * Server mode and static mode side by side over one snapshot: the same searches give the same totals, first pages
 * and facet counts; the same CSV, byte for byte; and the totals of `scans` equal a plain scan of the records.
 * `more` adds tests of its own with the same hosts.
 */
export function describeAgreement(options: {
  label: string;
  build: () => Promise<string>;
  /** At least this many searches find something, so the comparison is of real lists, not of empty answers. */
  minNonEmpty: number;
  /** At least this many of AGREEMENT_CSV_SEARCHES give rows, not only the header. */
  minNonEmptyCsv: number;
  more?: (ctx: () => AgreementContext) => void;
}): void {
  describe.skipIf(browserSkipReason() !== null)(`server and static mode agree over ${options.label}`, () => {
    let ctx: AgreementContext;
    const answers = new Map<string, PageAnswer>();

    beforeAll(async () => {
      const snapshot = await realpath(await options.build());
      const [server, statics] = await Promise.all([startHost('server', snapshot), startHost('static', snapshot)]);
      ctx = { snapshot, server, statics, browser: await launchChromium(), errors: [] };
    }, 600_000);

    afterAll(async () => {
      await ctx?.browser.close();
      await ctx?.server.close();
      await ctx?.statics.close();
    });

    test(`the same ${AGREEMENT_SEARCHES.length} searches give the same totals, first pages and facet counts`, async () => {
      const { browser, server, statics, errors } = ctx;
      const [a, b] = [await browser.context.newPage(), await browser.context.newPage()];
      collectErrors(a, errors);
      collectErrors(b, errors);
      for (const search of AGREEMENT_SEARCHES) {
        const [fromServer, fromStatic] = [await pageAnswer(a, server.url, search), await pageAnswer(b, statics.url, search)];
        expect(await a.getAttribute('html', 'data-mode')).toBe('server');
        expect(await b.getAttribute('html', 'data-mode')).toBe('static');
        expect(await b.getAttribute('html', 'data-engine')).toBe('index');
        answers.set(search, fromServer);
        expect(answerDifferences(fromServer, fromStatic), search).toEqual([]);
        expect(fromStatic, search).toEqual(fromServer);
      }
      expect([...answers.values()].filter((x) => x.total > 0).length).toBeGreaterThanOrEqual(options.minNonEmpty);
      expect(answers.get('q=zzzzqx')?.total).toBe(0);
      await a.close();
      await b.close();
      expect(errors).toEqual([]);
    }, 1_200_000);

    test('the totals of a few searches equal a plain scan of the records', async () => {
      const truth = await readTruth(ctx.snapshot);
      for (const { search, total } of AGREEMENT_SCANS) {
        const shown = answers.get(search);
        expect(shown, `${search} was answered in both modes`).toBeDefined();
        expect(shown!.total, search).toBe(total(truth));
      }
      // Facet counts too: the product codes of the catheters.
      const catheters = matchesOf(truth, 'catheter');
      const dqy = answers.get('q=catheter')!.facets.find((f) => f.startsWith('facet facet-productCode|DQY|'));
      expect(dqy).toBe(`facet facet-productCode|DQY|${catheters.filter((r) => r.productCode === 'DQY').length}`);
    }, 300_000);

    test('the CSV of static mode is the server export, byte for byte, up to the cap the page states', async () => {
      const { browser, server, statics } = ctx;
      const [a, b] = [await browser.context.newPage(), await browser.context.newPage()];
      let nonEmpty = 0;
      for (const search of AGREEMENT_CSV_SEARCHES) {
        const hash = `#${search}`;
        const [fromServer, fromStatic] = [await downloadCsv(a, server.url, hash), await downloadCsv(b, statics.url, hash)];
        const rows = csvRows(fromServer.bytes);
        expect(rows[0], hash).toMatch(/^\uFEFFkNumber,/);
        if (rows.length > 1) nonEmpty++;
        expect(fromStatic.name, hash).toBe(fromServer.name);
        if (rows.length - 1 <= STATIC_CSV_CAP) {
          expect(fromStatic.bytes.equals(fromServer.bytes), hash).toBe(true);
        } else {
          expect(fromStatic.bytes.equals(Buffer.from(rows.slice(0, STATIC_CSV_CAP + 1).join(''), 'utf8')), hash).toBe(true);
          expect(fromStatic.status, hash).toContain(`first ${STATIC_CSV_CAP.toLocaleString('en-US')} of ${(rows.length - 1).toLocaleString('en-US')}`);
        }
      }
      expect(nonEmpty).toBeGreaterThanOrEqual(options.minNonEmptyCsv);
      await a.close();
      await b.close();
    }, 1_200_000);

    options.more?.(() => ctx);
  });
}
