/**
 * Warm search over the chunked index in-process (the engine a Worker runs, under the Worker's cache budget) against
 * the whole index, side by side in one run, with what the chunk cache holds, how often it read files again and how
 * many indexes it made over them while warm. For profiling the engine without workerd: `--profile PREFIX` writes V8's
 * profile of each side's timed seconds to PREFIX.chunks.cpuprofile and PREFIX.whole.cpuprofile.
 *
 *   npx tsx bench/chunked-warm.ts --snapshot DIR [--budget BYTES] [--seconds 5] [--connections 8] [--only chunks|whole] [--profile PREFIX]
 *
 * A script, not a test: it prints figures and asserts nothing about time.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseCommandLine } from '../src/cli/args.ts';
import { NodeStorage } from '../src/node/files.ts';
import { CursorCodec } from '../src/operations/cursor.ts';
import { chunkedIndexOf, prepareSearch, search, searchFromChunks, type PreparedSearch } from '../src/operations/search.ts';
import { FACET_FIELDS, type SearchInput } from '../src/contract/index.ts';
import type { OperationContext } from '../src/operations/types.ts';
import { Snapshot } from '../src/snapshot/index.ts';
import { makeQueries, sampleRecords } from './lib/queries.ts';

const USAGE = `Usage: npx tsx bench/chunked-warm.ts --snapshot DIR [--budget BYTES] [--seconds N] [--connections N] [--only chunks|whole] [--profile PREFIX] [--first-all-facets]`;
const values = parseCommandLine('chunked-warm', USAGE, {
  snapshot: { type: 'string', default: 'snapshot' },
  budget: { type: 'string' },
  seconds: { type: 'string', default: '5' },
  connections: { type: 'string', default: '8' },
  only: { type: 'string' },
  profile: { type: 'string' },
  'first-all-facets': { type: 'boolean', default: false },
});
const dir = resolve(values.snapshot);
const MiB = 1024 * 1024;
const records = await sampleRecords(dir, 200);
const queries = makeQueries(records, 200, 510).map((q) => prepareSearch(q.input));
const manifest = await readFile(join(dir, 'manifest.json'));

function firstRequests(): PreparedSearch[] {
  const base: SearchInput = { query: '', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10 };
  const facets = FACET_FIELDS.filter((f) => f !== 'predicate').map((field) => ({ field, size: null, order: 'count' as const }));
  return [prepareSearch({ ...base, query: 'catheter' }), prepareSearch({ ...base, query: 'system', facets })];
}

const cpuPerAnswer: Partial<Record<'chunks' | 'whole', number>> = {};

async function side(mode: 'chunks' | 'whole'): Promise<number> {
  const snapshot = await Snapshot.fromStorage(new NodeStorage(dir), manifest);
  const { DEFAULT_WORKER_SEARCH_CACHE_BYTES, isolateSearchCache } = await import('../src/worker/service.ts');
  // As a Worker's isolate makes it: its own heap counted first.
  const cache = isolateSearchCache(values.budget !== undefined ? Number(values.budget) : DEFAULT_WORKER_SEARCH_CACHE_BYTES);
  if (mode === 'chunks') await searchFromChunks(snapshot, cache);
  // Pauses as Node's turn queue gives them (setImmediate): the platform's default here, a zero timer, would wait a
  // millisecond at each pause and measure the timer rather than the engine.
  const pause = () => new Promise<void>((ok) => setImmediate(ok));
  const ctx: OperationContext = { snapshot, servedAt: new Date(), cursors: new CursorCodec('b'.repeat(32)), pause };
  const connections = Number(values.connections);
  let next = 0;
  const run = async (until: () => boolean) => {
    let done = 0;
    await Promise.all(Array.from({ length: connections }, async () => {
      while (until()) {
        await search(queries[next++ % queries.length]!, ctx);
        done++;
      }
    }));
    return done;
  };
  // The Worker bench's first requests before its warm load (bench/worker-start.ts): a search, then one counting
  // every facet over a broad query, which leaves the cache full of whole columns the warm load then displaces.
  if (values['first-all-facets']) for (const input of firstRequests()) await search(input, ctx);
  await run(() => next < queries.length);
  const chunked = await chunkedIndexOf(snapshot);
  const readsBefore = chunked?.reads ?? 0;
  const madeBefore = chunked?.indexesMade ?? 0;
  const evicted = new Map<string, number>();
  cache.watch((path) => {
    const kind = path.replace(/^search\/chunks\//, '').replace(/-.*/, '');
    evicted.set(kind, (evicted.get(kind) ?? 0) + 1);
  });
  const session = values.profile ? new Session() : null;
  const post = (method: string, params?: object) => new Promise<unknown>((ok, fail) => session!.post(method, params ?? {}, (err, out) => (err ? fail(err) : ok(out))));
  if (session) {
    session.connect();
    await post('Profiler.enable');
    await post('Profiler.start');
  }
  const end = performance.now() + Number(values.seconds) * 1000;
  // CPU time per answer (this process's, every thread): what an answer costs apart from the machine's other work,
  // which moves answers/s on a shared machine.
  const cpu0 = process.cpuUsage();
  const done = await run(() => performance.now() < end);
  const cpu = process.cpuUsage(cpu0);
  if (session) {
    const { profile } = (await post('Profiler.stop')) as { profile: unknown };
    await writeFile(`${values.profile}.${mode}.cpuprofile`, JSON.stringify(profile));
    session.disconnect();
  }
  const rate = done / Number(values.seconds);
  const heap = process.memoryUsage();
  cpuPerAnswer[mode] = (cpu.user + cpu.system) / done;
  console.log(`${mode}: ${rate.toFixed(1)} answers/s, CPU ${cpuPerAnswer[mode]!.toFixed(0)} µs an answer; ${chunked ? `files read again while warm ${chunked.reads - readsBefore}, indexes made while warm ${chunked.indexesMade - madeBefore}, cache ${(cache.bytes / MiB).toFixed(1)} MiB of ${(cache.budget / MiB).toFixed(1)}; ` : ''}heap ${(heap.heapUsed / MiB).toFixed(1)} MiB, ArrayBuffers ${(heap.arrayBuffers / MiB).toFixed(1)} MiB (load ${loadavg()[0]!.toFixed(1)})`);
  if (evicted.size > 0) console.log(`  let go of while warm: ${[...evicted].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${n}`).join(', ')}`);
  return rate;
}

const rates: Partial<Record<'chunks' | 'whole', number>> = {};
for (const mode of ['chunks', 'whole'] as const) if (!values.only || values.only === mode) rates[mode] = await side(mode);
if (rates.chunks !== undefined && rates.whole !== undefined) {
  console.log(`chunked / whole: ${(rates.chunks / rates.whole).toFixed(2)}; CPU an answer, whole / chunked: ${(cpuPerAnswer.whole! / cpuPerAnswer.chunks!).toFixed(2)}`);
}
