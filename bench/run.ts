/**
 * `npm run bench`: build, lookups, search and memory at the bundled data, 175,000 and 1,000,000 generated records,
 * side by side with nginx (lookups) and SQLite FTS5 (search). Prints the tables, writes bench/results.json, draws
 * docs/performance.svg and writes the tables into docs/performance.md's results section. `--quick` measures the
 * bundled data and 175,000 records in one short round per figure, without the all-cores and Worker sections and
 * without the PDF half of the predicates section, so that it ends within its 10 minutes on 2 cores; it writes its
 * figures under bench/out/ so that the committed full run stays as it is.
 *
 *   npm run bench [-- --quick] [--sizes bundled,175k,1M] [--rounds 3] [--seconds 5] [--connections 50]
 *                 [--queries 400] [--fresh] [--generator auto|wrk|autocannon] [--work-dir DIR] [--out FILE] [--svg FILE]
 *                 [--nginx PATH|none] [--prepare] [--max-minutes N] [--doc FILE|none] [--hostile yes|no|only] [--snapshot DIR]
 *
 * At 1,000,000 records the run ends with the hostile section (bench/lib/hostile.ts): clients acting as attackers,
 * beside the quiet figures. `--hostile only` measures that section alone and writes it into the results file's entry
 * for that size (the other figures kept as they are), then the page; `--snapshot` names an already built snapshot
 * for it, which is only read.
 *
 * Snapshots are generated and built under --work-dir and reused while their inputs are unchanged; --fresh rebuilds
 * them (and measures the builds again), --prepare only makes sure they exist.
 *
 * A script, not a test: it prints figures and asserts nothing about time.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCommandLine } from '../src/cli/args.ts';
import { DEFAULT_SEED } from '../build/generate/rows.ts';
import { compareSearch, sqliteProblem } from './lib/compare-search.ts';
import { measureExtensions } from './lib/extensions.ts';
import { checkTarget, lookupTargets } from './lib/lookups.ts';
import { findGenerator, type LoadRequest } from './lib/load.ts';
import { measureLookup, measureSides, type LoadSettings } from './lib/measure-lookups.ts';
import { findNginx, NGINX_MISSING, startNginx, type Nginx } from './lib/nginx.ts';
import { measureHostile } from './lib/hostile.ts';
import { pipeliningAttack } from './lib/pipelining.ts';
import { renderPlot } from './lib/plot.ts';
import { killAll, memoryOf, sampleMemory } from './lib/procs.ts';
import { makeQueries, sampleRecords } from './lib/queries.ts';
import {
  allCoresTable,
  buildTable,
  extensionsTable,
  floorLines,
  hostileTable,
  kindTable,
  lookupTable,
  memoryTable,
  pipeliningTable,
  renderReport,
  searchHttpTable,
  searchTable,
  workerTable,
} from './lib/report.ts';
import { runPlan } from './lib/run-plan.ts';
import { runSection, type SectionOutput } from './lib/sections.ts';
import { writeResultsInto } from './lib/docs-results.ts';
import type { Results, SizeResults } from './lib/results.ts';
import { startBareNode, startServer, type RunningServer } from './lib/server.ts';
import { measureWorker } from './lib/worker.ts';
import { measurePredicates, predicateLines } from './lib/predicates.ts';
import { prepareSnapshot, SIZES, type PreparedSnapshot } from './lib/snapshots.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const USAGE = `Usage: npm run bench -- [options]

  --quick               the bundled data and 175,000 records, one 2-second round per figure, 200 queries, no
                        all-cores or Worker section; about 6 minutes on 2 cores; figures go to bench/out/
  --sizes LIST          some of bundled,175k,1M (default: all three; with --quick: bundled,175k)
  --rounds N            measured rounds per figure, the median is kept (3; 1 with --quick)
  --seconds N           seconds per load round (5; 2 with --quick)
  --connections N       connections of the load generator (50)
  --queries N           search queries (400; 200 with --quick)
  --seed TEXT           the generator's seed for the larger sizes (${DEFAULT_SEED})
  --generator NAME      auto (wrk if installed, else autocannon), wrk or autocannon
  --nginx PATH|none     the nginx binary, or none to skip that column (default: found on PATH or in /usr/sbin)
  --all-cores yes|no    also measure WORKERS=auto against nginx with a worker per core (yes when there are 2+ cores;
                        no with --quick)
  --worker yes|no       also measure the API as a Cloudflare Worker under workerd against Node and nginx (yes; no
                        with --quick)
  --work-dir DIR        generated inputs, snapshots and SQLite databases, reused across runs (/tmp/device-510k-bench)
  --fresh               generate and build the snapshots again, and measure those builds
  --prepare             only make sure the snapshots exist
  --max-minutes N       stop the whole run after N minutes (90; 10 with --quick)
  --out FILE, --svg FILE  where the results and the plot go (bench/results.json, docs/performance.svg)
  --doc FILE|none       the page whose results section a full run rewrites (docs/performance.md; never with --quick)
  --hostile yes|no|only the hostile section at 1,000,000 records (yes): attacking clients beside the quiet figures;
                        only: that section alone, written into the results file's entry for the size (the other
                        figures kept) and into the page
  --snapshot DIR        with --hostile only: a built snapshot to measure (only read) instead of the work folder's
  --sections FILE       where each section's figures are appended as one JSON line when it finishes
                        (bench/out/sections-quick.ndjson with --quick, else bench/out/sections.ndjson)
  --predicates yes|no   the predicate extractor scored on the 510(k) summaries beside the repository: precision,
                        recall, ceiling, summaries/s, on the texts and (not with --quick) the same texts as PDFs (yes)`;

const values = parseCommandLine('bench', USAGE, {
  quick: { type: 'boolean', default: false },
  sizes: { type: 'string' },
  rounds: { type: 'string' },
  seconds: { type: 'string' },
  connections: { type: 'string', default: '50' },
  queries: { type: 'string' },
  seed: { type: 'string', default: DEFAULT_SEED },
  fresh: { type: 'boolean', default: false },
  prepare: { type: 'boolean', default: false },
  generator: { type: 'string', default: 'auto' },
  nginx: { type: 'string' },
  'all-cores': { type: 'string' },
  worker: { type: 'string' },
  'work-dir': { type: 'string', default: '/tmp/device-510k-bench' },
  'max-minutes': { type: 'string' },
  out: { type: 'string' },
  svg: { type: 'string' },
  doc: { type: 'string' },
  hostile: { type: 'string', default: 'yes' },
  snapshot: { type: 'string' },
  sections: { type: 'string' },
  predicates: { type: 'string', default: 'yes' },
});
if (!['yes', 'no'].includes(values.predicates)) throw new Error(`Expected \`--predicates\` to be yes or no, got "${values.predicates}"`);
if (!['yes', 'no', 'only'].includes(values.hostile)) throw new Error(`Expected \`--hostile\` to be yes, no or only, got "${values.hostile}"`);
if (values.snapshot !== undefined && values.hostile !== 'only') throw new Error('Expected `--snapshot` only with `--hostile only`');
const hostileOnly = values.hostile === 'only';

const quick = values.quick;
const plan = runPlan({
  quick,
  cpus: cpus().length,
  allCores: values['all-cores'],
  worker: values.worker,
  rounds: values.rounds,
  seconds: values.seconds,
  maxMinutes: values['max-minutes'],
});
const positive = (name: string, raw: string): number => {
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`Expected \`--${name}\` to be a number above 0, got "${raw}"`);
  return n;
};
const sizeLabels = (values.sizes ?? (hostileOnly ? '1M' : quick ? 'bundled,175k' : 'bundled,175k,1M')).split(',').map((s) => s.trim());
const sizes = sizeLabels.map((label) => {
  const size = SIZES.find((s) => s.label.toLowerCase() === label.toLowerCase());
  if (!size) throw new Error(`Expected \`--sizes\` to list some of ${SIZES.map((s) => s.label).join(', ')}, got "${label}"`);
  return size;
});
const { rounds, seconds, maxMinutes } = plan;
const connections = positive('connections', values.connections);
const queryCount = positive('queries', values.queries ?? (quick ? '200' : '400'));
if (!['auto', 'wrk', 'autocannon'].includes(values.generator)) throw new Error('Expected `--generator` to be auto, wrk or autocannon');
const workDir = resolve(values['work-dir']);
if (hostileOnly && sizes.length !== 1) throw new Error('Expected `--sizes` to name one size with `--hostile only`');
const resultsPath = resolve(values.out ?? (quick ? 'bench/out/results-quick.json' : 'bench/results.json'));
const svgPath = resolve(values.svg ?? (quick ? 'bench/out/performance-quick.svg' : 'docs/performance.svg'));
const docPath = quick || values.doc === 'none' ? null : resolve(values.doc ?? 'docs/performance.md');
const sectionsPath = resolve(values.sections ?? (quick ? 'bench/out/sections-quick.ndjson' : 'bench/out/sections.ndjson'));

const started = Date.now();
const log = (line: string) => process.stderr.write(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}\n`);

// Every run is bounded: past the deadline every child is killed and the run stops with what it has not measured named.
const deadline = setTimeout(() => {
  log(`the run passed its limit of ${maxMinutes} minutes (--max-minutes); stopping`);
  killAll();
  process.exit(2);
}, maxMinutes * 60_000);
deadline.unref();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    killAll();
    process.exit(130);
  });
}
process.on('exit', killAll);

/** A tool's version line: nginx prints it on stderr, wrk on stdout with exit code 1. */
function version(binary: string, args: string[]): string {
  const run = spawnSync(binary, args, { encoding: 'utf8', timeout: 5000 });
  return `${run.stdout ?? ''}${run.stderr ?? ''}`.trim().split('\n')[0] || 'unknown';
}

