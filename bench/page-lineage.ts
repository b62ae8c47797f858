/**
 * Time and bytes of a record's lineage view on the page in static mode, on a cold cache: from opening the view's
 * address (`#record=K…&lineage=predicates`) to its first devices drawn (picture and table, while the walk may still
 * run), to the whole view (the answer's totals and counts, the picture and table of its first page, which a page may
 * draw before the records are read), to its devices' names (the table's rows on screen, then every row of the page)
 * and to the records too (the view no longer busy).
 *
 *   npx tsx bench/page-lineage.ts --snapshot DIR [--questions K123456:predicates,...] [--runs 3] [--profiles desktop,phone] [--against DIR]
 *
 * The static host is Debian's nginx with exactly the configuration docs/deploy.md shows, behind the counting proxy of
 * bench/page-load.ts ("phone": one shared 1.6 Mbit/s link with 150 ms of round trip, the main thread slowed 4x).
 * Each run opens the view in a fresh browser profile. Besides the times, the bytes and requests up to the records,
 * and of them the lineage files (the header and the shards the walk reads). With --against, another checkout's page
 * is served beside this one (the same snapshot, its own nginx) and measured in turn, run for run.
 * Not a test: figures depend on the machine, so they are printed, never asserted.
 */
import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { parseCommandLine, runCommand } from '../src/cli/args.ts';
import { lineageNumber } from '../src/contract/index.ts';
import { openSnapshotDirectory } from '../src/node/index.ts';
import { lineageFilesOf, walkLineage } from '../src/operations/index.ts';
import { CHROMIUM, launchChromium } from '../test/browser/chromium.ts';
import { countingProxy, emulatePhone, PHONE_LINK } from './lib/counting-proxy.ts';
import { mostCited } from './lib/lineage-questions.ts';
import { startDocumentedNginx, type StaticHost } from './lib/static-hosting.ts';
import { kb, middleRun, seconds } from './lib/stats.ts';

type Question = { k: string; direction: 'predicates' | 'descendants' };
type Figures = { firstMs: number; ms: number; viewNamedMs: number; namedMs: number; rowsInView: number; recordsMs: number; bytes: number; requests: number; lineageBytes: number; lineageFiles: number; shown: string };

const USAGE = `Usage: npx tsx bench/page-lineage.ts --snapshot DIR [options]

A record's lineage view in static mode (nginx with docs/deploy.md's configuration serving the page and DIR), timed
from opening its address to its first devices drawn ("first": picture and table, the walk may still run) and to the
whole view ("whole": the answer's totals with its first page, perhaps before the records are read), to the names
of its devices (the table's rows on screen, "in view", with how many there are, then every row of the page, "named":
no row says its record is still loading) and to its records ("records": the view no longer busy), cold, in Debian's Chromium (.ci/browser-deps.sh installs it); the
median of the runs, with the bytes and requests up to the records. A page that draws nothing before the answer has
first = whole = records.

  --snapshot DIR     the snapshot the static host serves (required)
  --questions LIST   K123456:predicates or K123456:descendants, comma-separated (by default the two questions of
                     bench/lineage.ts: the whole descendants of the most-cited device, and the whole predicate chain of
                     the device farthest below it)
  --runs N           cold runs per figure (3)
  --profiles LIST    desktop, phone or both (phone)
  --against DIR      another checkout's public/ folder (say, main's), served beside this one over the same snapshot
                     and measured in turn, run for run, for a side-by-side figure
  --verbose          print every request of every run: when it arrived and when it was asked for (ms after the
                     page's start), and its bytes`;

/** The two questions of bench/lineage.ts: the most-cited device's descendants, and the deepest one's predicates. */
async function defaultQuestions(dir: string): Promise<Question[]> {
  const snapshot = await openSnapshotDirectory(dir);
  const files = await lineageFilesOf(snapshot).files;
  if (files === null) throw new Error(`${dir} has no lineage files`);
  const hub = (await mostCited(files)).kNumber;
  const tree = await walkLineage(files, { id: hub, direction: 'descendants', depth: null, kinds: null });
  return [
    { k: lineageNumber(tree.codes[tree.codes.length - 1] as number), direction: 'predicates' },
    { k: hub, direction: 'descendants' },
  ];
}

