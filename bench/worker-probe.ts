/**
 * The Worker section of `npm run bench` on its own, over one built snapshot: the Worker under workerd against the
 * Node server and nginx (detail, meta, catalog, search), its start, its memory (workerd's RSS and the isolate's
 * heap) and its bundle. The same code as the bench's section (bench/lib/worker.ts); the snapshot is only read.
 *
 *   npx tsx bench/worker-probe.ts --snapshot DIR [--seconds 2] [--rounds 1] [--connections 50] [--queries 200] [--out FILE]
 *
 * A script, not a test: it prints figures and asserts nothing about time.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findGenerator } from './lib/load.ts';
import { lookupTargets } from './lib/lookups.ts';
import { findNginx } from './lib/nginx.ts';
import { startProbe } from './lib/probe.ts';
import { makeQueries, sampleRecords } from './lib/queries.ts';
import { workerTable, workerVerdicts } from './lib/report.ts';
import type { Results, SizeResults } from './lib/results.ts';
import { measureWorker } from './lib/worker.ts';
import { parseCommandLine } from '../src/cli/args.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const USAGE = `Usage: npx tsx bench/worker-probe.ts [--snapshot DIR] [--seconds N] [--rounds N] [--connections N] [--queries N] [--out FILE]

The Worker section of npm run bench on its own, over one built snapshot (only read): the Worker under workerd against
the Node server and nginx, its start, its memory and its bundle. Prints figures; asserts nothing about time.

  --snapshot DIR     the snapshot (default snapshot)
  --seconds N        seconds per measurement (default 2)
  --rounds N         rounds per measurement (default 1)
  --connections N    concurrent connections (default 50)
  --queries N        search queries made from the snapshot's records (default 200)
  --out FILE         also write the results as JSON to FILE`;
const values = parseCommandLine('worker-probe', USAGE, {
  snapshot: { type: 'string', default: 'snapshot' },
  seconds: { type: 'string', default: '2' },
  rounds: { type: 'string', default: '1' },
  connections: { type: 'string', default: '50' },
  queries: { type: 'string', default: '200' },
  out: { type: 'string' },
});
const { started, log, dir, manifest, label } = await startProbe(values.snapshot);
const { generator } = await findGenerator('auto', ROOT);
const tmp = await mkdtemp(join(tmpdir(), 'device-510k-worker-bench-'));
const loadAtStart = loadavg();
try {
  const targets = await lookupTargets(dir, 20_000);
  const queries = makeQueries(await sampleRecords(dir, 200), Number(values.queries), 510);
  const searchRequests = queries.map((q) => ({ method: 'POST' as const, path: '/v1/query', body: JSON.stringify({ version: 1, operation: 'device-510k.search', input: q.input }) }));
  const settings = { generator, connections: Number(values.connections), seconds: Number(values.seconds), warmupSeconds: 1, rounds: Number(values.rounds), tmp };
  const worker = await measureWorker({ root: ROOT, snapshotPath: dir, snapshotDir: dir, targets, searchRequests, settings, nginxBinary: await findNginx(), tmp, label, log });
  const size = { label, records: manifest.counts.records, worker } as SizeResults;
  const results = { sizes: [size] } as Results;
  console.log(`Load average ${loadAtStart.map((x) => x.toFixed(2)).join(' ')} at the start, ${loadavg().map((x) => x.toFixed(2)).join(' ')} at the end; ${settings.rounds} round(s) of ${settings.seconds} s at ${settings.connections} connections, load by ${generator.name}.\n`);
  console.log(workerTable([size]));
  for (const v of workerVerdicts(results)) console.log(`- ${v}`);
  if (values.out) await writeFile(values.out, `${JSON.stringify({ startedAt: new Date(started).toISOString(), loadAtStart, loadAtEnd: loadavg(), settings: { ...settings, generator: generator.name }, size }, null, 2)}\n`);
} finally {
  await rm(tmp, { recursive: true, force: true });
}
