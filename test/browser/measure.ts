/**
 * Page weight and time to first result of the search page, in server mode and static mode, on a cold cache.
 *
 *   npx tsx test/browser/measure.ts [--snapshot snapshot] [--query catheter] [--runs 3] [--modes server,static]
 *     [--page-query '?engine=pagefind'] [--verbose]
 *
 * Each run opens `/#q=<query>` in a fresh browser profile and reports the bytes sent to the browser until the first
 * results are on screen (the page's `first-results` performance mark), then until the facet counts are too (static
 * mode fetches Pagefind's filter files after the first results, on a phone once the folded filters are opened), and
 * the time from navigation to the first results.
 * Bytes are counted by a small proxy in front of each host (status line, headers and body as sent), so the requests
 * of Pagefind's web worker are counted like the page's own. "desktop" is unthrottled on this machine; "phone" paces
 * every answer through one shared 1.6 Mbit/s link with 150 ms of round trip (Lighthouse's mobile network) and slows
 * the page's main thread 4x.
 * The static host compresses text and honours Range requests like a CDN; the server answers as it does in production.
 * Not a test: figures depend on the machine, so they are printed, never asserted.
 */
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import { parseCommandLine, runCommand } from '../../src/cli/args.ts';
import { gzipSync } from 'node:zlib';
import { createApp } from '../../src/server/app.ts';
import { CHROMIUM, launchChromium } from './chromium.ts';
import { PUBLIC_DIR } from './static-host.ts';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.json', '.wasm']);

const listen = async (server: Server) => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
};

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

type Sent = { at: number; bytes: number; url: string };

/**
 * A proxy that buffers each answer of `upstreamPort`, counts its bytes, and (when `link` is set) delivers it through
 * one shared link of the given bandwidth after half the round trip, like a phone's network would.
 */
async function countingProxy(upstreamPort: number) {
  const sent: Sent[] = [];
  let link: { bytesPerMs: number; rttMs: number } | null = null;
  let linkFreeAt = 0;
  const proxy = await listen(
    createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const up = httpRequest({ host: '127.0.0.1', port: upstreamPort, method: req.method, path: req.url, headers: req.headers }, (ures) => {
          const body: Buffer[] = [];
          ures.on('data', (c: Buffer) => body.push(c));
          ures.on('end', () => {
            const payload = Buffer.concat(body);
            const headers = { ...ures.headers };
            delete headers['transfer-encoding'];
            headers['content-length'] = String(payload.byteLength);
            const head = `HTTP/1.1 ${ures.statusCode} \r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`;
            const bytes = Buffer.byteLength(head) + payload.byteLength;
            const deliver = () => {
              res.writeHead(ures.statusCode ?? 502, headers);
              res.end(payload);
              sent.push({ at: Date.now(), bytes, url: req.url ?? '' });
            };
            if (!link) return deliver();
            const now = Date.now();
            const start = Math.max(now + link.rttMs / 2, linkFreeAt);
            linkFreeAt = start + bytes / link.bytesPerMs;
            setTimeout(deliver, linkFreeAt + link.rttMs / 2 - now);
          });
        });
        up.on('error', () => res.writeHead(502).end());
        up.end(Buffer.concat(chunks));
      });
    }),
  );
  return {
    url: `http://127.0.0.1:${proxy.port}/`,
    sent,
    setLink(value: typeof link) {
      link = value;
      linkFreeAt = 0;
    },
    close: proxy.close,
  };
}

type Figures = { firstResultMs: number; bytesToFirstResult: number; requestsToFirstResult: number; bytesToFacets: number; total: string };

