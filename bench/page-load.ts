/**
 * Time and bytes of the search page, in server mode and static mode, on a cold cache: for a first visit (no query)
 * and for a search, to the first result, to the first facet counts on screen and to all of them.
 *
 *   npx tsx bench/page-load.ts --snapshot DIR [--static-snapshot DIR] [--query catheter] [--runs 3]
 *     [--modes server,static] [--profiles desktop,phone] [--page-query '?engine=pagefind'] [--verbose]
 *
 * Each run opens the page in a fresh browser profile. "first result" is the page's `first-results` performance mark;
 * "first counts" is when the first facet count appears, "all counts" when no facet is still loading (on a phone the
 * folded filters are opened as soon as the results show, as a person would). Bytes are counted by a small proxy in
 * front of each host (status line, headers and body as sent): each figure's bytes are those of the answers delivered
 * to the page by that moment, not until the page is idle (what it asks for later is not in the figure). Only the run's
 * own page is counted: an answer still owed to the page of the run before, closed with requests in flight, is dropped
 * when the next run starts (it would otherwise arrive unpaced, inside the next run's figures). "desktop" is unthrottled on this machine; "phone" paces every answer through one
 * shared 1.6 Mbit/s link with 150 ms of round trip (Lighthouse's mobile network) and slows the page's main thread 4x
 * through the DevTools protocol. The static host is Debian's nginx with exactly the configuration docs/deploy.md
 * shows (precompressed copies only, nothing compressed on the fly; `--static-host cdn` puts a host that compresses
 * text on the fly in its place); the server answers as it does in production.
 * Not a test: figures depend on the machine, so they are printed, never asserted.
 */
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { extname, join, normalize } from 'node:path';
import { parseCommandLine, runCommand } from '../src/cli/args.ts';
import { gzipSync } from 'node:zlib';
import { createApp } from '../src/server/app.ts';
import { CHROMIUM, launchChromium } from '../test/browser/chromium.ts';
import { PUBLIC_DIR } from '../test/browser/static-host.ts';
import { countingProxy, emulatePhone, listen, PHONE_LINK } from './lib/counting-proxy.ts';
import { startDocumentedNginx } from './lib/static-hosting.ts';
import { kb, middleRun, seconds } from './lib/stats.ts';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.json', '.wasm']);

/** A CDN-like host: files from public/ and the snapshot, gzip for text, 405 to anything but GET. */
async function compressingStaticHost(snapshotDir: string) {
  const serveFile = (root: string, rel: string, req: IncomingMessage, res: ServerResponse) => {
    const path = normalize(join(root, rel === '' || rel.endsWith('/') ? `${rel}index.html` : rel));
    if (!path.startsWith(root) || !existsSync(path) || !statSync(path).isFile()) return void res.writeHead(404).end();
    const ext = extname(path);
    const range = /^bytes=(\d+)-(\d+)$/.exec(String(req.headers.range ?? ''));
    if (range) {
      const whole = readFileSync(path);
      const [from, to] = [Number(range[1]), Math.min(Number(range[2]), whole.byteLength - 1)];
      res.writeHead(206, { 'Content-Type': TYPES[ext] ?? 'application/octet-stream', 'Content-Range': `bytes ${from}-${to}/${whole.byteLength}` });
      return void res.end(whole.subarray(from, to + 1));
    }
    const gzip = COMPRESSIBLE.has(ext) && /gzip/.test(String(req.headers['accept-encoding']));
    const body = gzip ? gzipSync(readFileSync(path)) : readFileSync(path);
    res.writeHead(200, { 'Content-Type': TYPES[ext] ?? 'application/octet-stream', ...(gzip ? { 'Content-Encoding': 'gzip' } : {}) });
    res.end(body);
  };
  return listen(
    createServer((req, res) => {
      if (req.method !== 'GET') return void res.writeHead(405, { Allow: 'GET' }).end();
      const url = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
      if (url.startsWith('/snapshot/')) return serveFile(snapshotDir, url.slice('/snapshot/'.length), req, res);
      return serveFile(PUBLIC_DIR, url.slice(1), req, res);
    }),
  );
}

