/**
 * Export throughput: starts the server over a snapshot, loads its search index, then streams an export of up to
 * `--limit` matches and prints records/s and the server's RSS growth (bench/lib/measure-export.ts).
 *
 *   npx tsx bench/export-throughput.ts --snapshot /tmp/query-bench/snapshot [--limit 100000] [--format ndjson|csv] [--query ""] [--sort relevance]
 *                                      [--cold] [--cpu-prof DIR]
 *
 * `--cold` drops the snapshot's record shards from the page cache first (bench/lib/page-cache.ts), so the export reads
 * them from the disk.
 * `--cpu-prof DIR` runs the server under node --cpu-prof and leaves its profile in DIR when it stops.
 *
 * A script, not a test: it prints figures and asserts nothing about time.
 */
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCommandLine } from '../src/cli/args.ts';
import { measureExport } from './lib/measure-export.ts';
import { evictFromPageCache } from './lib/page-cache.ts';
import { startSourceServer } from './lib/server.ts';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const USAGE = `Usage: npx tsx bench/export-throughput.ts --snapshot DIR [options]

Starts the server over a snapshot, loads its search index, streams one export and prints records/s and the server's
RSS growth.

  --snapshot DIR    the snapshot to serve (snapshot)
  --limit N         records to export at most (100000)
  --format F        ndjson or csv (ndjson)
  --query Q         the search query ("")
  --sort S          the sort (relevance)
  --cold            drop the snapshot's record shards from the page cache first
  --cpu-prof DIR    run the server under node --cpu-prof, its profile left in DIR when it stops`;

const values = parseCommandLine('export-throughput', USAGE, {
  snapshot: { type: 'string', default: 'snapshot' },
  limit: { type: 'string', default: '100000' },
  format: { type: 'string', default: 'ndjson' },
  query: { type: 'string', default: '' },
  sort: { type: 'string', default: 'relevance' },
  'cpu-prof': { type: 'string' },
  cold: { type: 'boolean', default: false },
});
const server = await startSourceServer(ROOT, {
  env: { SNAPSHOT_PATH: values.snapshot, WORKERS: '1' },
  stdio: 'ignore',
  ...(values['cpu-prof'] && { nodeArgs: ['--cpu-prof', '--cpu-prof-dir', values['cpu-prof']] }),
});
try {
  const { url } = server;
  // Load the search index first, so that the figure is the export's own.
  await fetch(`${url}/v1/export?limit=1&format=ndjson`).then((r) => r.text());
  const mib = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MiB`;
  const format = values.format === 'csv' ? 'csv' : 'ndjson';
  if (values.cold && !evictFromPageCache(join(values.snapshot, 'records'))) throw new Error('cannot drop the shards from the page cache here');
  const m = await measureExport(url, server.pid, { query: values.query, format, limit: Number(values.limit), sort: values.sort });
  console.log(
    `export ${format}${values.cold ? ' (cold)' : ''}: ${m.records.toLocaleString('en-US')} records, ${mib(m.bytes)} in ${m.seconds.toFixed(2)} s = ${Math.round(m.recordsPerSecond).toLocaleString('en-US')} records/s; ` +
      `server RSS ${mib(m.rssBefore)} before, ${mib(m.rssPeak)} at peak (+${mib(m.rssGrowth)}); load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
  );
} finally {
  await server.stop();
}
