/**
 * Exports under hostile clients, and compressed exports: starts the server as `npm start` runs it (bench/lib/server.ts)
 * over a snapshot, then
 *
 * 1. opens N exports (10, then 40 by default) whose clients read the answer's first bytes and then never read again,
 *    holds them open for `--hold-ms`, and meanwhile asks `meta` every 100 ms: prints how many were streamed and how
 *    many refused (503), the server's RSS before and at its peak, and the `meta` latencies;
 * 2. streams the full export as CSV and as NDJSON with Accept-Encoding identity, gzip and br, reading as fast as it
 *    can: prints records a second and the bytes on the wire of each.
 *
 *   npx tsx bench/hostile-export.ts --snapshot DIR [--root CHECKOUT] [--clients 10,40] [--hold-ms 8000] [--limit N]
 *                                   [--skip-hostile] [--skip-compression] [--env NAME=VALUE ...]
 *
 * A script, not a test: it prints figures and asserts nothing about time.
 */
import { request } from 'node:http';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseCommandLine } from '../src/cli/args.ts';
import { neverReadingExports } from './lib/hostile-export.ts';
import { memoryOf, sampleMemory } from './lib/procs.ts';
import { startServer, type RunningServer } from './lib/server.ts';

const USAGE = `Usage: npx tsx bench/hostile-export.ts --snapshot DIR [options]

Starts the server over a snapshot; opens exports whose clients never read and reports the server's RSS and meta
latency meanwhile; then streams full CSV and NDJSON exports in identity, gzip and br and reports records/s and bytes
on the wire.

  --snapshot DIR        the snapshot to serve (required)
  --root DIR            the checkout whose server runs (this one); another checkout gives "before" figures
  --clients LIST        numbers of never-reading exports to open, one round each (10,40)
  --hold-ms MS          how long each round keeps its exports open (8000)
  --limit N             records of each compressed/uncompressed export at most (all)
  --skip-hostile        skip the never-reading rounds
  --skip-compression    skip the compressed/uncompressed exports
  --env NAME=VALUE      an environment variable for the server (repeatable), e.g. --env EXPORT_CONCURRENCY=8`;

const values = parseCommandLine('hostile-export', USAGE, {
  snapshot: { type: 'string' },
  root: { type: 'string', default: resolve(import.meta.dirname, '..') },
  clients: { type: 'string', default: '10,40' },
  'hold-ms': { type: 'string', default: '8000' },
  limit: { type: 'string' },
  'skip-hostile': { type: 'boolean', default: false },
  'skip-compression': { type: 'boolean', default: false },
  env: { type: 'string', multiple: true, default: [] },
});
if (!values.snapshot) {
  console.error('hostile-export: --snapshot DIR is required (see --help)');
  process.exit(2);
}
const clientCounts = values.clients.split(',').map((c) => Number(c.trim()));
const holdMs = Number(values['hold-ms']);
if (clientCounts.some((c) => !Number.isInteger(c) || c < 1 || c > 1000) || !(holdMs > 0 && holdMs <= 600_000)) {
  console.error('hostile-export: --clients takes whole numbers from 1 to 1000, --hold-ms a number of milliseconds up to 600000');
  process.exit(2);
}
const serverEnv: Record<string, string> = {};
for (const pair of values.env) {
  const at = pair.indexOf('=');
  if (at < 1) {
    console.error(`hostile-export: --env takes NAME=VALUE, got "${pair}"`);
    process.exit(2);
  }
  serverEnv[pair.slice(0, at)] = pair.slice(at + 1);
}

const mib = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MiB`;

async function hostileRound(server: RunningServer, count: number): Promise<void> {
  const f = await neverReadingExports(server, count, holdMs);
  const shown = Object.entries(f.statuses).map(([s, n]) => `${n}× ${s}`).join(', ');
  console.log(
    `${count} never-reading exports held ${(holdMs / 1000).toFixed(0)} s: ${shown}; ${f.stillOpen} connections still open at the end; ` +
      `server RSS ${mib(f.rssBeforeBytes)} before, ${mib(f.peakRssBytes)} at peak; meta ${f.metaCount} asked: p50 ${f.metaP50Ms.toFixed(1)} ms, ` +
      `p95 ${f.metaP95Ms.toFixed(1)} ms, max ${f.metaMaxMs.toFixed(1)} ms (quiet p50 ${f.quietMetaP50Ms.toFixed(1)} ms); ` +
      `server main thread while the slowest meta was out: ran ${f.slowestMetaRunMs.toFixed(0)} ms, waited for a core ${f.slowestMetaWaitMs.toFixed(0)} ms; ` +
      `most it ran while one meta was out: ${f.metaRunMaxMs.toFixed(0)} ms`,
  );
}

/** One export read to its end as fast as the client can: records (X-Export-Count), bytes on the wire, seconds. */
function wireExport(url: string, format: string, encoding: string): Promise<{ records: number; wire: number; seconds: number; coding: string }> {
  const search = new URLSearchParams({ format });
  if (values.limit) search.set('limit', values.limit);
  return new Promise((resolvePromise, reject) => {
    const t0 = performance.now();
    const req = request(`${url}/v1/export?${search}`, { headers: { 'accept-encoding': encoding }, agent: false }, (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`export answered ${res.statusCode}`));
        res.resume();
        return;
      }
      let wire = 0;
      res.on('data', (c: Buffer) => {
        wire += c.length;
      });
      res.on('end', () =>
        resolvePromise({
          records: Number(res.headers['x-export-count']),
          wire,
          seconds: (performance.now() - t0) / 1000,
          coding: String(res.headers['content-encoding'] ?? 'identity'),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function compressionRound(server: RunningServer): Promise<void> {
  // The search index loaded first, so that the figures are the exports' own.
  await fetch(`${server.url}/v1/export?limit=1&format=ndjson`).then((r) => r.text());
  for (const format of ['csv', 'ndjson']) {
    let identityWire = 0;
    for (const encoding of ['identity', 'gzip', 'br']) {
      const memory = sampleMemory(server.pid, 50);
      const before = memoryOf(server.pid)?.rss ?? 0;
      const m = await wireExport(server.url, format, encoding);
      const peak = memory.stop();
      if (encoding === 'identity') identityWire = m.wire;
      console.log(
        `export ${format} ${m.coding}: ${m.records.toLocaleString('en-US')} records in ${m.seconds.toFixed(2)} s = ` +
          `${Math.round(m.records / m.seconds).toLocaleString('en-US')} records/s; ${m.wire.toLocaleString('en-US')} bytes on the wire` +
          `${encoding === 'identity' ? '' : ` (${((100 * m.wire) / identityWire).toFixed(1)}% of identity)`}; server RSS ${mib(before)} before, ${mib(peak)} at peak`,
      );
    }
  }
}

const tmp = await mkdtemp(join(tmpdir(), 'device-510k-hostile-export-'));
const server = await startServer(resolve(values.root), resolve(values.snapshot), tmp, serverEnv);
try {
  // Load the search index before anything is measured.
  await fetch(`${server.url}/v1/export?limit=1&format=ndjson`).then((r) => r.text());
  console.log(`server over ${values.snapshot}${Object.keys(serverEnv).length ? ` with ${JSON.stringify(serverEnv)}` : ''}; RSS ${mib(memoryOf(server.pid)?.rss ?? 0)} with the index loaded`);
  if (!values['skip-hostile']) for (const count of clientCounts) await hostileRound(server, count);
  if (!values['skip-compression']) await compressionRound(server);
  console.log(`load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
} finally {
  await server.stop();
}
