/**
 * CPU time per request of the API as a Cloudflare Worker, under workerd, for the requests a hostile or heavy client
 * sends: what the platform's per-request CPU limit is measured against.
 *
 *   npx tsx bench/worker-cpu.ts --snapshot DIR [--runs N] [--export-part N] [--whole-export yes|no] [--only export] [--assets DIR]
 *
 * A script, not a test: it prints figures and asserts nothing about time.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { prepareAssets } from '../build/worker/assets.ts';
import { startWorker, type WorkerTarget } from '../build/worker/local.ts';
import { parseCommandLine } from '../src/cli/args.ts';
import { FACET_FIELDS } from '../src/contract/index.ts';
import { FACET_VALUES_MAX } from '../src/contract/operations.ts';
import { HOSTILE_SEARCH_CASES, searchInput, type Input } from './lib/hostile-search.ts';
import { BENCH_CURSOR_SECRET } from './lib/server.ts';
import { workerdPid } from './lib/worker.ts';

const USAGE = `Usage: npx tsx bench/worker-cpu.ts --snapshot DIR [options]

Starts the Worker under workerd (as npm run worker does: the snapshot in its static assets) and sends, one at a time
on an idle Worker, the requests whose cost matters against a Worker's CPU limit: meta, the requests that read whole
columns of the chunked index (a word's default facets, a sort by received date, a panel qualifier, a feed), the hostile searches of
bench/hostile-search.ts (each alone), one search counting every facet (each with the largest size the bound on a
facet's values allows), openFDA's search, a count over a broad search and a count of every word, an export part of
--export-part records in each of two orders (newest decision first, the default, whose records are spread over the
shards, and by K number, whose records come shard by shard), and with --whole-export yes the whole CSV export of every record. For each: the CPU time workerd spent on it (every thread
of the process, from the scheduler's counts, so an upper bound on what the platform bills the Worker: Miniflare's own
entry Worker and the assets server are in it), its wall time, status and bytes; the median of --runs. Prints one
table beside the platform's limits (10 ms a request on the free plan; 30 s by default on the paid plan, raised with
limits.cpu_ms up to 5 minutes), and each request's first run on the fresh isolate (in the table's order), when it
fetches the files it reads.

  --snapshot DIR        the snapshot to serve (required; copied once into a temporary assets folder)
  --runs N              runs of each request; the table shows the median (5)
  --export-part N       records in the export part measured (10000)
  --whole-export yes    also measure one export of every record, once (default no: at 1,000,000 records it takes minutes)
  --only export         only the export rows (after meta, which opens the snapshot)
  --assets DIR          an assets folder already filled from the snapshot (bench/worker-start.ts --keep-assets); default:
                        a fresh temporary copy`;

const values = parseCommandLine('worker-cpu', USAGE, {
  snapshot: { type: 'string', default: '' },
  runs: { type: 'string', default: '5' },
  'export-part': { type: 'string', default: '10000' },
  'whole-export': { type: 'string', default: 'no' },
  only: { type: 'string', default: '' },
  assets: { type: 'string', default: '' },
});
if (values.snapshot === '') {
  console.error(USAGE);
  process.exit(2);
}
if (!['yes', 'no'].includes(values['whole-export'])) {
  console.error(`worker-cpu: --whole-export takes yes or no, not "${values['whole-export']}"`);
  process.exit(2);
}
if (!['', 'export'].includes(values.only)) {
  console.error(`worker-cpu: --only takes export, not "${values.only}"`);
  process.exit(2);
}
const runs = Math.max(1, Math.min(50, Number(values.runs) || 5));
const exportPart = Math.max(1, Math.min(1_000_000, Number(values['export-part']) || 10_000));

/** CPU time of every thread of the process so far, in milliseconds (each thread's schedstat: nanoseconds on a core). */
async function processCpuMs(pid: number): Promise<number> {
  let ns = 0;
  for (const task of await readdir(`/proc/${pid}/task`)) {
    const stat = await readFile(`/proc/${pid}/task/${task}/schedstat`, 'utf8').catch(() => '');
    const run = Number(stat.split(' ')[0]);
    if (Number.isFinite(run)) ns += run;
  }
  return ns / 1e6;
}