/** nginx as docs/deploy.md configures it, as a port for the counting proxy. */
async function documentedNginx(snapshotDir: string) {
  const nginx = await startDocumentedNginx(snapshotDir);
  return { port: Number(new URL(nginx.url).port), close: nginx.close };
}

type Figures = { firstMs: number; firstBytes: number; firstRequests: number; countsMs: number; countsBytes: number; allCountsMs: number; allCountsBytes: number; answer: string };

async function measureOnce(proxy: Awaited<ReturnType<typeof countingProxy>>, address: string, phone: boolean, verbose: boolean): Promise<Figures> {
  const browser = await launchChromium();
  proxy.startRun(phone ? PHONE_LINK : null);
  try {
    const page = await browser.context.newPage();
    // When the first facet count is on screen, and when every facet's is (nothing left loading), in the page's own clock.
    await page.addInitScript(() => {
      const w = window as unknown as { countsAt?: number; allCountsAt?: number };
      new MutationObserver(() => {
        const facets = document.getElementById('facets');
        if (w.countsAt === undefined && facets?.querySelector('a.facet-value')) w.countsAt = performance.now();
        if (w.allCountsAt === undefined && facets?.querySelector('details') && !/Loading filter counts/.test(facets.textContent ?? '')) w.allCountsAt = performance.now();
      }).observe(document, { childList: true, subtree: true, characterData: true });
    });
    if (phone) await emulatePhone(browser.context, page);
    await page.goto(address);
    await page.waitForSelector('html[data-ready]', { timeout: 300_000 });
    if (!(await page.locator('#filters-panel').evaluate((d) => (d as HTMLDetailsElement).open))) await page.locator('#filters-panel > summary').click();
    await page.waitForFunction(() => (window as unknown as { allCountsAt?: number }).allCountsAt !== undefined, null, { timeout: 300_000 });
    const [firstMs, countsMs, allCountsMs, origin] = await page.evaluate(() => [
      performance.getEntriesByName('first-results')[0]?.startTime ?? NaN,
      (window as unknown as { countsAt: number }).countsAt,
      (window as unknown as { allCountsAt: number }).allCountsAt,
      performance.timeOrigin,
    ]);
    const answer = (await page.locator('#status').innerText()).trim();
    // Only this page's answers: those the page before asked for as it closed were dropped by startRun, not counted.
    const sent = [...proxy.sent];
    const upTo = (ms: number) => sent.filter((d) => d.at <= origin + ms);
    if (verbose) for (const d of proxy.stale) console.log(`  dropped: asked by the run before, not counted ${String(d.bytes).padStart(9)}  ${d.url}`);
    if (verbose) for (const d of sent) console.log(`  ${d.at <= origin + firstMs ? 'first ' : d.at <= origin + countsMs ? 'counts' : d.at <= origin + allCountsMs ? 'all   ' : 'later '} ${String(Math.round(d.at - origin)).padStart(6)} ms ${String(d.bytes).padStart(9)}  ${d.url}`);
    return {
      firstMs,
      firstBytes: upTo(firstMs).reduce((n, d) => n + d.bytes, 0),
      firstRequests: upTo(firstMs).length,
      countsMs,
      countsBytes: upTo(countsMs).reduce((n, d) => n + d.bytes, 0),
      allCountsMs,
      allCountsBytes: upTo(allCountsMs).reduce((n, d) => n + d.bytes, 0),
      answer,
    };
  } finally {
    await browser.close();
  }
}


const USAGE = `Usage: npx tsx bench/page-load.ts --snapshot DIR [options]

The search page's time and bytes to its first result, its first facet counts and all of them, for a first visit (no
query) and a search, in server and static mode, on a desktop and a throttled phone profile, in Debian's Chromium
(.ci/browser-deps.sh installs it). Cold cache each run; the median of the runs is printed.

  --snapshot DIR          the snapshot the server answers from, and the static host serves (required)
  --static-snapshot DIR   serve this copy to static mode instead (build/search-chunks.ts makes one with the chunked
                          index for a snapshot built before it)
  --query TEXT            the search to time (catheter)
  --runs N                cold runs per figure (3)
  --modes LIST            server, static or both (server,static)
  --profiles LIST         desktop, phone or both (desktop,phone)
  --visits LIST           landing (no query), search, or both (landing,search)
  --static-host HOST      what serves static mode: nginx (Debian's, with exactly docs/deploy.md's configuration and
                          the build's precompressed copies; the default) or cdn (text compressed on the fly)
  --page-query Q          appended to the page's address before the hash (?engine=pagefind: static mode's Pagefind, for a snapshot built with --pagefind)
  --verbose               print every request of every run: when it arrived (ms after the page's start) and its bytes`;

