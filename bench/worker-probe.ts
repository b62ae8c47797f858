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
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
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
const worker = await startWorker({ storage: values.storage, snapshotPath, vars: { SHARD_CACHE_BYTES: String(16 * 1024 * 1024) } });
const ready = Date.now();
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
console.log(`workerd up in ${ready - started} ms (copying the assets included), first answer ${first - ready} ms after; RSS idle ${idle.toFixed(0)} MB, after first answer ${(await rssMb(pid)).toFixed(0)} MB`);

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
  console.log(`${name.padEnd(24)} ${String(Date.now() - t0).padStart(6)} ms; RSS ${(await rssMb(pid)).toFixed(0)} MB`);
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
await worker.close();
