/**
 * The Worker from a cold start over one built snapshot: for a fresh workerd each run, the time to listening and the
 * own time of its first meta, detail, search and all-facet search, workerd's RSS and the isolate's memory (V8 heap
 * plus ArrayBuffers) after each; then warm search throughput (after every query of the load was answered once) of
 * the Worker over the chunked index against the same
 * Worker reading the whole index (SEARCH_INDEX=whole), side by side in one run; and the bytes each kind of request
 * reads from the snapshot's storage, counted in-process through the same operations the Worker runs.
 *
 *   npx tsx bench/worker-start.ts --snapshot DIR [--runs 2] [--seconds 5] [--connections 8] [--budget BYTES] [--answer-cache BYTES] [--assets DIR]
 *     [--steps search|openfda] [--modes chunks,whole] [--profile PREFIX]
 *
 * Each run is two fresh starts: one times the requests and reads workerd's resident memory after each, touching
 * nothing else; the other reads the isolate's memory after each through the inspector (a heap snapshot, which
 * itself grows workerd's resident memory, so the two are never read in the same start).
 *
 * A script, not a test: it prints figures and asserts nothing about time.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { prepareAssets } from '../build/worker/assets.ts';
import { startWorker } from '../build/worker/local.ts';
import { parseCommandLine } from '../src/cli/args.ts';
import { FACET_FIELDS, type SearchInput } from '../src/contract/index.ts';
import { FACET_VALUES_MAX } from '../src/contract/operations.ts';
import { NodeStorage } from '../src/node/files.ts';
import { CursorCodec } from '../src/operations/cursor.ts';
import { detail } from '../src/operations/detail.ts';
import { meta } from '../src/operations/meta.ts';
import { answerOpenFda } from '../src/openfda/answer.ts';
import { prepareSearch, search, searchFromChunks } from '../src/operations/search.ts';
import type { OperationContext } from '../src/operations/types.ts';
import { ChunkCache } from '../src/search/chunk-cache.ts';
import { DEFAULT_WORKER_SEARCH_CACHE_BYTES } from '../src/worker/service.ts';
import { Snapshot } from '../src/snapshot/index.ts';
import { freePort, memoryOf, processRunMs } from './lib/procs.ts';
import { makeQueries, sampleRecords } from './lib/queries.ts';
import { heapOf, inspect, workerdPid, type IsolateMemory } from './lib/worker.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const USAGE = `Usage: npx tsx bench/worker-start.ts --snapshot DIR [--runs N] [--seconds N] [--connections N] [--budget BYTES] [--answer-cache BYTES] [--assets DIR | --keep-assets DIR] [--steps search|openfda] [--modes LIST] [--profile PREFIX]

The Worker from a cold start (fresh workerd each run): time to listening, first meta, detail, search and all-facet
search, with workerd's RSS and the isolate's memory after each; warm search throughput over the chunked index
against the whole index in one run; bytes read per kind of request. Prints figures; asserts nothing about time.

  --snapshot DIR     the snapshot (only read; its files are copied into a temporary assets folder)
  --runs N           fresh starts per way of reading the index (default 2; 0: only the bytes read)
  --seconds N        seconds of warm search load per side (default 5; 0: no warm load)
  --connections N    concurrent requests of the warm load (default 8)
  --budget BYTES     the Worker's SEARCH_CACHE_BYTES (default: the Worker's own)
  --answer-cache BYTES  the Worker's ANSWER_CACHE_BYTES (default: the Worker's own); 0 runs every warm search, where
                     the default may answer a small snapshot's whole warm load from its answer cache
  --assets DIR       an assets folder already filled from the snapshot (npm run worker's dist/worker-assets, or
                     one an earlier run kept with --keep-assets); default: a fresh temporary copy
  --keep-assets DIR  fill DIR with the assets and keep it (for later runs' --assets)
  --steps openfda    the first requests are openFDA's instead: meta, a search (device_name:catheter), a count over a
                     broad search (count=product_code), a count of every word (count=device_name) and a lookup of
                     one K number; the bytes read are those of the same requests (default search)
  --modes LIST       the ways of reading the index to start, of chunks and whole (default chunks,whole)
  --profile PREFIX   write V8's profile of our isolate over each mode's timed warm load to PREFIX.<mode>.cpuprofile
                     (sampled through workerd's inspector, which slows the load: the answers/s of such a run are not
                     the figures)`;
const values = parseCommandLine('worker-start', USAGE, {
  snapshot: { type: 'string', default: 'snapshot' },
  runs: { type: 'string', default: '2' },
  seconds: { type: 'string', default: '5' },
  connections: { type: 'string', default: '8' },
  budget: { type: 'string' },
  'answer-cache': { type: 'string' },
  assets: { type: 'string' },
  'keep-assets': { type: 'string' },
  steps: { type: 'string', default: 'search' },
  modes: { type: 'string', default: 'chunks,whole' },
  profile: { type: 'string' },
});
if (!['search', 'openfda'].includes(values.steps)) {
  console.error(`worker-start: --steps takes search or openfda, not "${values.steps}"`);
  process.exit(2);
}
const modes = values.modes.split(',').map((m) => m.trim());
if (modes.length === 0 || modes.some((m) => m !== 'chunks' && m !== 'whole')) {
  console.error(`worker-start: --modes takes chunks, whole or both (comma-separated), not "${values.modes}"`);
  process.exit(2);
}
const dir = resolve(values.snapshot);
const MiB = 1024 * 1024;
const budget = values.budget !== undefined ? Number(values.budget) : DEFAULT_WORKER_SEARCH_CACHE_BYTES;
const load = () => loadavg()[0]!.toFixed(1);
const mib = (n: number) => (n / MiB).toFixed(1);
/**
 * The isolate after a collection, and before it (with its garbage); said when the chunked index's isolate is over
 * SEARCH_CACHE_BYTES, its budget (the whole index is read ahead, outside any budget).
 */