async function measureOnce(proxy: Awaited<ReturnType<typeof countingProxy>>, q: Question, phone: boolean, verbose: boolean): Promise<Figures> {
  const browser = await launchChromium();
  proxy.startRun(phone ? PHONE_LINK : null);
  try {
    const page = await browser.context.newPage();
    // When the view's first devices are on screen (picture and table, before the answer or with it), when the whole
    // view is (the answer's first page with its totals and counts: `data-shows`; a page may draw it before the records
    // are read), and when the records are in too (no longer busy), in the page's own clock.
    await page.addInitScript(() => {
      const w = window as unknown as { shownAt?: number; firstAt?: number; viewNamedAt?: number; rowsInView?: number; namedAt?: number; recordsAt?: number };
      new MutationObserver(() => {
        if (w.firstAt === undefined && document.querySelector('.lineage-body .lineage-table') && document.querySelector('.lineage-body svg.lineage-chart')) w.firstAt = performance.now();
        if (w.shownAt === undefined && document.querySelector('.lineage-body[data-shows] .lineage-table') && document.querySelector('.lineage-body[data-shows] svg.lineage-chart')) w.shownAt = performance.now();
        // Named: every row of the page's table shows its device's name (or says the snapshot has no record of it),
        // none says its record is still loading; "in view": the rows on screen at the view's scroll (the top).
        // A row waiting for its record says so in a muted note in its last cell (the device's), on every version of the page.
        const loading = 'td:last-child span.muted';
        const table = w.shownAt !== undefined && w.namedAt === undefined ? document.querySelector('.lineage-body[data-shows] .lineage-table') : null;
        if (table) {
          if (w.viewNamedAt === undefined) {
            const inView = Array.from(table.querySelectorAll('tbody tr')).filter((tr) => {
              const r = tr.getBoundingClientRect();
              return r.bottom > 0 && r.top < window.innerHeight;
            });
            if (!inView.some((tr) => tr.querySelector(loading))) [w.viewNamedAt, w.rowsInView] = [performance.now(), inView.length];
          }
          if (!table.querySelector(`tbody ${loading}`)) w.namedAt = performance.now();
        }
        if (w.recordsAt === undefined && w.shownAt !== undefined && document.querySelector('.lineage-body[data-shows]:not([aria-busy])')) w.recordsAt = performance.now();
      }).observe(document, { childList: true, subtree: true, attributes: true });
    });
    if (phone) await emulatePhone(browser.context, page);
    await page.goto(`${proxy.url}#record=${q.k}&lineage=${q.direction}`);
    await page.waitForSelector('html[data-mode="static"]', { timeout: 300_000 });
    await page.waitForFunction(() => (window as unknown as { recordsAt?: number }).recordsAt !== undefined || document.querySelector('.lineage-body [role="alert"]'), null, { timeout: 600_000 });
    const alert = page.locator('.lineage-body [role="alert"]');
    const failed = (await alert.count()) > 0 ? await alert.textContent() : null;
    if (failed) throw new Error(`The page could not show the lineage of ${q.k}: ${failed}`);
    const [ms, firstMs, viewNamedMs, namedMs, rowsInView, recordsMs, origin] = await page.evaluate(() => {
      const w = window as unknown as { shownAt: number; firstAt: number; viewNamedAt?: number; namedAt?: number; rowsInView?: number; recordsAt: number };
      // A view whose last names came with its records (the observer saw them in one change): named then.
      return [w.shownAt, w.firstAt, w.viewNamedAt ?? w.recordsAt, w.namedAt ?? w.recordsAt, w.rowsInView ?? 0, w.recordsAt, performance.timeOrigin];
    });
    const shown = (await page.locator('.lineage-total').innerText()).trim();
    const sent = proxy.sent.filter((d) => d.at >= origin && d.at <= origin + recordsMs);
    const lineage = sent.filter((d) => d.url.includes('/lineage/'));
    if (verbose) {
      console.log(`  first drawn at ${Math.round(firstMs)} ms, whole view at ${Math.round(ms)} ms, rows in view named at ${Math.round(viewNamedMs)} ms (${rowsInView} rows), all rows named at ${Math.round(namedMs)} ms, records at ${Math.round(recordsMs)} ms`);
      for (const d of proxy.sent.filter((d) => d.at >= origin)) console.log(`  ${d.at <= origin + firstMs ? 'first' : d.at <= origin + ms ? 'whole' : d.at <= origin + recordsMs ? 'record' : 'later'} ${String(Math.round(d.at - origin)).padStart(6)} ms (asked ${String(Math.round(d.askedAt - origin)).padStart(5)}) ${String(d.bytes).padStart(9)}  ${d.url}`);
    }
    return {
      firstMs,
      ms,
      viewNamedMs,
      namedMs,
      rowsInView,
      recordsMs,
      bytes: sent.reduce((n, d) => n + d.bytes, 0),
      requests: sent.length,
      lineageBytes: lineage.reduce((n, d) => n + d.bytes, 0),
      lineageFiles: lineage.length,
      shown,
    };
  } finally {
    await browser.close();
  }
}


