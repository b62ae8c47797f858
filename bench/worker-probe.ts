/**
 * The Worker under workerd over a built snapshot (as static assets): its first answer after start, the workerd
 * process's memory before and after each kind of request, and CPU time per request (the process's user + system
 * time over a run of sequential requests, divided by their number; it includes workerd's HTTP handling and
 * Miniflare's entry Worker in front of ours, so it overstates what the platform bills).
 *
 *   npx tsx bench/worker-probe.ts --snapshot /path/to/snapshot [--requests 300] [--storage assets|r2]
 *
 * Local static assets (Miniflare) answer every Range request with the whole file, so each range read there moves a
 * whole 8 MiB index part through workerd (its RSS then overstates what the isolate holds); `--storage r2` reads
 * true ranges.
 *
 * A script, not a test: it prints figures and asserts nothing about time.
 */
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { Miniflare } from 'miniflare';
import { prepareAssets } from '../build/worker/assets.ts';
import { bundleWorker } from '../build/worker/bundle.ts';
import { startWorker } from '../build/worker/local.ts';
import { LAYOUT, ShardIndex } from '../src/contract/index.ts';

const { values } = parseArgs({
  options: { snapshot: { type: 'string', default: 'snapshot' }, requests: { type: 'string', default: '300' }, storage: { type: 'string', default: 'assets' } },
});
if (values.storage !== 'assets' && values.storage !== 'r2') throw new Error('--storage must be assets or r2');
const snapshotPath = values.snapshot;
const n = Number(values.requests);
const TICK_MS = 10; // USER_HZ is 100 on Linux

async function workerdPid(): Promise<number> {
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    const [, comm, rest] = /^\d+ \((.*?)\) (.*)$/.exec(stat.trim()) ?? [];
    if (comm?.startsWith('workerd') && Number(rest?.split(' ')[1]) === process.pid) return Number(name);
  }
  throw new Error('no workerd child process');
}
const cpuMs = async (pid: number) => {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
};
const rssMb = async (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;

const bundle = await bundleWorker();
console.log(`bundle: ${(bundle.bytes / 1024).toFixed(0)} KiB, ${(bundle.gzipBytes / 1024).toFixed(0)} KiB gzip (minified, esbuild)`);

const index = ShardIndex.parse(JSON.parse(await readFile(join(snapshotPath, LAYOUT.recordIndex), 'utf8')));
const kNumbers = index.shards.flatMap((s) => [s.first, s.last]);
const words = ['catheter', 'pacemaker', 'implant', 'system', 'monitor', 'stent', 'wound dressing', 'glucose', 'knee', 'laser'];

const started = Date.now();
const vars = { SHARD_CACHE_BYTES: String(16 * 1024 * 1024) };
// With a WebSocket (node --experimental-websocket), the Worker runs with an inspector, to ask V8 what our isolate
// holds: its JS heap and its ArrayBuffers' backing stores, the memory the platform's 128 MB limit counts.
const inspectorPort = typeof WebSocket === 'function' && values.storage === 'assets' ? 9000 + (process.pid % 1000) : null;
const worker =
  inspectorPort === null
    ? await startWorker({ storage: values.storage, snapshotPath, vars })
    : await (async () => {
        const assets = await prepareAssets({ snapshotPath, publicDir: null, out: join(await mkdtemp(join(tmpdir(), 'probe-assets-')), 'a') });
        const mf = new Miniflare({
          modules: true,
          script: (await bundleWorker({ minify: false })).code,
          compatibilityDate: '2025-09-01',
          host: '127.0.0.1',
          port: 0,
          bindings: vars,
          inspectorPort,
          assets: { directory: assets, binding: 'ASSETS', routerConfig: { has_user_worker: true } },
        });
        const url = (await mf.ready).toString().replace(/\/$/, '');
        return { url, close: () => mf.dispose() };
      })();
const ready = Date.now();

/** Our isolate's JS heap and ArrayBuffer backing stores (Runtime.getHeapUsage), after a collection. */
let inspector: Promise<WebSocket | null> | null = null;
let calls = 0;
function connect(): Promise<WebSocket | null> {
  return (inspector ??= (async () => {
    const targets = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json()) as { webSocketDebuggerUrl: string; title?: string }[];
    const ours = targets.find((t) => t.title?.includes('core:user'));
    if (!ours) return null;
    const ws = new WebSocket(ours.webSocketDebuggerUrl);
    return new Promise<WebSocket | null>((resolve) => {
      ws.onopen = () => resolve(ws);
      ws.onerror = () => resolve(null);
    });
  })());
}
async function isolateMb(): Promise<string> {
  if (inspectorPort === null) return '';
  const ws = await connect();
  if (!ws) return '; isolate: no inspector target';
  const call = (method: string) =>
    new Promise<Record<string, number>>((resolve) => {
      const id = ++calls;
      const timer = setTimeout(() => resolve({}), 10_000);
      ws.onmessage = (e) => {
        const m = JSON.parse(String(e.data)) as { id?: number; result?: Record<string, number> };
        if (m.id === id) {
          clearTimeout(timer);
          resolve(m.result ?? {});
        }
      };
      ws.send(JSON.stringify({ id, method }));
    });
  // ArrayBuffers of dead objects are freed by a sweeper after the collection: collect twice, a moment apart.
  await call('HeapProfiler.collectGarbage');
  await new Promise((r) => setTimeout(r, 500));
  await call('HeapProfiler.collectGarbage');
  const u = await call('Runtime.getHeapUsage');
  const mb = (n: number | undefined) => ((n ?? 0) / 1024 / 1024).toFixed(0);
  return `; isolate heap ${mb(u.usedSize)} MB + ArrayBuffers ${mb(u.backingStorageSize)} MB`;
}
const pid = await workerdPid();
const idle = await rssMb(pid);
const post = async (operation: string, input: unknown) => {
  const res = await fetch(`${worker.url}/v1/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ version: 1, operation, input }) });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${operation}: ${res.status} ${text.slice(0, 200)}`);
  return text;
};
await post('device-510k.meta', {});
const first = Date.now();
console.log(`workerd up in ${ready - started} ms (copying the assets included), first answer ${first - ready} ms after; RSS idle ${idle.toFixed(0)} MB, after first answer ${(await rssMb(pid)).toFixed(0)} MB${await isolateMb()}`);