type Ask = { name: string; request: () => { path: string; init: RequestInit } };
const query = (operation: string, input: Input): { path: string; init: RequestInit } => ({
  path: '/v1/query',
  init: { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ version: 1, operation: `device-510k.${operation}`, input }) },
});

/**
 * What the all-facet row counts: every facet field, each with a size of FACET_VALUES_MAX, the most one facet may list,
 * so that the row measures the whole count and the longest lists the bound lets through (with `size: null` a broad
 * search's predicate facet passes the bound and is refused before any counting).
 */
const predicatesIndexed = JSON.parse(await readFile(join(resolve(values.snapshot), 'search/chunks.json'), 'utf8').catch(() => '{}')) as { predicates?: unknown };
// A snapshot built before predicates were indexed has no predicate facet (a 503 names it): every other field.
const EVERY_FACET_WITHIN_BOUND = FACET_FIELDS.filter((f) => f !== 'predicate' || predicatesIndexed.predicates !== undefined).map((field) => ({ field, size: FACET_VALUES_MAX }));

/** openFDA's requests: a GET of its path. */
const openFda = (path: string): { path: string; init: RequestInit } => ({ path, init: { method: 'GET' } });

/** Each request differs from run to run where the Worker keeps answers, so that every run computes its answer. */
function asks(): Ask[] {
  let run = 0;
  const next = () => run++;
  const list: Ask[] = [{ name: 'meta', request: () => query('meta', {}) }];
  // One row per order, each the median of its own runs: an export in date order reads a record range per record, one
  // by K number a range per shard, some ten times fewer (docs/deploy.md), so runs of the two in one row made one run
  // in three look like an outlier. An export is not kept as an answer, so each run reads and writes it all.
  const exports: Ask[] = (['decisionDate:desc', 'kNumber:asc'] as const).map((sort) => ({
    name: `export part: ${exportPart.toLocaleString('en-US')} records, CSV, ${sort === 'kNumber:asc' ? 'by K number' : 'newest decision first (the default)'}`,
    request: () => ({ path: `/v1/export?format=csv&limit=${exportPart}&sort=${sort}`, init: { method: 'GET' } }),
  }));
  if (values.only === 'export') return [...list, ...exports];
  // The requests that read whole columns of the chunked index (docs/deploy.md names them), first after meta: the
  // first of each in the isolate fetches its columns (the "first" figures), the later ones find them in the cache.
  list.push({ name: 'whole columns: a word with the default facets (codes, applicants)', request: () => query('search', searchInput('system', { page: 1 + next() })) });
  list.push({ name: 'whole columns: sort by received date', request: () => query('search', searchInput('catheter', { sort: 'receivedDate:desc', page: 1 + next() })) });
  list.push({ name: 'whole columns: a panel qualifier', request: () => query('search', searchInput('panel:cardio', { page: 1 + next() })) });
  list.push({ name: 'whole columns: the feed of a word (dates, K numbers)', request: () => ({ path: `/v1/feed?format=json&query=catheter&limit=${50 + (next() % 50)}`, init: { method: 'GET' } }) });
  for (const c of HOSTILE_SEARCH_CASES) {
    // The 16 concurrent all-facet searches are measured as one below: the Worker bills each request on its own.
    if (c.requests!(0).length > 1) continue;
    list.push({ name: c.name, request: () => query('search', c.requests!(next())[0]!) });
  }
  list.push({ name: `one search, every facet at size ${FACET_VALUES_MAX.toLocaleString('en-US')} (the bound)`, request: () => query('search', searchInput('', { facets: EVERY_FACET_WITHIN_BOUND, page: 1 + next() })) });
  // openFDA's (src/openfda, over the chunked index as /v1/query's searches): a round's requests differ by a `limit` or
  // `skip`, which changes no work but the page, so that no answer is kept from the last.
  list.push({ name: 'openFDA: a search (device_name:catheter)', request: () => openFda(`/device/510k.json?search=device_name:catheter&limit=10&skip=${next() % 50}`) });
  list.push({ name: 'openFDA: count=product_code over a broad search', request: () => openFda(`/device/510k.json?search=decision_date:[19000101+TO+20991231]&count=product_code&limit=${100 + next()}`) });
  list.push({ name: 'openFDA: count=device_name over every record', request: () => openFda(`/device/510k.json?count=device_name&limit=${100 + next()}`) });
  list.push(...exports);
  return list;
}

