/**
 * The search index's memory on Node, one kind of search at a time: the process's RSS, heap and typed arrays after
 * opening a snapshot, then after the first search of each kind (each loads what it needs of the index), and how long
 * each first search took. Run it under older code over an older snapshot for a side-by-side comparison.
 *
 *   node --expose-gc --import tsx bench/index-memory.ts --snapshot PATH [--queries 600]
 *
 * Then a run of plain and extended searches from the snapshot's own records (bench/lib/queries.ts), each with its
 * page's records read through the byte cache, and the process's peak RSS (VmHWM) over everything.
 *
 * A script, not a test: it prints figures and asserts nothing.
 */
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { prepareSearch, search } from '../src/operations/search.ts';
import { openSnapshotDirectory } from '../src/node/index.ts';
import { parseCommandLine } from '../src/cli/args.ts';
import { makeExtendedQueries, makeQueries, sampleRecords } from './lib/queries.ts';

const USAGE = `Usage: node --expose-gc --import tsx bench/index-memory.ts [--snapshot PATH] [--queries N]

The search index's memory on Node, one kind of search at a time (RSS, heap, typed arrays), then a run of plain and
extended searches and the process's peak RSS. Prints figures; asserts nothing.

  --snapshot PATH   the snapshot to open (default snapshot)
  --queries N       searches in the run (default 600)`;
const values = parseCommandLine('index-memory', USAGE, { snapshot: { type: 'string', default: 'snapshot' }, queries: { type: 'string', default: '600' } });
const mib = (n: number) => `${(n / 1024 / 1024).toFixed(0).padStart(4)} MiB`;
const report = (what: string, ms?: number) => {
  global.gc?.();
  const m = process.memoryUsage();
  const time = ms === undefined ? '' : `${ms.toFixed(0).padStart(6)} ms; `;
  console.log(`${what.padEnd(26)} ${time}rss ${mib(m.rss)}, heap ${mib(m.heapUsed)}, typed arrays ${mib(m.arrayBuffers)}`);
};

console.log(`load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
report('start');
const snapshot = await openSnapshotDirectory(values.snapshot);
report('snapshot open');
const ctx = { snapshot, servedAt: new Date(), cursors: null as never };
const input = (query: string, more: Record<string, unknown> = {}) => ({ query, applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10, ...more });
for (const [name, req] of [
  ['first plain search', input('catheter')],
  ['then a phrase', input('"wound dressing"')],
  ['then qualifiers', input('panel:cardio decided:2015..2020 thirdparty:no')],
  ['then a sort and facets', input('stent', { sort: 'reviewDays:desc', facets: [{ field: 'countryCode', size: 5, order: 'count' }], stats: true })],
] as const) {
  const t0 = performance.now();
  const out = await search(req as never, ctx as never);
  report(`${name} (${out.page?.total})`, performance.now() - t0);
}

const records = await sampleRecords(values.snapshot, 40);
const n = Number(values.queries);
const queries = [...makeQueries(records, n, 510), ...makeExtendedQueries(records, Math.round(n / 2), 510)];
const t0 = performance.now();
let failed = 0;
for (const q of queries) await search(prepareSearch(q.input), ctx as never).catch(() => failed++);
report(`${queries.length} searches (${failed} failed)`, performance.now() - t0);
const status = await readFile('/proc/self/status', 'utf8');
const ops: Record<string, unknown> = await import('../src/operations/search.ts');
const sectionBytes = typeof ops.searchIndexBytes === 'function' ? await (ops.searchIndexBytes as (s: unknown) => Promise<number>)(snapshot) : null;
if (sectionBytes !== null) console.log(`index sections loaded: ${mib(sectionBytes)}`);
console.log(`peak rss ${Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)?.[1]) / 1024)} MiB; byte cache ${mib(snapshot.cachedBytes)}`);
