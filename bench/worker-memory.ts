/**
 * Where a Worker isolate's memory goes, in-process: the Worker's own service (src/worker/service.ts, its caches and
 * budget) over a snapshot folder served as its static assets, through the requests of bench/worker-start.ts (meta,
 * detail, search, all-facet search, then every query of its warm load once and `--seconds` of that load, 8 at a time).
 * After each, V8's heap and ArrayBuffers before and after full collections, beside what the budget counts: the search
 * files and, within the same budget, the record caches (shards, record table, read buffers) and the answers.
 *
 *   npx tsx bench/worker-memory.ts --snapshot DIR [--seconds 5] [--budget BYTES]
 *
 * Node's V8, not workerd's: the same code and the same caches, so the split holds where workerd's inspector gives only
 * the total (bench/worker-start.ts). A script, not a test: it prints figures and asserts nothing.
 */
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { answerQuery } from '../src/api/query-answer.ts';
import { parseCommandLine } from '../src/cli/args.ts';
import { FACET_FIELDS } from '../src/contract/index.ts';
import { FACET_VALUES_MAX } from '../src/contract/operations.ts';
import { createService, ISOLATE_HEAP_BYTES } from '../src/worker/service.ts';
import { chunkedIndexOf } from '../src/operations/search.ts';
import { makeQueries, sampleRecords } from './lib/queries.ts';

const USAGE = `Usage: npx tsx bench/worker-memory.ts --snapshot DIR [--seconds N] [--budget BYTES]

Where a Worker isolate's memory goes, in-process, after each of worker-start.ts's first requests and its warm load.

  --snapshot DIR   the snapshot (only read)
  --seconds N      seconds of warm search load after every query of it was answered once (default 5; 0: none)
  --budget BYTES   the Worker's SEARCH_CACHE_BYTES (default: the Worker's own)`;
const values = parseCommandLine('worker-memory', USAGE, {
  snapshot: { type: 'string', default: 'snapshot' },
  seconds: { type: 'string', default: '5' },
  budget: { type: 'string' },
});
const dir = resolve(values.snapshot);
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const MiB = 1024 * 1024;
const mib = (n: number) => (n / MiB).toFixed(1);

/** The folder as a static assets binding: plain GETs, a Range header for a record. */
const ASSETS = {
  async fetch(request: Request): Promise<Response> {
    const path = decodeURIComponent(new URL(request.url).pathname.replace(/^\/snapshot\//, ''));
    const bytes = await readFile(join(dir, path)).catch(() => null);
    if (!bytes) return new Response(null, { status: 404 });
    const range = /^bytes=(\d+)-(\d+)$/.exec(request.headers.get('range') ?? '');
    return range ? new Response(bytes.subarray(Number(range[1]), Number(range[2]) + 1), { status: 206 }) : new Response(bytes);
  },
};
const service = createService({ ASSETS, ...(values.budget === undefined ? {} : { SEARCH_CACHE_BYTES: values.budget }) });

async function post(text: string): Promise<void> {
  const snapshot = await service.watch.current(Date.now());
  const answer = await answerQuery(service.deps, snapshot, new TextEncoder().encode(text), 'application/json');
  service.settle();
  if (answer.status !== 200) throw new Error(`HTTP ${answer.status}: ${new TextDecoder().decode(answer.body).slice(0, 200)}`);
}

type Memory = { heap: number; arrayBuffers: number; uncollected: number };

/** V8's heap and ArrayBuffers now, then after full collections until two reads agree (at most 50). */
async function memory(): Promise<Memory> {
  const before = process.memoryUsage();
  let now = before;
  for (let round = 0, last = -1; round < 50 && now.arrayBuffers !== last; round++) {
    last = now.arrayBuffers;
    gc();
    await new Promise((ok) => setTimeout(ok, 0));
    now = process.memoryUsage();
  }
  return { heap: now.heapUsed, arrayBuffers: now.arrayBuffers, uncollected: before.heapUsed + before.arrayBuffers };
}

async function report(label: string): Promise<Memory> {
  const m = await memory();
  const snapshot = await service.watch.current(Date.now());
  const answers = snapshot ? (service.deps.answerCache?.weightFor(snapshot) ?? 0) : 0;
  const kept = snapshot?.keptBytes ?? 0;
  console.log(
    `${label}: V8 ${mib(m.heap + m.arrayBuffers)} MiB after collections (heap ${mib(m.heap)}, ArrayBuffers ${mib(m.arrayBuffers)}), ${mib(m.uncollected)} MiB before; ` +
      `budget counts ${mib(service.searchCache.bytes)} of ${mib(service.searchCache.budget)} MiB: the isolate's own heap ${mib(ISOLATE_HEAP_BYTES)}, search files ${mib(service.searchCache.bytes - ISOLATE_HEAP_BYTES - kept - answers)} (${service.searchCache.size}), ` +
      `records ${mib(kept)} (shards ${mib(snapshot?.cachedBytes ?? 0)}, table ${mib(snapshot?.tableBytes ?? 0)}), answers ${mib(answers)} (load ${loadavg()[0]!.toFixed(1)})`,
  );
  return m;
}

const records = await sampleRecords(dir, 200);
const queries = makeQueries(records, 200, 510);
const BASE = { query: '', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10 };
const directory = JSON.parse(await readFile(join(dir, 'search/chunks.json'), 'utf8').catch(() => '{}')) as { predicates?: unknown };
const fields = FACET_FIELDS.filter((f) => f !== 'predicate' || directory.predicates !== undefined);
const allFacets = { ...BASE, query: 'system', facets: fields.map((field) => ({ field, size: field === 'predicate' ? FACET_VALUES_MAX : null, order: 'count' })) };
const body = (operation: string, input: unknown) => JSON.stringify({ version: 1, operation: `device-510k.${operation}`, input });

await report('open');
const steps: [string, string][] = [
  ['meta', body('meta', {})],
  ['detail', body('detail', { id: records[0]!.kNumber })],
  ['search', body('search', { ...BASE, query: 'catheter' })],
  ['all-facet search', body('search', allFacets)],
];
let afterDetail: Memory | null = null;
for (const [name, text] of steps) {
  await post(text);
  const m = await report(`first ${name}`);
  if (name === 'detail') afterDetail = m;
}
const seconds = Number(values.seconds);
if (seconds > 0) {
  const bodies = queries.map((q) => body('search', q.input));
  let next = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next < bodies.length) await post(bodies[next++]!);
  }));
  const snapshot = await service.watch.current(Date.now());
  const chunked = snapshot ? await chunkedIndexOf(snapshot) : null;
  const madeBefore = chunked?.indexesMade ?? 0;
  let done = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (performance.now() < end) {
      await post(bodies[next++ % bodies.length]!);
      done++;
    }
  }));
  const after = await report(`warm load (${(done / seconds).toFixed(1)} answers/s${chunked ? `; indexes made over the search files while warm ${chunked.indexesMade - madeBefore}` : ''})`);
  if (afterDetail) console.log(`added since the first detail: ${mib(after.heap + after.arrayBuffers - afterDetail.heap - afterDetail.arrayBuffers)} MiB after collections, against a budget of ${mib(service.searchCache.budget)} MiB`);
}
