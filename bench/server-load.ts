/**
 * Load on the query server, from a second process: requests per second and latency (p50, p99) for detail, meta and
 * catalog at 50 connections, on the bundled data.
 *
 *   npx tsx bench/server-load.ts [--snapshot PATH] [--connections 50] [--duration 10] [--only WORD]
 *
 * The server runs from its source in its own process (request logs on, written to /dev/null); autocannon runs in
 * this process. Without --snapshot, the bundled sources are built once into bench/out/snapshot.
 */
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { parseCommandLine } from '../src/cli/args.ts';
import { runBuild } from '../build/snapshot/build.ts';
import { defaultSources } from '../build/sources/default.ts';
import { LAYOUT, ShardIndex } from '../src/contract/index.ts';
import { startSourceServer } from './lib/server.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const USAGE = `Usage: npx tsx bench/server-load.ts [options]

Load on the query server from a second process: requests per second and p50/p99 latency for detail, meta and
catalog, with the machine's load average beside the figures.

  --snapshot PATH     the snapshot to serve (default: the bundled data, built once into bench/out/snapshot)
  --connections N     connections of the load generator (50)
  --duration S        seconds of load per operation (10)
  --only WORD         only the operations whose name contains WORD`;

const values = parseCommandLine('server-load', USAGE, {
  snapshot: { type: 'string' },
  connections: { type: 'string', default: '50' },
  duration: { type: 'string', default: '10' },
  only: { type: 'string' },
});
const connections = Number(values.connections);
const duration = Number(values.duration);

async function snapshotPath(): Promise<string> {
  if (values.snapshot) return values.snapshot;
  const out = join(REPO, 'bench', 'out', 'snapshot');
  if (!existsSync(out)) {
    console.log('building the bundled data into bench/out/snapshot …');
    const bundled = await defaultSources();
    await runBuild({ sources: bundled.sources, edges: bundled.edges, notes: bundled.notes, out });
  }
  return out;
}

const snapshot = await snapshotPath();
const index = ShardIndex.parse(JSON.parse(await readFile(join(snapshot, LAYOUT.recordIndex), 'utf8')));
// Every K number of the snapshot, from the shard files, to ask for in random order.
const kNumbers: string[] = [];
for (const s of index.shards) {
  for (const r of JSON.parse(await readFile(join(snapshot, s.path), 'utf8')) as { kNumber: string }[]) kNumbers.push(r.kNumber);
}

const server = await startSourceServer(REPO, { env: { SNAPSHOT_PATH: snapshot }, timeoutMs: 20_000 });
const { url } = server;
process.on('exit', () => server.child.kill('SIGTERM'));

const body = (operation: string, input: unknown) => JSON.stringify({ version: 1, operation, input });
const post = async (operation: string, input: unknown) =>
  (await (await fetch(`${url}/v1/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(operation, input) })).json()) as {
    page?: { nextCursor: string | null };
  };

// Cursors of every page of the clearance catalog at limit 100, so that catalog requests land all over the data.
const cursors: (string | null)[] = [null];
for (let c: string | null = null; ; ) {
  const res = await post('device-510k.catalog', { kind: 'clearance', limit: 100, cursor: c });
  c = res.page?.nextCursor ?? null;
  if (c === null) break;
  cursors.push(c);
}

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)] as T;
const json = { 'content-type': 'application/json' };

type Scenario = { name: string; requests: Parameters<typeof autocannon>[0]['requests'] };
const scenarios: Scenario[] = [
  {
    name: 'detail (random K number)',
    requests: [{ method: 'POST', path: '/v1/query', headers: json, setupRequest: (req) => ({ ...req, body: body('device-510k.detail', { id: pick(kNumbers) }) }) }],
  },
  { name: 'meta', requests: [{ method: 'POST', path: '/v1/query', headers: json, body: body('device-510k.meta', {}) }] },
  {
    name: 'catalog (limit 100, random page)',
    requests: [{ method: 'POST', path: '/v1/query', headers: json, setupRequest: (req) => ({ ...req, body: body('device-510k.catalog', { kind: 'clearance', limit: 100, cursor: pick(cursors) }) }) }],
  },
  {
    name: 'catalog, br accepted',
    requests: [
      {
        method: 'POST',
        path: '/v1/query',
        headers: { ...json, 'accept-encoding': 'br, gzip' },
        setupRequest: (req) => ({ ...req, body: body('device-510k.catalog', { kind: 'clearance', limit: 100, cursor: pick(cursors) }) }),
      },
    ],
  },
];

const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');
// Figures from a shared machine are only as good as its idleness: the load average says how idle it was.
console.log(`server-load: ${kNumbers.length.toLocaleString('en-US')} records, ${connections} connections, ${duration} s per scenario, node ${process.version}, load average ${load()}`);
console.log(['scenario'.padEnd(34), 'req/s'.padStart(8), 'p50 ms'.padStart(8), 'p99 ms'.padStart(8), 'max ms'.padStart(8), 'MB/s'.padStart(7), 'non-2xx'.padStart(8), 'errors'.padStart(7)].join(''));
for (const s of scenarios.filter((x) => !values.only || x.name.includes(values.only))) {
  // A short warm-up, so that the figures are of a warm cache, as a running server's are.
  await autocannon({ url, connections, duration: 2, requests: s.requests });
  const r = await autocannon({ url, connections, duration, requests: s.requests, title: s.name });
  console.log(
    [
      s.name.padEnd(34),
      r.requests.average.toFixed(0).padStart(8),
      r.latency.p50.toFixed(1).padStart(8),
      r.latency.p99.toFixed(1).padStart(8),
      r.latency.max.toFixed(0).padStart(8),
      (r.throughput.average / 1e6).toFixed(1).padStart(7),
      String(r.non2xx).padStart(8),
      String(r.errors + r.timeouts).padStart(7),
    ].join(''),
  );
}
const status = await readFile(`/proc/${server.pid}/status`, 'utf8').catch(() => '');
const rss = (key: string) => /\d+/.exec(status.split('\n').find((l) => l.startsWith(key)) ?? '')?.[0];
console.log(`load average at the end: ${load()}`);
if (status) console.log(`server memory: rss ${Math.round(Number(rss('VmRSS')) / 1024)} MiB, peak ${Math.round(Number(rss('VmHWM')) / 1024)} MiB`);
await server.stop();
