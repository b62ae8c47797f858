/**
 * Warm search of the Worker over the chunked index against the same Worker reading the whole index, both started and
 * warmed, then loaded in turn, a window each, round after round (the order flipped every round): the machine's other
 * work falls on both alike, where bench/worker-start.ts loads one after the other. Reports answers a second, workerd's
 * CPU an answer, and the ratio of the sums with the median and spread of the rounds' ratios.
 *
 *   npx tsx bench/worker-warm-ab.ts --assets DIR [--snapshot DIR] [--rounds 10] [--window-ms 1000] [--connections 8]
 *     [--budget BYTES] [--answer-cache BYTES] [--profile PREFIX]
 *
 * A script, not a test: it prints figures and asserts nothing about time.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { startWorker } from '../build/worker/local.ts';
import { parseCommandLine } from '../src/cli/args.ts';
import { FACET_FIELDS, type SearchInput } from '../src/contract/index.ts';
import { FACET_VALUES_MAX } from '../src/contract/operations.ts';
import { freePort, processRunMs } from './lib/procs.ts';
import { makeQueries, sampleRecords } from './lib/queries.ts';
import { inspect, type Cdp } from './lib/worker.ts';

const USAGE = `Usage: npx tsx bench/worker-warm-ab.ts --assets DIR [--snapshot DIR] [--rounds N] [--window-ms N] [--connections N] [--budget BYTES] [--answer-cache BYTES] [--profile PREFIX]

Warm search throughput of the Worker over the chunked index against the whole index, under workerd, both running and
loaded in turns (a window each, round after round), so that the machine's other work falls on both alike. Each is first
sent the first requests of bench/worker-start.ts (meta, detail, a search, an all-facet search) and every query of the
load once. Prints figures; asserts nothing about time.

  --assets DIR       an assets folder already filled from the snapshot (bench/worker-start.ts --keep-assets)
  --snapshot DIR     the snapshot the queries are sampled from (default: DIR/snapshot of --assets)
  --rounds N         rounds of one window per Worker (default 10)
  --window-ms N      milliseconds of load per window (default 1000)
  --connections N    concurrent requests of the load (default 8)
  --budget BYTES     the Workers' SEARCH_CACHE_BYTES (default: the Worker's own)
  --answer-cache BYTES  the Workers' ANSWER_CACHE_BYTES (default: the Worker's own, which may hold the whole load's
                     answers, so that no search runs; 0 runs every search)
  --profile PREFIX   write V8's profile of each isolate over the rounds to PREFIX.<mode>.cpuprofile (samples that
                     span the other Worker's windows are long gaps: drop them when reading the profile)`;
const values = parseCommandLine('worker-warm-ab', USAGE, {
  assets: { type: 'string' },
  snapshot: { type: 'string' },
  rounds: { type: 'string', default: '10' },
  'window-ms': { type: 'string', default: '1000' },
  connections: { type: 'string', default: '8' },
  budget: { type: 'string' },
  'answer-cache': { type: 'string' },
  profile: { type: 'string' },
});
if (!values.assets) {
  console.error('worker-warm-ab: --assets DIR is required (see --help)');
  process.exit(2);
}
const assetsDir = resolve(values.assets);
const dir = resolve(values.snapshot ?? join(assetsDir, 'snapshot'));
const rounds = Number(values.rounds);
const windowMs = Number(values['window-ms']);
const connections = Number(values.connections);

const records = await sampleRecords(dir, 200);
const queries = makeQueries(records, 200, 510);
const body = (operation: string, input: unknown) => JSON.stringify({ version: 1, operation: `device-510k.${operation}`, input });
const BASE: SearchInput = { query: '', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10 };
const directory = JSON.parse(await readFile(join(dir, 'search/chunks.json'), 'utf8').catch(() => '{}')) as { predicates?: unknown };
const fields = FACET_FIELDS.filter((f) => f !== 'predicate' || directory.predicates !== undefined);
const allFacets: SearchInput = { ...BASE, query: 'system', facets: fields.map((field) => ({ field, size: field === 'predicate' ? FACET_VALUES_MAX : null, order: 'count' as const })) };
const firstRequests = [body('meta', {}), body('detail', { id: records[0]!.kNumber }), body('search', { ...BASE, query: 'catheter' }), body('search', allFacets)];
const bodies = queries.map((q) => body('search', q.input));

async function post(url: string, text: string): Promise<void> {
  const res = await fetch(`${url}/v1/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text });
  const answer = await res.text();
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${answer.slice(0, 200)}`);
}

/** The workerd processes this process started. */
async function workerds(): Promise<number[]> {
  const out: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    const [, comm, rest] = /^\d+ \((.*?)\) (.*)$/.exec(stat.trim()) ?? [];
    if (comm?.startsWith('workerd') && Number(rest?.split(' ')[1]) === process.pid) out.push(Number(name));
  }
  return out;
}