async function measureSize(
  prepared: PreparedSnapshot,
  settings: LoadSettings,
  nginxBinary: string | null,
  tmp: string,
  notes: string[],
  out: SectionOutput,
): Promise<SizeResults> {
  const { size, dir } = prepared;
  const label = size.label;
  const section = <T>(name: string, run: () => Promise<T>, render: (figures: T) => string) => runSection({ size: label, name, run, render }, out);
  // Up to 20,000 distinct requests per operation: every record shard of the 1,000,000-record snapshot.
  const targets = await lookupTargets(dir, 20_000);
  const records = await sampleRecords(dir, 200);
  const queries = makeQueries(records, queryCount, 510);
  const searchRequests: LoadRequest[] = queries.map((q) => ({
    method: 'POST',
    path: '/v1/query',
    body: JSON.stringify({ version: 1, operation: 'device-510k.search', input: q.input }),
  }));

  log(`${label}: starting the server`);
  const server = await startServer(ROOT, prepared.path, tmp);
  let nginx: Nginx | null = null;
  let floor: RunningServer | null = null;
  const result: SizeResults = {
    label,
    records: prepared.build.records,
    snapshotId: prepared.build.snapshotId,
    build: prepared.build,
    lookups: [],
    searchHttp: null,
    search: null,
    memory: null,
  };
  try {
    // Let start-up garbage settle before reading the server's memory.
    await new Promise((r) => setTimeout(r, 1000));
    const afterStart = memoryOf(server.pid)?.rss ?? Number.NaN;
    // The search index loads on the first search: one request, before any other, isolates what it costs.
    await checkTarget(server.url, searchRequests.slice(0, 1), `${label} search (ours)`);
    await new Promise((r) => setTimeout(r, 1000));
    const afterFirstSearch = memoryOf(server.pid)?.rss ?? Number.NaN;
    if (nginxBinary) {
      nginx = await startNginx(nginxBinary, tmp, dir, 'meta.json');
    }
    floor = await startBareNode(ROOT, join(dir, 'meta.json'));
    for (const t of targets) {
      await checkTarget(server.url, t.ours, `${label} ${t.name} (ours)`);
      if (nginx) await checkTarget(nginx.url, t.nginx, `${label} ${t.name} (nginx)`);
    }
    const memory = sampleMemory(server.pid);
    const running = { server, nginx, floor };
    await section(
      'lookups',
      async () => {
        for (const t of targets) {
          log(`${label}: ${t.name}, ${t.ours.length.toLocaleString('en-US')} distinct requests`);
          const urls = { ours: running.server.url, nginx: running.nginx?.url ?? null, floor: t.operation === 'meta' ? running.floor.url : null };
          const figures = await measureLookup(t, urls, settings);
          if (figures.ours.failures > 0 || (figures.nginx?.failures ?? 0) > 0) {
            notes.push(`${label} ${t.name}: ${figures.ours.failures} failed requests on our side, ${figures.nginx?.failures ?? 0} on nginx's.`);
          }
          result.lookups.push(figures);
        }
        return result.lookups;
      },
      () => [lookupTable([result]), ...floorLines([result])].join('\n'),
    );
    await section(
      'search over HTTP',
      async () => {
        log(`${label}: search over HTTP, ${searchRequests.length} queries`);
        const [http] = await measureSides([{ url: running.server.url, requests: searchRequests, tag: 'ours-search' }], settings);
        result.searchHttp = http!;
        if (http!.failures > 0) notes.push(`${label} search over HTTP: ${http!.failures} failed requests.`);
        result.searchHttpUncached = await measureUncachedSearch(prepared.path, searchRequests, settings, tmp);
        if (result.searchHttpUncached.failures > 0) notes.push(`${label} search over HTTP, answer cache off: ${result.searchHttpUncached.failures} failed requests.`);
        result.memory = { afterStartBytes: afterStart, afterFirstSearchBytes: afterFirstSearch, underLoadBytes: memory.stop() };
        return { searchHttp: result.searchHttp, searchHttpUncached: result.searchHttpUncached, memory: result.memory };
      },
      () => [searchHttpTable([result]), '', memoryTable([result])].join('\n'),
    );
    await section(
      'pipelining',
      async () => {
        log(`${label}: pipelined requests from clients that never read`);
        result.pipelining = await pipeliningAttack(running.server.url, running.server.pid, { seconds: plan.pipeliningSeconds });
        return result.pipelining;
      },
      () => pipeliningTable([result]) ?? '',
    );
  } finally {
    await floor?.stop();
    await nginx?.stop();
    await server.stop();
  }

  if (plan.allCores) {
    await section(
      'all cores',
      async () => {
        log(`${label}: all cores, WORKERS=auto against nginx with a worker per core`);
        const many = await startServer(ROOT, prepared.path, tmp, { WORKERS: 'auto' });
        let manyNginx: Nginx | null = null;
        try {
          if (nginxBinary) manyNginx = await startNginx(nginxBinary, tmp, dir, 'meta.json', 'auto');
          const lookups = [];
          for (const t of targets.filter((x) => x.name === 'detail' || x.name === 'meta' || x.name === 'catalog')) {
            await checkTarget(many.url, t.ours, `${label} ${t.name} (ours, all cores)`);
            lookups.push(await measureLookup(t, { ours: many.url, nginx: manyNginx?.url ?? null, floor: null }, settings));
          }
          const [http] = await measureSides([{ url: many.url, requests: searchRequests, tag: 'ours-search-all-cores' }], settings);
          result.allCores = { workers: cpus().length, lookups, searchHttp: http ?? null };
          return result.allCores;
        } finally {
          await manyNginx?.stop();
          await many.stop();
        }
      },
      () => allCoresTable([result]) ?? '',
    );
  }

  if (plan.worker) {
    await section(
      'Worker',
      async () => {
        log(`${label}: the Worker under workerd, against Node and nginx`);
        result.worker = await measureWorker({ root: ROOT, snapshotPath: prepared.path, snapshotDir: dir, targets, searchRequests, settings, nginxBinary, tmp, label, log }).catch((err: Error) => {
          notes.push(`${label}: the Worker was not measured: ${err.message}`);
          return null;
        });
        return result.worker;
      },
      () => workerTable([result]) ?? 'The Worker was not measured (see the notes).',
    );
  }

  await section(
    'search engines',
    async () => {
      log(`${label}: search engines`);
      const search = await compareSearch({
        root: ROOT,
        snapshotDir: dir,
        snapshotId: prepared.build.snapshotId,
        workDir,
        tmp,
        queries,
        rounds,
        roundTimeoutMs: 10 * 60_000,
        buildTimeoutMs: 30 * 60_000,
        log: (line) => log(`${label}: ${line}`),
      });
      result.search = search;
      if (search.mismatches > 0) {
        notes.push(`${label}: our engine and SQLite FTS5 disagree on ${search.mismatches} of ${search.compared} queries.`);
        for (const m of search.mismatchExamples) {
          log(`${label}: mismatch (${m.what}, ${m.kind}) ${JSON.stringify(m.query)}\n    ours:   ${JSON.stringify(m.ours)}\n    sqlite: ${JSON.stringify(m.sqlite)}`);
        }
      }
      return search;
    },
    () => [searchTable([result]), '', ...(kindTable([result]) ? [kindTable([result])!, ''] : []), memoryTable([result])].join('\n'),
  );
  await section(
    'search extensions and export',
    async () => {
      log(`${label}: search extensions and export`);
      const extensions = await measureExtensions({
        root: ROOT,
        snapshotPath: prepared.path,
        snapshotDir: dir,
        snapshotId: prepared.build.snapshotId,
        workDir,
        tmp,
        records,
        queries: Math.max(90, Math.round(queryCount / 2)),
        rounds,
        log: (line) => log(`${label}: ${line}`),
      });
      result.extensions = extensions;
      if ((extensions.search?.mismatches ?? 0) > 0) {
        const x = extensions.search!;
        notes.push(`${label}: our engine and SQLite FTS5 disagree on ${x.mismatches} of ${x.compared} qualifier and sorted queries.`);
        for (const m of x.mismatchExamples) log(`${label}: mismatch (${m.what}, ${m.kind}) ${JSON.stringify(m.query)}\n    ours:   ${JSON.stringify(m.ours)}\n    sqlite: ${JSON.stringify(m.sqlite)}`);
      }
      return extensions;
    },
    () => extensionsTable([result]) ?? '',
  );
  if (values.hostile === 'yes' && label === '1M') {
    await section(
      'hostile',
      async () => (result.hostile = await hostileSection(prepared, tmp)),
      () => hostileTable([result]) ?? '',
    );
  }
  return result;
}