async function main() {
  const values = parseCommandLine('page-lineage', USAGE, {
    snapshot: { type: 'string' },
    questions: { type: 'string', default: '' },
    runs: { type: 'string', default: '3' },
    profiles: { type: 'string', default: 'phone' },
    verbose: { type: 'boolean', default: false },
    against: { type: 'string', default: '' },
  });
  if (!values.snapshot) throw new Error('Expected `--snapshot` to name the snapshot to serve');
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing; run .ci/browser-deps.sh`);
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1 || runs > 20) throw new Error('Expected `--runs` to be a whole number from 1 to 20');
  const profiles = values.profiles.split(',');
  for (const p of profiles) if (p !== 'desktop' && p !== 'phone') throw new Error(`Expected \`--profiles\` to list desktop or phone, got "${p}"`);
  const questions: Question[] = values.questions
    ? values.questions.split(',').map((q) => {
        const m = /^\s*((?:K|DEN)\d{6}):(predicates|descendants)\s*$/i.exec(q);
        if (!m) throw new Error(`Expected each of \`--questions\` to be like K123456:predicates, got "${q}"`);
        return { k: m[1]!.toUpperCase(), direction: m[2]!.toLowerCase() as Question['direction'] };
      })
    : await defaultQuestions(values.snapshot);
  if (values.against && !existsSync(join(values.against, 'index.html'))) throw new Error(`Expected \`--against\` to name a page's folder (a checkout's public/), but ${values.against} has no index.html`);
  const dir = realpathSync(values.snapshot);
  const sides: { name: string; host: StaticHost; proxy: Awaited<ReturnType<typeof countingProxy>> }[] = [];
  try {
    for (const [name, from] of values.against ? [['this', undefined], ['against', realpathSync(values.against)]] : [['this', undefined]]) {
      const host = await startDocumentedNginx(dir, undefined, { copyFrom: from });
      sides.push({ name: name!, host, proxy: await countingProxy(Number(new URL(host.url).port)) });
    }
    console.log(`snapshot ${dir}\nstatic host: nginx with docs/deploy.md's configuration${values.against ? `\nagainst: the page of ${realpathSync(values.against)}, run for run` : ''}\nmedian of ${runs} cold runs; load ${loadavg().map((l) => l.toFixed(1)).join(' ')}\n`);
    console.log('profile  page     question                  first     whole  in view (rows)  named   records       bytes (requests)   lineage files: bytes (files)  view says');
    for (const profile of profiles) {
      for (const q of questions) {
        const all = sides.map((): Figures[] => []);
        for (let i = 0; i < runs; i++) for (const [s, side] of sides.entries()) all[s]!.push(await measureOnce(side.proxy, q, profile === 'phone', values.verbose));
        for (const [s, side] of sides.entries()) {
          const m = (f: (x: Figures) => number) => middleRun(all[s]!.map(f));
          console.log(
            [
              profile.padEnd(8),
              side.name.padEnd(8),
              `${q.k} ${q.direction}`.padEnd(24),
              seconds(m((x) => x.firstMs)).padStart(8),
              seconds(m((x) => x.ms)).padStart(8),
              `${seconds(m((x) => x.viewNamedMs))} (${m((x) => x.rowsInView)})`.padStart(15),
              seconds(m((x) => x.namedMs)).padStart(7),
              seconds(m((x) => x.recordsMs)).padStart(9),
              `${kb(m((x) => x.bytes))} (${m((x) => x.requests)})`.padStart(18),
              `${kb(m((x) => x.lineageBytes))} (${m((x) => x.lineageFiles)})`.padStart(30),
              ` ${all[s]![0]!.shown}`,
            ].join(' '),
          );
        }
      }
    }
    console.log(`load after: ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  } finally {
    for (const side of sides) {
      await side.proxy.close();
      await side.host.close();
    }
  }
}

runCommand('page-lineage', main);