const isolate = (m: IsolateMemory | null, mode: string) =>
  m
    ? `${mib(m.usedBytes + m.arrayBufferBytes)} MiB (heap ${mib(m.usedBytes)}, ArrayBuffers ${mib(m.arrayBufferBytes)}; before the collection ${mib(m.uncollected.usedBytes + m.uncollected.arrayBufferBytes)} MiB)${mode === 'chunks' && m.usedBytes + m.arrayBufferBytes > budget ? ', OVER the budget' : ''}`
    : 'n/a';

const records = await sampleRecords(dir, 200);
const queries = makeQueries(records, 200, 510);
const BASE: SearchInput = { query: '', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10 };
const typical: SearchInput = { ...BASE, query: 'catheter' };
// A snapshot built before predicates were indexed has no predicate facet (a 503 names it): every other field.
const directory = JSON.parse(await readFile(join(dir, 'search/chunks.json'), 'utf8').catch(() => '{}')) as { predicates?: unknown };
const fields = FACET_FIELDS.filter((f) => f !== 'predicate' || directory.predicates !== undefined);
// Every value of every field, but the predicate facet, whose values over a broad query pass the bound on one facet's
// list (FACET_VALUES_MAX): its most cited devices up to that bound.
const allFacets: SearchInput = { ...BASE, query: 'system', facets: fields.map((field) => ({ field, size: field === 'predicate' ? FACET_VALUES_MAX : null, order: 'count' as const })) };
const body = (operation: string, input: unknown) => JSON.stringify({ version: 1, operation: `device-510k.${operation}`, input });
/** openFDA's requests of `--steps openfda`, as GET paths. */
const OPENFDA_STEPS: [string, string][] = [
  ['openFDA search', '/device/510k.json?search=device_name:catheter&limit=10'],
  ['openFDA count over a broad search', '/device/510k.json?search=decision_date:[19000101+TO+20991231]&count=product_code&limit=100'],
  ['openFDA count of every word', '/device/510k.json?count=device_name&limit=100'],
  ['openFDA one K number', `/device/510k.json?search=k_number:${records[2]!.kNumber}`],
];
const steps: { name: string; body: string }[] =
  values.steps === 'openfda'
    ? [{ name: 'meta', body: body('meta', {}) }, ...OPENFDA_STEPS.map(([name, path]) => ({ name, body: `GET ${path}` }))]
    : [
        { name: 'meta', body: body('meta', {}) },
        { name: 'detail', body: body('detail', { id: records[0]!.kNumber }) },
        { name: 'search', body: body('search', typical) },
        { name: 'all-facet search', body: body('search', allFacets) },
      ];

/** Posts a query's body to /v1/query, or GETs `GET <path>`; anything but 200 stops the bench. */
async function post(url: string, text: string): Promise<void> {
  const res = text.startsWith('GET ') ? await fetch(`${url}${text.slice(4)}`) : await fetch(`${url}/v1/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text });
  const answer = await res.text();
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${answer.slice(0, 200)}`);
}

/** Answers a second over `seconds`, `connections` requests at a time, cycling through the queries. */
async function throughput(url: string, seconds: number, connections: number): Promise<{ rate: number; answers: number }> {
  const bodies = queries.map((q) => body('search', q.input));
  let next = 0;
  let done = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end) {
        await post(url, bodies[next++ % bodies.length]!);
        done++;
      }
    }),
  );
  return { rate: done / seconds, answers: done };
}

