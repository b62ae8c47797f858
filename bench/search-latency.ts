/**
 * Search latency over a built snapshot: loads the search index (size, load time, memory), generates a deterministic
 * set of realistic queries from the snapshot's own records, and prints p50/p90/p99 for the engine alone (match, rank,
 * facets) and for the whole operation (plus reading the page's records from their shards).
 *
 *   npx tsx bench/search-latency.ts [--snapshot snapshot] [--queries 400] [--rounds 3] [--seed 510]
 *
 * A script, not a test: it prints figures and asserts nothing about time.
 */
import { readFile, stat } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseCommandLine } from '../src/cli/args.ts';
import { LAYOUT } from '../src/contract/index.ts';
import { SEARCH_INDEX_PATH, SearchIndexHeader } from '../src/contract/search-index.ts';
import { prepareSearch, search, searchIndexOf } from '../src/operations/search.ts';
import { loadSearchIndex } from '../src/search/load.ts';
import { runSearch } from '../src/search/engine.ts';
import { openSnapshotDirectory } from '../src/node/index.ts';
import { makeExtendedQueries, makeQueries, sampleRecords } from './lib/queries.ts';

const USAGE = `Usage: npx tsx bench/search-latency.ts [options]

Search latency over a built snapshot: the index's size, load time and memory, then p50/p90/p99 of the engine alone
and of the whole operation, over queries drawn from the snapshot's own records.

  --snapshot DIR        the snapshot (snapshot)
  --queries N           how many queries (400)
  --rounds N            rounds over the queries (3)
  --seed TEXT           seed of the query draw (510)
  --sample-shards N     record shards sampled for query words (200)`;

const values = parseCommandLine('search-latency', USAGE, {
  snapshot: { type: 'string', default: 'snapshot' },
  queries: { type: 'string', default: '400' },
  rounds: { type: 'string', default: '3' },
  seed: { type: 'string', default: '510' },
  'sample-shards': { type: 'string', default: '200' },
});
const dir = values.snapshot;
const queryCount = Number(values.queries);
const rounds = Number(values.rounds);

const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const ms = (x: number): string => `${x.toFixed(2)} ms`;

function percentiles(samples: number[]): { p50: number; p90: number; p99: number; max: number; mean: number } {
  const s = [...samples].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
  return { p50: at(50), p90: at(90), p99: at(99), max: s[s.length - 1]!, mean: s.reduce((a, b) => a + b, 0) / s.length };
}

async function main(): Promise<void> {
  const header = SearchIndexHeader.parse(JSON.parse(await readFile(join(dir, SEARCH_INDEX_PATH), 'utf8')));
  let bytes = (await stat(join(dir, SEARCH_INDEX_PATH))).size;
  for (const p of header.parts) bytes += (await stat(join(dir, p.path))).size;
  console.log(`snapshot       ${dir}`);
  console.log(`machine        ${cpus().length} cores, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} (other work inflates wall-clock figures)`);
  console.log(`index          ${header.counts.docs.toLocaleString('en-US')} records, ${header.counts.terms.toLocaleString('en-US')} terms, ${header.counts.applicants.toLocaleString('en-US')} applicants, ${header.counts.codes} product codes`);
  console.log(`index size     ${mib(bytes)} in ${header.parts.length + 1} files`);

  global.gc?.();
  const before = process.memoryUsage();
  const loads: number[] = [];
  let index = null as Awaited<ReturnType<typeof loadSearchIndex>> | null;
  for (let i = 0; i < 3; i++) {
    index = null;
    global.gc?.();
    const t = performance.now();
    index = await loadSearchIndex((p) => readFile(join(dir, p)));
    loads.push(performance.now() - t);
  }
  global.gc?.();
  const after = process.memoryUsage();
  console.log(`load time      ${loads.map(ms).join(', ')} (cold, then warm)`);
  console.log(`index memory   ${mib(after.arrayBuffers - before.arrayBuffers)} in typed arrays, heap +${mib(after.heapUsed - before.heapUsed)}, rss ${mib(after.rss)}${global.gc ? '' : ' (run with --expose-gc for steadier figures)'}`);

  const records = await sampleRecords(dir, Number(values['sample-shards']));
  const queries = makeQueries(records, queryCount, Number(values.seed));
  console.log(`queries        ${queries.length} (from ${records.length.toLocaleString('en-US')} sampled records, seed ${values.seed}), ${rounds} rounds`);

  // Without a manifest (a build still staging) only the engine is measured.
  const snapshot = (await stat(join(dir, LAYOUT.manifest)).catch(() => null)) ? await openSnapshotDirectory(dir) : null;
  if (snapshot) {
    const loadOp = performance.now();
    await searchIndexOf(snapshot);
    console.log(`operation load ${ms(performance.now() - loadOp)} (index through the server's snapshot reader)`);
  }
  const ctx = snapshot && { snapshot, servedAt: new Date(), cursors: null as never };

  // Warm-up: the JIT and the shard cache, on the first 50 queries.
  for (const q of queries.slice(0, 50)) {
    runSearch(index!, q.input);
    if (ctx) await search(prepareSearch(q.input), ctx);
  }
  const engine: number[] = [];
  const operation: number[] = [];
  const byKind = new Map<string, number[]>();
  let matches = 0;
  for (let round = 0; round < rounds; round++) {
    for (const q of queries) {
      const t0 = performance.now();
      const outcome = runSearch(index!, q.input);
      const t1 = performance.now();
      if (ctx) await search(prepareSearch(q.input), ctx);
      const t2 = performance.now();
      engine.push(t1 - t0);
      if (ctx) operation.push(t2 - t1);
      if (!byKind.has(q.kind)) byKind.set(q.kind, []);
      byKind.get(q.kind)!.push(t1 - t0);
      matches += outcome.total;
    }
  }
  const line = (label: string, xs: number[]) => {
    const p = percentiles(xs);
    console.log(`${label.padEnd(28)} p50 ${ms(p.p50).padStart(9)}  p90 ${ms(p.p90).padStart(9)}  p99 ${ms(p.p99).padStart(9)}  max ${ms(p.max).padStart(9)}  n=${xs.length}`);
  };
  console.log(`mean matches   ${Math.round(matches / engine.length).toLocaleString('en-US')} per query (facets counted over all of them)`);
  line('engine (match+rank+facets)', engine);
  if (operation.length > 0) line('operation (+ records)', operation);
  for (const [kind, xs] of [...byKind].sort()) line(`  ${kind}`, xs);

  // The search extensions: qualifier and sorted queries (plus facets and stats), engine alone.
  const extended = makeExtendedQueries(records, Math.max(110, Math.round(queryCount / 2)), Number(values.seed));
  for (const q of extended.slice(0, 30)) runSearch(index!, q.input);
  const ext: number[] = [];
  const extByKind = new Map<string, number[]>();
  for (let round = 0; round < rounds; round++) {
    for (const q of extended) {
      const t0 = performance.now();
      runSearch(index!, q.input);
      const t = performance.now() - t0;
      ext.push(t);
      if (!extByKind.has(q.kind)) extByKind.set(q.kind, []);
      extByKind.get(q.kind)!.push(t);
    }
  }
  line('engine, qualifiers and sorts', ext);
  for (const [kind, xs] of [...extByKind].sort()) line(`  ${kind}`, xs);
}

await main();