type Side = { mode: 'chunks' | 'whole'; url: string; pid: number; close: () => Promise<void>; inspectorPort: number; next: number; answers: number; cpuMs: number; perRound: number[] };
const sides: Side[] = [];
try {
  for (const mode of ['chunks', 'whole'] as const) {
    const before = await workerds();
    const inspectorPort = await freePort();
    const worker = await startWorker({ storage: 'assets', assetsDir, assetsReady: true, inspectorPort, vars: { SEARCH_INDEX: mode, ...(values.budget ? { SEARCH_CACHE_BYTES: values.budget } : {}), ...(values['answer-cache'] !== undefined ? { ANSWER_CACHE_BYTES: values['answer-cache'] } : {}) } });
    const pid = (await workerds()).find((p) => !before.includes(p));
    sides.push({ mode, url: worker.url, pid: pid ?? -1, close: worker.close, inspectorPort, next: 0, answers: 0, cpuMs: 0, perRound: [] });
    if (pid === undefined) throw new Error('no workerd child process for the Worker just started');
    for (const text of firstRequests) await post(worker.url, text);
    let next = 0;
    await Promise.all(Array.from({ length: connections }, async () => {
      while (next < bodies.length) await post(worker.url, bodies[next++]!);
    }));
  }
  console.log(`warm, ${rounds} rounds of ${windowMs} ms per Worker, ${connections} at a time (load ${loadavg()[0]!.toFixed(1)})`);
  const profilers: Cdp[] = [];
  if (values.profile) {
    for (const side of sides) {
      const p = await inspect(side.inspectorPort);
      await p.send('Profiler.enable');
      await p.send('Profiler.setSamplingInterval', { interval: 100 });
      await p.send('Profiler.start');
      profilers.push(p);
    }
  }
  for (let round = 0; round < rounds; round++) {
    for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
      const cpu0 = processRunMs(side.pid);
      const end = performance.now() + windowMs;
      let done = 0;
      await Promise.all(Array.from({ length: connections }, async () => {
        while (performance.now() < end) {
          await post(side.url, bodies[side.next++ % bodies.length]!);
          done++;
        }
      }));
      const cpu1 = processRunMs(side.pid);
      if (cpu0 !== null && cpu1 !== null) side.cpuMs += cpu1 - cpu0;
      side.answers += done;
      side.perRound.push(done);
    }
  }
  for (const [i, p] of profilers.entries()) {
    const { profile } = (await p.send('Profiler.stop', {}, 60_000)) as { profile: unknown };
    await writeFile(`${values.profile}.${sides[i]!.mode}.cpuprofile`, JSON.stringify(profile));
    p.close();
  }
  const seconds = (rounds * windowMs) / 1000;
  for (const s of sides) console.log(`${s.mode}: ${(s.answers / seconds).toFixed(1)} answers/s, workerd CPU ${(s.cpuMs / s.answers).toFixed(2)} ms an answer (${s.answers} answers)`);
  const [chunks, whole] = sides as [Side, Side];
  const ratios = chunks.perRound.map((n, r) => n / whole.perRound[r]!).sort((a, b) => a - b);
  console.log(
    `\nWarm search, chunked index / whole index: ${(chunks.answers / whole.answers).toFixed(2)} (rounds: median ${ratios[Math.floor(ratios.length / 2)]!.toFixed(2)}, ${ratios[0]!.toFixed(2)} to ${ratios.at(-1)!.toFixed(2)}); workerd CPU an answer, whole / chunked: ${(whole.cpuMs / whole.answers / (chunks.cpuMs / chunks.answers)).toFixed(2)} (load ${loadavg()[0]!.toFixed(1)})`,
  );
} finally {
  for (const s of sides) await s.close();
}