/** Every query of the load once, `connections` at a time. */
async function warmUp(url: string, connections: number): Promise<void> {
  const bodies = queries.map((q) => body('search', q.input));
  let next = 0;
  await Promise.all(Array.from({ length: connections }, async () => {
    while (next < bodies.length) await post(url, bodies[next++]!);
  }));
}

const tmp = await mkdtemp(join(tmpdir(), 'device-510k-worker-start-'));
try {
  const assetsDir = values.assets ? resolve(values.assets) : values['keep-assets'] ? resolve(values['keep-assets']) : join(tmp, 'assets');
  const copyStart = performance.now();
  if (!values.assets) await prepareAssets({ snapshotPath: dir, publicDir: join(ROOT, 'public'), out: assetsDir });
  const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as { counts: { records: number } };
  const copied = values.assets ? `assets of ${assetsDir} as they are` : `assets copied in ${((performance.now() - copyStart) / 1000).toFixed(1)} s`;
  console.log(`${manifest.counts.records.toLocaleString('en-US')} records; ${copied}; all-facet search over ${fields.length} fields; load ${load()}\n`);

  const warm: Record<string, number> = {};
  const cpuPerAnswer: Record<string, number> = {};
  for (const mode of modes) {
    for (let run = 1; run <= Number(values.runs); run++) {
      const vars: Record<string, string> = {
        SEARCH_INDEX: mode,
        ...(values.budget ? { SEARCH_CACHE_BYTES: values.budget } : {}),
        ...(values['answer-cache'] ? { ANSWER_CACHE_BYTES: values['answer-cache'] } : {}),
      };
      // The isolate's memory after each first request, in a start of its own (see the head of this file).
      const heaps: (IsolateMemory | null)[] = [];
      const inspectorPort = await freePort();
      const probed = await startWorker({ storage: 'assets', assetsDir, assetsReady: true, inspectorPort, vars });
      try {
        for (const step of steps) {
          await post(probed.url, step.body);
          heaps.push(await heapOf(inspectorPort, console.log));
        }
      } finally {
        await probed.close();
      }
      const t0 = performance.now();
      const worker = await startWorker({ storage: 'assets', assetsDir, assetsReady: true, inspectorPort, vars });
      try {
        const listening = performance.now() - t0;
        const pid = await workerdPid();
        console.log(`${mode} run ${run}: listening after ${listening.toFixed(0)} ms, RSS ${mib(memoryOf(pid)?.rss ?? NaN)} MiB (load ${load()})`);
        for (const [i, step] of steps.entries()) {
          const t = performance.now();
          await post(worker.url, step.body);
          const own = performance.now() - t;
          const rss = memoryOf(pid)?.rss ?? NaN;
          console.log(`  first ${step.name}: own ${own.toFixed(0)} ms, since start ${(performance.now() - t0).toFixed(0)} ms; workerd RSS ${mib(rss)} MiB; isolate (another start) ${isolate(heaps[i] ?? null, mode)} (load ${load()})`);
        }
        if (run === 1 && Number(values.seconds) > 0) {
          // Warm: every query of the load answered once, so that the chunked index holds what the load reads (as far
          // as its budget allows) as the whole index does after its first search.
          await warmUp(worker.url, Number(values.connections));
          const profiler = values.profile ? await inspect(inspectorPort) : null;
          if (profiler) {
            await profiler.send('Profiler.enable');
            await profiler.send('Profiler.setSamplingInterval', { interval: 100 });
            await profiler.send('Profiler.start');
          }
          // workerd's CPU per answer (all its threads): what an answer costs the Worker, apart from the load client
          // and the machine's other work, which share the cores and move answers/s.
          const cpu0 = processRunMs(pid);
          const { rate, answers } = await throughput(worker.url, Number(values.seconds), Number(values.connections));
          const cpu1 = processRunMs(pid);
          warm[mode] = rate;
          if (profiler) {
            const { profile } = (await profiler.send('Profiler.stop', {}, 60_000)) as { profile: unknown };
            await writeFile(`${values.profile}.${mode}.cpuprofile`, JSON.stringify(profile));
            profiler.close();
          }
          if (cpu0 !== null && cpu1 !== null) cpuPerAnswer[mode] = (cpu1 - cpu0) / answers;
          const after = await heapOf(inspectorPort, console.log);
          console.log(`  warm search: ${rate.toFixed(1)} answers/s at ${values.connections} at a time; workerd CPU ${cpuPerAnswer[mode]?.toFixed(2) ?? 'n/a'} ms an answer; RSS ${mib(memoryOf(pid)?.rss ?? NaN)} MiB; isolate ${isolate(after, mode)} (load ${load()})`);
          // The isolate after the warm load against its budget (SEARCH_CACHE_BYTES bounds the isolate: its own heap
          // and its caches), and what the search added: less its memory after the first detail (which reads no search file).
          const base = heaps[steps.findIndex((s) => s.name === 'detail')];
          if (mode === 'chunks' && after && base) {
            const total = after.usedBytes + after.arrayBufferBytes;
            const added = total - base.usedBytes - base.arrayBufferBytes;
            console.log(`  isolate after the warm load ${mib(total)} MiB, ${total <= budget ? 'within' : 'OVER'} its budget of ${mib(budget)} MiB; after the first detail ${mib(base.usedBytes + base.arrayBufferBytes)} MiB (another start): the search added ${mib(added)} MiB`);
          }
        }
      } finally {
        await worker.close();
      }
    }
  }
  if (warm.chunks !== undefined && warm.whole !== undefined) {
    // The order moves this ratio more than the index does (the Worker loaded first measured slower on a quiet machine,
    // whichever it was): bench/worker-warm-ab.ts loads both in turns for the comparison.
    console.log(`\nWarm search, chunked index / whole index: ${(warm.chunks / warm.whole).toFixed(2)} (${warm.chunks.toFixed(1)} vs ${warm.whole.toFixed(1)} answers/s, one after the other in this run, ${modes.join(' first, then ')}: compare in turns with bench/worker-warm-ab.ts)`);
    if (cpuPerAnswer.chunks !== undefined && cpuPerAnswer.whole !== undefined) {
      console.log(`workerd CPU an answer, whole index / chunked index: ${(cpuPerAnswer.whole / cpuPerAnswer.chunks).toFixed(2)} (${cpuPerAnswer.chunks.toFixed(2)} vs ${cpuPerAnswer.whole.toFixed(2)} ms)`);
    }
    console.log('');
  }

  // Bytes read per kind of request, in-process: the operations the Worker runs, over the snapshot's files.
  const reads: { path: string; bytes: number }[] = [];
  const storage = new Proxy(new NodeStorage(dir), {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function') return value;
      if (!String(key).startsWith('read')) return (value as (...a: unknown[]) => unknown).bind(target);
      return async (...args: unknown[]) => {
        const out = (await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args)) as unknown;
        if (typeof args[0] === 'string' && String(key).startsWith('read')) reads.push({ path: args[0], bytes: out instanceof Uint8Array ? out.byteLength : typeof out === 'number' ? out : 0 });
        return out;
      };
    },
  });
  const snapshot = await Snapshot.fromStorage(storage, await readFile(join(dir, 'manifest.json')));
  const cache = new ChunkCache(budget);
  await searchFromChunks(snapshot, cache);
  const sum = (filter: (p: string) => boolean) => reads.filter((r) => filter(r.path)).reduce((n, r) => n + r.bytes, 0);
  const searchFile = (p: string) => p.startsWith('search/');
  console.log(`start (manifest aside): ${mib(sum(() => true))} MiB read, of which search ${mib(sum(searchFile))} MiB`);
  const ctx: OperationContext = { snapshot, servedAt: new Date(), cursors: new CursorCodec('b'.repeat(32)) };
  const openFda = (path: string) => () => answerOpenFda({ now: () => new Date(), sourceState: () => ({}) as never }, snapshot, '510k', new URL(`http://bench${path}`));
  const kinds: [string, () => Promise<unknown>][] = values.steps === 'openfda' ? [['meta', async () => meta({}, ctx)], ...OPENFDA_STEPS.map(([name, path]): [string, () => Promise<unknown>] => [name, openFda(path)]), ['openFDA search again', openFda(OPENFDA_STEPS[0]![1].replace('limit=10', 'limit=11'))]] : [
    ['meta', async () => meta({}, ctx)],
    ['detail', () => detail({ id: records[1]!.kNumber }, ctx)],
    ['search', () => search(prepareSearch(typical), ctx)],
    ['search again', () => search(prepareSearch(typical), ctx)],
    ['all-facet search', () => search(prepareSearch(allFacets), ctx)],
    ['another search', () => search(prepareSearch({ ...typical, query: 'pump' }), ctx)],
  ];
  for (const [name, run] of kinds) {
    reads.length = 0;
    await run();
    console.log(`${name}: ${reads.length} reads, ${(sum(() => true) / 1024).toFixed(0)} KiB, of which search files ${reads.filter((r) => searchFile(r.path)).length} (${(sum(searchFile) / 1024).toFixed(0)} KiB); chunk cache after it ${mib(cache.bytes)} MiB`);
  }
} finally {
  await rm(tmp, { recursive: true, force: true });
}
