/**
 * What the bulk downloads cost a build: the records of a snapshot read from its shards, then the Parquet file and the
 * SQLite database written from them into a folder of scratch space (never into the snapshot), each with its wall and
 * CPU seconds, its size, and the process's RSS after it; then the peak RSS (VmHWM) over everything.
 *
 *   npx tsx bench/downloads.ts --snapshot DIR [--out DIR]
 *
 * A script, not a test: it prints figures and asserts nothing.
 */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClearanceRecord, LAYOUT, ShardIndex } from '../src/contract/index.ts';
import { parseCommandLine } from '../src/cli/args.ts';
import { writeParquet } from '../build/downloads/parquet.ts';
import { writeSqlite } from '../build/downloads/sqlite.ts';

const USAGE = `Usage: npx tsx bench/downloads.ts --snapshot DIR [--out DIR]

What the bulk downloads cost a build: reads a snapshot's records from its shards, writes the Parquet file and the
SQLite database from them, and prints each one's wall and CPU seconds, bytes and RSS, then the peak RSS. Prints
figures; asserts nothing.

  --snapshot DIR   the snapshot whose records are written (read only)
  --out DIR        where the two files are written (default: a temporary folder, removed at the end)`;
const values = parseCommandLine('downloads', USAGE, { snapshot: { type: 'string' }, out: { type: 'string' } });
if (!values.snapshot) {
  console.error('downloads: --snapshot DIR is required (see --help)');
  process.exit(2);
}

const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
const rss = () => mb(process.memoryUsage.rss());
/** Runs `step`, then prints its wall and CPU seconds (this process's user and system time) and the RSS after it. */
async function timed<T>(what: string, step: () => T | Promise<T>): Promise<T> {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  const out = await step();
  const used = process.cpuUsage(cpu);
  console.log(`${what.padEnd(16)} ${((performance.now() - wall) / 1000).toFixed(1).padStart(6)} s wall, ${((used.user + used.system) / 1e6).toFixed(1).padStart(6)} s CPU, rss ${rss()}`);
  return out;
}

console.log(`load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
const dir = values.snapshot;
const records = await timed('read records', async () => {
  const index = ShardIndex.parse(JSON.parse(await readFile(join(dir, LAYOUT.recordIndex), 'utf8')));
  const all: ClearanceRecord[] = [];
  for (const shard of index.shards) for (const r of JSON.parse(await readFile(join(dir, shard.path), 'utf8')) as ClearanceRecord[]) all.push(r);
  return all;
});
console.log(`records          ${records.length.toLocaleString('en-US')}`);
const out = values.out ?? (await mkdtemp(join(tmpdir(), 'device-510k-downloads-')));
try {
  const parquet = join(out, 'clearances.parquet');
  const sqlite = join(out, 'clearances.sqlite');
  await timed('parquet', () => writeParquet(records, parquet));
  await timed('sqlite', () => writeSqlite(records, sqlite));
  console.log(`bytes            parquet ${mb((await stat(parquet)).size)}, sqlite ${mb((await stat(sqlite)).size)}`);
} finally {
  if (!values.out) await rm(out, { recursive: true, force: true });
}
const status = await readFile('/proc/self/status', 'utf8');
console.log(`peak rss         ${Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)?.[1]) / 1024)} MiB`);