/** The hostile section over one snapshot (bench/lib/hostile.ts). */
function hostileSection(prepared: { path: string; dir: string; size: { label: string } }, tmp: string) {
  return measureHostile({ root: ROOT, snapshotPath: prepared.path, snapshotDir: prepared.dir, tmp, log: (line) => log(`${prepared.size.label}: ${line}`), rounds });
}

/**
 * `--hostile only`: the section alone, written into the results file's entry for the size, whose other figures stay
 * as the full run that made them measured them; then the page, from the whole file.
 */
async function hostileOnlyRun(tmp: string): Promise<void> {
  const size = sizes[0]!;
  const results = JSON.parse(await readFile(resultsPath, 'utf8')) as Results;
  const entry = results.sizes.find((s) => s.label === size.label);
  if (!entry) throw new Error(`${relative(process.cwd(), resultsPath)} has no figures for ${size.label}: run the full bench first`);
  let prepared: { path: string; dir: string; size: { label: string } };
  if (values.snapshot) {
    const path = resolve(values.snapshot);
    prepared = { path, dir: await realpath(path), size };
  } else {
    prepared = await prepareSnapshot(size, { root: ROOT, workDir, seed: values.seed, fresh: false, log, buildTimeoutMs: 60 * 60_000 });
  }
  log(`${size.label}: the hostile section alone, over ${prepared.path}`);
  entry.hostile = await hostileSection(prepared, tmp);
  console.log(renderReport({ ...results, sizes: [entry] }));
  await writeFile(resultsPath, `${JSON.stringify(results, null, 2)}\n`);
  if (docPath) await writeResultsInto(docPath, results);
  console.log(`\nWrote the hostile section into ${[resultsPath, ...(docPath ? [docPath] : [])].map((p) => relative(process.cwd(), p)).join(', ')}.`);
}

