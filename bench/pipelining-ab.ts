/**
 * The bench's pipelining attack (bench/lib/pipelining.ts) against the servers of several checkouts, each started
 * over the same snapshot and first put through a short load of every lookup and search (as in `npm run bench`, where
 * the attack follows the load), in alternating order: the server's RSS after the load, its peak during the attack,
 * and the slowest concurrent meta answer. For judging a change to the pipelining bound without the whole bench.
 *
 *   npx tsx bench/pipelining-ab.ts --snapshot DIR --checkouts DIR,DIR [--rounds 2] [--seconds 3]
 *
 * A script, not a test: it prints figures and asserts nothing.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseCommandLine } from '../src/cli/args.ts';
import { findGenerator, runLoad, type LoadRequest } from './lib/load.ts';
import { lookupTargets } from './lib/lookups.ts';
import { pipeliningAttack } from './lib/pipelining.ts';
import { makeQueries, sampleRecords } from './lib/queries.ts';
import { startServer } from './lib/server.ts';
import { memoryOf } from './lib/procs.ts';

const USAGE = `Usage: npx tsx bench/pipelining-ab.ts --snapshot DIR --checkouts DIR,DIR [options]

The bench's pipelining attack against each checkout's server after a short load of every lookup and search.

  --snapshot DIR      the snapshot every server serves
  --checkouts LIST    checkouts of the project, comma-separated (each one's server bundle is built and started)
  --rounds N          rounds, the order of the checkouts alternating (2)
  --seconds N         seconds of load per lookup and search before the attack (3)`;

const values = parseCommandLine('pipelining-ab', USAGE, {
  snapshot: { type: 'string' },
  checkouts: { type: 'string' },
  rounds: { type: 'string', default: '2' },
  seconds: { type: 'string', default: '3' },
});
if (!values.snapshot || !values.checkouts) {
  console.error(USAGE);
  process.exit(2);
}
const snapshot = resolve(values.snapshot);
const tmp = await mkdtemp(join(tmpdir(), 'device-510k-pipelining-'));
const { generator } = await findGenerator('auto', process.cwd());
const targets = await lookupTargets(snapshot, 20_000);
const records = await sampleRecords(snapshot, 200);
const search: LoadRequest[] = makeQueries(records, 400, 510).map((q) => ({
  method: 'POST',
  path: '/v1/query',
  body: JSON.stringify({ version: 1, operation: 'device-510k.search', input: q.input }),
}));
const roots = values.checkouts.split(',').map((p) => resolve(p));
const mib = (b: number) => `${(b / 1048576).toFixed(0)} MiB`;
for (let round = 0; round < Number(values.rounds); round++) {
  for (const root of round % 2 === 0 ? roots : [...roots].reverse()) {
    const server = await startServer(root, snapshot, await mkdtemp(join(tmp, 'server-')));
    try {
      for (const t of [...targets.map((x) => x.ours), search]) await runLoad(generator, server.url, t, { connections: 50, seconds: Number(values.seconds), tmp, tag: 'load' });
      const afterLoad = memoryOf(server.pid)?.rss ?? Number.NaN;
      const f = await pipeliningAttack(server.url, server.pid, { seconds: 8 });
      console.log(`${root}: RSS after the load ${mib(afterLoad)}, peak during the attack ${mib(f.peakRssBytes)}; slowest meta ${f.metaMaxMs.toFixed(0)} ms (${f.metaAnswers} answered, ${f.metaFailures} failed)`);
    } finally {
      await server.stop();
    }
  }
}