async function measureOnce(proxy: Awaited<ReturnType<typeof countingProxy>>, hash: string, phone: boolean, verbose: boolean): Promise<Figures> {
  const browser = await launchChromium();
  proxy.sent.length = 0;
  proxy.setLink(phone ? { bytesPerMs: (1.6e6 / 8) / 1000, rttMs: 150 } : null);
  try {
    const page = await browser.context.newPage();
    if (phone) {
      const cdp = await browser.context.newCDPSession(page);
      await cdp.send('Emulation.setCPUThrottlingRate', { rate: 4 });
      await page.setViewportSize({ width: 390, height: 844 });
    }
    await page.goto(`${proxy.url}${hash}`);
    await page.waitForSelector('html[data-ready]', { timeout: 300_000 });
    const [firstResultMs, firstResultAt] = await page.evaluate(() => {
      const mark = performance.getEntriesByName('first-results')[0];
      return [mark?.startTime ?? NaN, performance.timeOrigin + (mark?.startTime ?? NaN)];
    });
    // On a phone the filters are folded and their counts load when opened, as a person would open them.
    if (!(await page.locator('#filters-panel').evaluate((d) => (d as HTMLDetailsElement).open))) await page.locator('#filters-panel > summary').click();
    await page.waitForSelector('#facets a.facet-value', { state: 'attached', timeout: 300_000 });
    await page.waitForLoadState('networkidle');
    const total = (await page.locator('#status').innerText()).trim();
    const sent = [...proxy.sent];
    const before = sent.filter((d) => d.at <= firstResultAt);
    if (verbose) for (const d of sent) console.log(`  ${d.at <= firstResultAt ? 'first' : 'later'} ${String(d.bytes).padStart(9)}  ${d.url}`);
    return {
      firstResultMs,
      bytesToFirstResult: before.reduce((n, d) => n + d.bytes, 0),
      requestsToFirstResult: before.length,
      bytesToFacets: sent.reduce((n, d) => n + d.bytes, 0),
      total,
    };
  } finally {
    await browser.close();
    proxy.setLink(null);
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const kb = (n: number) => `${(n / 1024).toFixed(0)} KB`;

const USAGE = `Usage: npx tsx test/browser/measure.ts [options]

The browser page's weight and time to its first result, in server and static mode, on a desktop and a throttled
phone profile, in Debian's Chromium (.ci/browser-deps.sh installs it).

  --snapshot DIR    the snapshot to serve (snapshot)
  --query TEXT      the search to time (catheter)
  --runs N          cold runs per figure, the median is kept (3)
  --modes LIST      server, static or both (server,static)
  --page-query Q    appended to the page's address before the hash (?engine=pagefind: static mode's Pagefind)
  --verbose         print every request`;

async function main() {
  const values = parseCommandLine('measure', USAGE, {
    snapshot: { type: 'string', default: 'snapshot' },
    query: { type: 'string', default: 'catheter' },
    runs: { type: 'string', default: '3' },
    verbose: { type: 'boolean', default: false },
    modes: { type: 'string', default: 'server,static' },
  // Appended to the page's address before the hash: `?engine=pagefind` measures static mode's Pagefind fallback.
  'page-query': { type: 'string', default: '' },
  });
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing; run .ci/browser-deps.sh`);
  const snapshot = realpathSync(values.snapshot);
  const runs = Number(values.runs);
  const app = await createApp({
    snapshotPath: values.snapshot,
    publicDir: PUBLIC_DIR,
    syncStatePath: null,
    pollMs: 0,
    watch: false,
    logger: { request: () => {}, info: () => {}, error: () => {} },
  });
  const server = await app.listen(0, '127.0.0.1');
  const host = await compressingStaticHost(snapshot);
  const proxies = { server: await countingProxy(server.port), static: await countingProxy(host.port) };
  const hash = `${values['page-query']}#q=${encodeURIComponent(values.query)}`;
  console.log(`snapshot ${snapshot}\nquery "${values.query}", median of ${runs} cold runs\n`);
  console.log('mode    profile  first result  bytes to first result (requests)  bytes incl. facets  answer');
  try {
    for (const mode of values.modes.split(',') as ('server' | 'static')[]) {
      for (const phone of [false, true]) {
        const all: Figures[] = [];
        for (let i = 0; i < runs; i++) all.push(await measureOnce(proxies[mode], hash, phone, values.verbose));
        console.log(
          [
            mode.padEnd(7),
            (phone ? 'phone' : 'desktop').padEnd(8),
            `${median(all.map((x) => x.firstResultMs)).toFixed(0)} ms`.padStart(12),
            `${kb(median(all.map((x) => x.bytesToFirstResult)))} (${median(all.map((x) => x.requestsToFirstResult))})`.padStart(33),
            kb(median(all.map((x) => x.bytesToFacets))).padStart(19),
            ` ${all[0]!.total}`,
          ].join(' '),
        );
      }
    }
  } finally {
    await proxies.server.close();
    await proxies.static.close();
    await host.close();
    await app.close({ graceMs: 1000 });
  }
}

runCommand('measure', main);
