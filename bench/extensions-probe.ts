/**
 * The search-extensions section of `npm run bench` on its own, over one built snapshot: the engine's p50 and p99 on
 * qualifier and sorted queries against SQLite FTS5 on the same queries (answers compared), and the export's
 * throughput and memory growth as NDJSON and CSV. The same code as the bench's section (bench/lib/extensions.ts),
 * with the bench's query count and rounds by default; the snapshot is only read, SQLite's database is kept in the
 * work directory as the bench keeps it.
 *
 *   npx tsx bench/extensions-probe.ts --snapshot DIR [--queries 200] [--rounds 3] [--work-dir DIR] [--out FILE]
 *
 * A script, not a test: it prints figures and asserts nothing about time.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCommandLine } from '../src/cli/args.ts';
import { measureExtensions } from './lib/extensions.ts';
import { startProbe } from './lib/probe.ts';
import { sampleRecords } from './lib/queries.ts';
import { extensionsTable, extensionVerdicts } from './lib/report.ts';
import type { Results, SizeResults } from './lib/results.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const USAGE = `Usage: npx tsx bench/extensions-probe.ts --snapshot DIR [options]

The search-extensions section of npm run bench over one built snapshot: the engine's p50 and p99 on qualifier and
sorted queries against SQLite FTS5 (answers compared), and the export's records/s and memory growth, NDJSON and CSV.

  --snapshot DIR   the snapshot to read (snapshot)
  --queries N      qualifier and sorted queries (200)
  --rounds N       rounds per engine after a warm-up round, the median is kept (3)
  --work-dir DIR   where SQLite's database is kept, as the bench keeps it (${join(tmpdir(), 'device-510k-bench')})
  --out FILE       also write every figure as JSON`;

const values = parseCommandLine('extensions-probe', USAGE, {
  snapshot: { type: 'string', default: 'snapshot' },
  queries: { type: 'string', default: '200' },
  rounds: { type: 'string', default: '3' },
  'work-dir': { type: 'string', default: join(tmpdir(), 'device-510k-bench') },
  out: { type: 'string' },
});
const { started, log, dir, manifest, label } = await startProbe(values.snapshot);
const tmp = await mkdtemp(join(tmpdir(), 'device-510k-extensions-'));
const loadAtStart = loadavg();
try {
  const extensions = await measureExtensions({
    root: ROOT,
    snapshotPath: dir,
    snapshotDir: dir,
    snapshotId: manifest.snapshotId,
    workDir: resolve(values['work-dir']),
    tmp,
    records: await sampleRecords(dir, 200),
    queries: Number(values.queries),
    rounds: Number(values.rounds),
    log: (line) => log(`${label}: ${line}`),
  });
  const size = { label, records: manifest.counts.records, extensions } as SizeResults;
  const results = { sizes: [size] } as Results;
  console.log(`Load average ${loadAtStart.map((x) => x.toFixed(2)).join(' ')} at the start, ${loadavg().map((x) => x.toFixed(2)).join(' ')} at the end.\n`);
  console.log(extensionsTable([size]));
  for (const v of extensionVerdicts(results)) console.log(`- ${v}`);
  if (values.out) await writeFile(values.out, `${JSON.stringify({ startedAt: new Date(started).toISOString(), loadAtStart, loadAtEnd: loadavg(), size }, null, 2)}\n`);
} finally {
  await rm(tmp, { recursive: true, force: true });
}