type Row = { name: string; cpuMs: number; wallMs: number; status: number; bytes: number; first?: { cpuMs: number; wallMs: number } };

async function measure(worker: WorkerTarget, pid: number, ask: Ask, times: number): Promise<Row> {
  const cpu: number[] = [];
  const wall: number[] = [];
  let status = 0;
  let bytes = 0;
  for (let i = 0; i < times; i++) {
    const { path, init } = ask.request();
    const before = await processCpuMs(pid);
    const t = performance.now();
    const res = await fetch(`${worker.url}${path}`, { ...init, signal: AbortSignal.timeout(900_000) });
    const body = new Uint8Array(await res.arrayBuffer());
    wall.push(performance.now() - t);
    cpu.push((await processCpuMs(pid)) - before);
    status = res.status;
    bytes = body.length;
    console.error(`${ask.name}: ${status}, ${wall.at(-1)!.toFixed(0)} ms wall, ${cpu.at(-1)!.toFixed(0)} ms CPU`);
  }
  const mid = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
  return { name: ask.name, cpuMs: mid(cpu), wallMs: mid(wall), status, bytes };
}

async function main(): Promise<void> {
  const tmp = await mkdtemp(join(tmpdir(), 'worker-cpu-'));
  let worker: WorkerTarget | null = null;
  try {
    const assetsDir = values.assets ? resolve(values.assets) : join(tmp, 'assets');
    if (!values.assets) await prepareAssets({ snapshotPath: resolve(values.snapshot), publicDir: null, out: assetsDir });
    worker = await startWorker({ storage: 'assets', assetsDir, assetsReady: true, vars: { CURSOR_SECRET: BENCH_CURSOR_SECRET } });
    const pid = await workerdPid();
    console.log(`snapshot   ${resolve(values.snapshot)}`);
    console.log(`machine    ${cpus().length} cores, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}; CPU is of every workerd thread (an upper bound)`);
    // Warm: the manifest, the index's files and the record table, as an isolate that has been answering has them.
    // Each request's first run, in this order on a fresh isolate, is its cost when it reads its files.
    const first = new Map<string, Row>();
    for (const ask of asks()) first.set(ask.name, await measure(worker, pid, ask, 1));
    const rows: Row[] = [];
    for (const ask of asks()) rows.push({ ...(await measure(worker, pid, ask, runs)), first: first.get(ask.name)! });
    if (values['whole-export'] === 'yes') {
      rows.push(await measure(worker, pid, { name: 'whole export, every record, CSV', request: () => ({ path: '/v1/export?format=csv', init: { method: 'GET' } }) }, 1));
    }
    console.log('\n| request | CPU ms (median) | wall ms | first in the isolate: CPU ms, wall ms | status | bytes | within 10 ms (free) | within 30 s (paid default) |');
    console.log('|---|---|---|---|---|---|---|---|');
    for (const r of rows) {
      const cold = r.first ? `${r.first.cpuMs.toFixed(1)}, ${r.first.wallMs.toFixed(1)}` : 'n/a';
      console.log(`| ${r.name} | ${r.cpuMs.toFixed(1)} | ${r.wallMs.toFixed(1)} | ${cold} | ${r.status} | ${r.bytes.toLocaleString('en-US')} | ${r.cpuMs <= 10 ? 'yes' : 'no'} | ${r.cpuMs <= 30_000 ? 'yes' : 'no'} |`);
    }
  } finally {
    await worker?.close();
    await rm(tmp, { recursive: true, force: true });
  }
}

await main();