async function main() {
  const values = parseCommandLine('page-load', USAGE, {
    snapshot: { type: 'string' },
    'static-snapshot': { type: 'string' },
    query: { type: 'string', default: 'catheter' },
    runs: { type: 'string', default: '3' },
    verbose: { type: 'boolean', default: false },
    modes: { type: 'string', default: 'server,static' },
    profiles: { type: 'string', default: 'desktop,phone' },
    visits: { type: 'string', default: 'landing,search' },
    'page-query': { type: 'string', default: '' },
    'static-host': { type: 'string', default: 'nginx' },
  });
  if (values['static-host'] !== 'nginx' && values['static-host'] !== 'cdn') throw new Error('--static-host must be nginx or cdn');
  if (!values.snapshot) throw new Error('--snapshot is required');
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing; run .ci/browser-deps.sh`);
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1 || runs > 20) throw new Error('--runs must be a whole number from 1 to 20');
  const app = await createApp({
    snapshotPath: values.snapshot,
    publicDir: PUBLIC_DIR,
    syncStatePath: null,
    pollMs: 0,
    watch: false,
    logger: { request: () => {}, info: () => {}, error: () => {} },
  });
  const server = await app.listen(0, '127.0.0.1');
  const staticDir = realpathSync(values['static-snapshot'] ?? values.snapshot);
  const host = values['static-host'] === 'cdn' ? await compressingStaticHost(staticDir) : await documentedNginx(staticDir);
  const proxies = { server: await countingProxy(server.port), static: await countingProxy(host.port) };
  const visits = values.visits.split(',').map((v) => ({ name: v, hash: v === 'landing' ? '#' : `#q=${encodeURIComponent(values.query)}` }));
  console.log(`snapshot ${realpathSync(values.snapshot)}${values['static-snapshot'] ? `\nstatic mode serves ${staticDir}` : ''}\nstatic host: ${values['static-host'] === 'cdn' ? 'text compressed on the fly' : "nginx with docs/deploy.md's configuration"}\nmedian of ${runs} cold runs\n`);
  console.log('mode    profile  visit              first result   bytes (requests)   first counts      bytes    all counts      bytes  answer');
  try {
    for (const mode of values.modes.split(',') as ('server' | 'static')[]) {
      for (const profile of values.profiles.split(',')) {
        for (const visit of visits) {
          const all: Figures[] = [];
          for (let i = 0; i < runs; i++) all.push(await measureOnce(proxies[mode], `${proxies[mode].url}${values['page-query']}${visit.hash}`, profile === 'phone', values.verbose));
          const m = (f: (x: Figures) => number) => middleRun(all.map(f));
          console.log(
            [
              mode.padEnd(7),
              profile.padEnd(8),
              (visit.name === 'landing' ? 'landing' : `"${values.query}"`).padEnd(18),
              seconds(m((x) => x.firstMs)).padStart(12),
              `${kb(m((x) => x.firstBytes))} (${m((x) => x.firstRequests)})`.padStart(18),
              seconds(m((x) => x.countsMs)).padStart(14),
              kb(m((x) => x.countsBytes)).padStart(10),
              seconds(m((x) => x.allCountsMs)).padStart(13),
              kb(m((x) => x.allCountsBytes)).padStart(10),
              ` ${all[0]!.answer.split('\n')[0]}`,
            ].join(' '),
          );
        }
      }
    }
  } finally {
    await proxies.server.close();
    await proxies.static.close();
    await host.close();
    await app.close({ graceMs: 1000 });
  }
}

runCommand('page-load', main);