/** Search over HTTP against a second server whose answer cache is off: every request runs the engine. */
async function measureUncachedSearch(path: string, requests: LoadRequest[], settings: LoadSettings, tmp: string) {
  log('search over HTTP with the answer cache off');
  const uncached = await startServer(ROOT, path, tmp, { ANSWER_CACHE_BYTES: '0' });
  try {
    await checkTarget(uncached.url, requests.slice(0, 1), 'search (ours, answer cache off)');
    const [figures] = await measureSides([{ url: uncached.url, requests, tag: 'ours-search-uncached' }], settings);
    return figures!;
  } finally {
    await uncached.stop();
  }
}

async function main(): Promise<void> {
  if (hostileOnly) {
    if (!values.snapshot) await mkdir(workDir, { recursive: true });
    // A snapshot given is only read, and its folder is not written to either.
    const tmp = await mkdtemp(join(values.snapshot ? tmpdir() : workDir, 'hostile-run-'));
    try {
      await hostileOnlyRun(tmp);
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
    return;
  }
  const loadAverageAtStart = loadavg();
  const notes: string[] = [];
  const nginxBinary = values.nginx === 'none' ? null : (values.nginx ?? (await findNginx()));
  if (!nginxBinary) {
    const why = values.nginx === 'none' ? 'The nginx column is skipped (--nginx none).' : NGINX_MISSING;
    console.error(why);
    notes.push(why);
  }
  const { generator, note } = await findGenerator(values.generator as 'auto' | 'wrk' | 'autocannon', ROOT);
  if (note) {
    console.error(note);
    notes.push(note);
  }
  const sqlite = await sqliteProblem();
  if (sqlite) {
    console.error(sqlite);
    notes.push(sqlite);
  }
  await mkdir(workDir, { recursive: true });
  const tmp = await mkdtemp(join(workDir, 'run-'));
  const settings: LoadSettings = { generator, connections, seconds, warmupSeconds: plan.warmupSeconds, rounds, tmp };
  log(`sizes ${sizes.map((s) => s.label).join(', ')}; ${rounds} rounds of ${seconds} s at ${connections} connections; load by ${generator.name}; work folder ${workDir}`);

  const results: Results = {
    schemaVersion: 1,
    mode: quick ? 'quick' : 'full',
    startedAt: new Date(started).toISOString(),
    seconds: 0,
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
      memoryBytes: totalmem(),
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
      loadAverageAtStart,
      loadAverageAtEnd: [],
    },
    settings: {
      connections,
      roundSeconds: seconds,
      warmupSeconds: settings.warmupSeconds,
      rounds,
      queries: queryCount,
      seed: values.seed,
      generator: generator.name === 'wrk' ? version(generator.binary, ['--version']).replace(/\s*\[.*$/, '').replace(/\s+Copyright.*$/, '') : 'autocannon',
      nginx: nginxBinary ? version(nginxBinary, ['-v']).replace(/^nginx version:\s*/, '') : null,
      sqlite: sqlite ? null : ((await import('./lib/engine-sqlite.ts')).sqliteVersion()),
    },
    notes,
    sizes: [],
  };
  const prepareOptions = { root: ROOT, workDir, seed: values.seed, fresh: values.fresh, log, buildTimeoutMs: 60 * 60_000 };
  try {
    if (values.prepare) {
      for (const size of sizes) {
        const prepared = await prepareSnapshot(size, prepareOptions);
        console.log(`${size.label}: ${prepared.path} (${prepared.build.records.toLocaleString('en-US')} records, built in ${prepared.build.seconds.toFixed(1)} s${prepared.build.cached ? ', cached' : ''})`);
      }
      return;
    }
    // Each section's figures are printed and kept as it finishes (bench/lib/sections.ts); the whole report follows.
    const out: SectionOutput = { print: (text) => process.stdout.write(text), file: sectionsPath, runStartedAt: results.startedAt, mode: results.mode };
    log(`each section's figures are printed as it finishes and appended to ${relative(process.cwd(), sectionsPath)}`);
    for (const size of sizes) {
      const prepared = await runSection(
        {
          size: size.label,
          name: 'snapshot',
          run: () => prepareSnapshot(size, prepareOptions),
          render: (p) => buildTable([{ label: p.size.label, records: p.build.records, build: p.build } as SizeResults]),
        },
        out,
      );
      log(`${size.label}: ${prepared.build.records.toLocaleString('en-US')} records, snapshot ${prepared.build.snapshotId}${prepared.build.cached ? ' (cached build)' : `, built in ${prepared.build.seconds.toFixed(1)} s`}`);
      results.sizes.push(await measureSize(prepared, settings, nginxBinary, tmp, notes, out));
    }
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  if (values.predicates === 'yes') {
    log('predicates: the extractor on the 510(k) summaries');
    const figures = await measurePredicates({ pdf: plan.predicatePdfs });
    if (figures) {
      for (const line of predicateLines(figures)) log(`predicates: ${line}`);
      const { disagreements: _d, ...kept } = figures;
      results.predicates = kept;
    } else notes.push('The predicates section is skipped: the 510(k) summaries (shared/data/fda/summaries beside the repository) are absent.');
  }
  results.seconds = (Date.now() - started) / 1000;
  results.machine.loadAverageAtEnd = loadavg();

  console.log(renderReport(results));
  await mkdir(dirname(resultsPath), { recursive: true });
  // The lab notes of past runs stay with the figures.
  const previous = await readFile(resultsPath, 'utf8').then((text) => JSON.parse(text) as Results, () => null);
  if (previous?.labNotes) results.labNotes = previous.labNotes;
  await writeFile(resultsPath, `${JSON.stringify(results, null, 2)}\n`);
  await mkdir(dirname(svgPath), { recursive: true });
  await writeFile(svgPath, renderPlot(results));
  if (docPath) await writeResultsInto(docPath, results);
  const wrote = [resultsPath, svgPath, ...(docPath ? [docPath] : [])].map((p) => relative(process.cwd(), p));
  console.log(`\nWrote ${wrote.join(', ')} in ${(results.seconds / 60).toFixed(1)} minutes.`);
}

await main();
clearTimeout(deadline);
