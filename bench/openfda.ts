import { request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { parseCommandLine } from '../src/cli/args.ts';
import { silentLogger } from '../src/server/log.ts';
import { createApp } from '../src/server/app.ts';
import { sourceStateOf } from '../src/api/source-state.ts';
import { answerOpenFda } from '../src/openfda/answer.ts';
import { openSnapshotDirectory } from '../src/node/index.ts';

const HELP = `Usage: npx tsx bench/openfda.ts --snapshot DIR [--seconds N] [--connections N]

openFDA-style requests (/device/510k.json) side by side with the same questions asked through POST /v1/query,
against one snapshot, on an in-process server on 127.0.0.1 (port 0).

  --snapshot DIR      the snapshot directory (its manifest.json inside), required
  --seconds N         seconds of load per request kind (default 5, at most 60)
  --connections N     requests in flight at once (default 8, at most 64)
  --help              this text

Prints, per pair: requests a second and p99 latency of each side, and their ratio; then the time of a count of
every product code over every record (in process, no HTTP), best and median of 20 runs.`;

const values = parseCommandLine('openfda', HELP, { snapshot: { type: 'string' }, seconds: { type: 'string' }, connections: { type: 'string' } });
if (!values.snapshot) {
  console.error('openfda: --snapshot DIR is required (see --help)');
  process.exit(2);
}
const seconds = Math.min(60, Math.max(1, Number(values.seconds ?? 5)));
const connections = Math.min(64, Math.max(1, Number(values.connections ?? 8)));

type Req = { method: 'GET' | 'POST'; path: string; body?: string };
const search = (input: Record<string, unknown>): Req => ({
  method: 'POST',
  path: '/v1/query',
  body: JSON.stringify({ version: 1, operation: 'device-510k.search', input: { query: '', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10, ...input } }),
});

const PAIRS: { name: string; openfda: Req; v1: Req }[] = [
  {
    name: 'search: one product code, 10 records',
    openfda: { method: 'GET', path: '/device/510k.json?search=product_code:DQY&limit=10' },
    v1: search({ query: 'code:DQY' }),
  },
  {
    name: 'search: a word and a date range, 10 records',
    openfda: { method: 'GET', path: '/device/510k.json?search=device_name:catheter+AND+decision_date:[20100101+TO+20201231]&limit=10' },
    v1: search({ query: 'device:catheter decided:2010..2020' }),
  },
  {
    name: 'count: product codes of a word (keyword field)',
    openfda: { method: 'GET', path: '/device/510k.json?search=device_name:catheter&count=product_code&limit=100' },
    v1: search({ query: 'device:catheter', pageSize: 1, facets: [{ field: 'productCode', size: 100 }] }),
  },
  {
    name: 'count: dates of a word (days vs years)',
    openfda: { method: 'GET', path: '/device/510k.json?search=device_name:catheter&count=decision_date' },
    v1: search({ query: 'device:catheter', pageSize: 1, facets: [{ field: 'decisionYear', size: null }] }),
  },
];

function once(url: URL, r: Req): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(
      { host: url.hostname, port: url.port, method: r.method, path: r.path, headers: r.body ? { 'content-type': 'application/json' } : {}, agent: agent },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - started) : reject(new Error(`${r.path}: ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    req.end(r.body);
  });
}

import { Agent } from 'node:http';
const agent = new Agent({ keepAlive: true, maxSockets: 64 });

async function load(url: URL, r: Req): Promise<{ rps: number; p99: number; n: number }> {
  for (let i = 0; i < 20; i++) await once(url, r); // warm: index sections, caches
  const latencies: number[] = [];
  const until = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until && latencies.length < 5_000_000) latencies.push(await once(url, r));
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { rps: latencies.length / elapsed, p99: latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))]!, n: latencies.length };
}

const app = await createApp({ snapshotPath: values.snapshot, syncStatePath: null, publicDir: null, pollMs: 0, watch: false, logger: silentLogger });
const { url: base } = await app.listen(0, '127.0.0.1');
const url = new URL(base);
console.log(`snapshot ${values.snapshot}; ${seconds} s per side, ${connections} in flight`);
console.log('| question | openFDA-style req/s | p99 ms | /v1/query req/s | p99 ms | req/s ratio | p99 ratio |');
console.log('|---|---|---|---|---|---|---|');
for (const pair of PAIRS) {
  const a = await load(url, pair.openfda);
  const b = await load(url, pair.v1);
  console.log(`| ${pair.name} | ${a.rps.toFixed(0)} | ${a.p99.toFixed(2)} | ${b.rps.toFixed(0)} | ${b.p99.toFixed(2)} | ${(a.rps / b.rps).toFixed(2)} | ${(b.p99 / a.p99).toFixed(2)} |`);
}
await app.close({ graceMs: 1000 });
agent.destroy();

// A count of every product code over every record, in process: the planner, the count and the answer's bytes.
const snapshot = await openSnapshotDirectory(values.snapshot);
const deps = { now: () => new Date(), sourceState: (s: typeof snapshot | null, now: Date) => sourceStateOf({ manifest: s?.manifest ?? null, sync: null, now, maxAgeHours: 48 }) };
const countUrl = new URL('http://bench/device/510k.json?count=product_code&limit=100000');
const times: number[] = [];
let terms = 0;
for (let i = 0; i < 21; i++) {
  const t0 = performance.now();
  const a = await answerOpenFda(deps, snapshot, '510k', countUrl);
  const ms = performance.now() - t0;
  if (a.status !== 200) throw new Error(`count=product_code answered ${a.status}`);
  if (i === 0) terms = JSON.parse(new TextDecoder().decode(a.body)).meta.total_terms;
  else times.push(ms);
}
times.sort((a, b) => a - b);
console.log(`count=product_code over all ${snapshot.manifest.counts.records} records (${terms} codes): best ${times[0]!.toFixed(1)} ms, median ${times[10]!.toFixed(1)} ms (first run, loading sections, not counted)`);
snapshot.close();