// The search index's cost, one kind of search at a time: each first search loads what it needs of the index.
const searchInput = (query: string, more: Record<string, unknown> = {}) => ({ query, applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10, ...more });
for (const [name, input] of [
  ['first plain search', searchInput('catheter')],
  ['then a phrase', searchInput('"wound dressing"')],
  ['then qualifiers', searchInput('panel:cardio decided:2015..2020 thirdparty:no')],
  ['then a sort and facets', searchInput('stent', { sort: 'reviewDays:desc', facets: [{ field: 'countryCode', size: 5, order: 'count' }], stats: true })],
] as const) {
  const t0 = Date.now();
  await post('device-510k.search', input);
  const ms = Date.now() - t0;
  console.log(`${name.padEnd(24)} ${String(ms).padStart(6)} ms; RSS ${(await rssMb(pid)).toFixed(0)} MB${await isolateMb()}`);
}

const kinds: [string, (i: number) => [string, unknown]][] = [
  ['meta', () => ['device-510k.meta', {}]],
  ['detail', (i) => ['device-510k.detail', { id: kNumbers[(i * 7919) % kNumbers.length] }]],
  ['catalog', () => ['device-510k.catalog', { kind: 'clearance', limit: 100, cursor: null }]],
  ['search', (i) => ['device-510k.search', { query: words[i % words.length], applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10 }]],
];
for (const [name, make] of kinds) {
  const [op0, in0] = make(0);
  const warm0 = Date.now();
  await post(op0, in0);
  const firstMs = Date.now() - warm0;
  const cpu0 = await cpuMs(pid);
  const t0 = Date.now();
  for (let i = 1; i <= n; i++) {
    const [op, input] = make(i);
    await post(op, input);
  }
  const wall = Date.now() - t0;
  const cpu = (await cpuMs(pid)) - cpu0;
  console.log(
    `${name.padEnd(8)} first ${firstMs} ms; ${n} sequential: ${(wall / n).toFixed(2)} ms wall, ${(cpu / n).toFixed(2)} ms workerd CPU per request; RSS ${(await rssMb(pid)).toFixed(0)} MB`,
  );
}
console.log(`gzip of one search answer: ${gzipSync(await post('device-510k.search', { query: 'catheter', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10 })).length} bytes`);
(await (inspector as Promise<WebSocket | null> | null))?.close();
await worker.close();
