/**
 * Hostile searches against the real server (as `npm start` runs it) on one snapshot: how long each takes to be
 * answered or refused, and how long a `meta` request sent meanwhile waits (the server's other clients).
 *
 *   npx tsx bench/hostile-search.ts --snapshot DIR [--root CHECKOUT] [--rounds N] [--against CHECKOUT]
 *
 * A script, not a test: it prints figures and asserts nothing about time.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseCommandLine } from '../src/cli/args.ts';
import { HOSTILE_SEARCH_CASES, runSearchCase, startMetaChild, warmSearch, type HostileSearchRow } from './lib/hostile-search.ts';
import { startServer } from './lib/server.ts';
import { stop } from './lib/procs.ts';

const USAGE = `Usage: npx tsx bench/hostile-search.ts --snapshot DIR [options]

Starts the server on the snapshot and sends hostile searches, one case at a time: the 346-prefix OR query, 32
two-letter prefixes ORed, 400 exclusions, an OR of 16 phrases, 16 concurrent searches counting every facet at
size null. For each: the time until it is answered or refused, its status, and the latency of meta requests sent
one after another meanwhile (their worst and median). On Linux also, from the scheduler's counts of the server's
main thread: while the slowest meta waited, how long that thread ran (the server's own work, what slicing bounds)
and how long it waited for a core (other work on the machine); and the most it ran during any one meta. Prints one
table.

  --snapshot DIR        the snapshot to serve (required)
  --root DIR            the checkout whose server runs (this one); another checkout gives "before" figures
  --rounds N            times each case runs; the table shows the median round (3)
  --against DIR         another checkout whose server runs the same cases in alternating rounds (a "before"):
                        both sides' figures and the ratio of their slowest meta answers, from one run
  --cases LIST          only the cases whose names contain one of these words, comma-separated (every case)
  --node-args ARGS      Node options for the servers besides \`npm start\`'s, space-separated (a profile:
                        "--cpu-prof --cpu-prof-dir=DIR", or "--trace-gc", whose lines go to the server's log)
  --keep                keep the servers' folders (their logs) and print where they are
  --meta-process        ask meta from a process of its own (bench/lib/meta-child.ts), so that this process's
                        work on the case's large answers (decoding, parsing) does not delay the meta figures`;

const values = parseCommandLine('hostile-search', USAGE, {
  snapshot: { type: 'string', default: '' },
  root: { type: 'string', default: resolve(import.meta.dirname, '..') },
  rounds: { type: 'string', default: '3' },
  against: { type: 'string' },
  cases: { type: 'string' },
  'node-args': { type: 'string', default: '' },
  keep: { type: 'boolean', default: false },
  'meta-process': { type: 'boolean', default: false },
});
if (values.snapshot === '') {
  console.error(USAGE);
  process.exit(2);
}
const rounds = Math.max(1, Math.min(20, Number(values.rounds) || 3));
const wanted = values.cases?.split(',').map((w) => w.trim().toLowerCase()).filter((w) => w !== '') ?? [];
const cases = HOSTILE_SEARCH_CASES.filter((c) => wanted.length === 0 || wanted.some((w) => c.name.toLowerCase().includes(w)));
if (cases.length === 0) {
  console.error(`hostile-search: --cases matched no case; the cases are: ${HOSTILE_SEARCH_CASES.map((c) => c.name).join('; ')}`);
  process.exit(2);
}
const nodeArgs = values['node-args'].split(' ').filter((a) => a !== '');

async function main(): Promise<void> {
  const tmp = await mkdtemp(join(tmpdir(), 'hostile-search-'));
  const sides = [{ name: 'this', root: values.root }, ...(values.against ? [{ name: 'against', root: resolve(values.against) }] : [])];
  const servers = [];
  const metaChild = values['meta-process'] ? startMetaChild() : undefined;
  try {
    for (const side of sides) servers.push(await startServer(side.root, resolve(values.snapshot), await mkdtemp(join(tmp, `server-${side.name}-`)), {}, nodeArgs));
    for (const side of sides) console.log(`${side.name.padEnd(10)} ${side.root}`);
    console.log(`snapshot   ${resolve(values.snapshot)}`);
    console.log(`machine    ${cpus().length} cores, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} (other work inflates wall-clock figures)`);
    for (const server of servers) await warmSearch(server.url);
    // Rounds alternate between the sides, so that both meet the same load on a shared machine.
    const rows: HostileSearchRow[][] = sides.map(() => []);
    for (const c of cases) {
      const runs: HostileSearchRow[][] = sides.map(() => []);
      for (let r = 0; r < rounds; r++) for (const [i, server] of servers.entries()) runs[i]!.push(await runSearchCase(server.url, c, r, server.pid, metaChild));
      for (const [i, list] of runs.entries()) {
        list.sort((a, b) => a.ms - b.ms);
        rows[i]!.push(list[Math.floor((list.length - 1) / 2)]!);
      }
    }
    const pad = (s: string, n: number) => s.padEnd(n);
    const num = (x: number) => x.toFixed(0).padStart(8);
    for (const [i, side] of sides.entries()) {
      console.log(`\n${side.name}: ${side.root}`);
      console.log(`${pad('case', 38)}${pad('answer', 34)}${'ms'.padStart(8)}${'meta max'.padStart(10)}${'meta p50'.padStart(10)}${'metas'.padStart(7)}${'  slowest meta: ran / waited'.padStart(29)}${'most ran'.padStart(10)}`);
      for (const r of rows[i]!) {
        console.log(
          `${pad(r.name, 38)}${pad(r.answered, 34)}${num(r.ms)}${num(r.metaMax).padStart(10)}${num(r.metaMedian).padStart(10)}${String(r.metaCount).padStart(7)}${r.metaFailed ? ` (${r.metaFailed} unanswered)` : ''}` +
            `${`${r.slowestMetaRunMs.toFixed(0)} / ${r.slowestMetaWaitMs.toFixed(0)}`.padStart(29)}${num(r.metaRunMax).padStart(10)}`,
        );
      }
    }
    if (sides.length === 2) {
      console.log('\nslowest meta, this / against (below 1: this side kept meta faster)');
      for (const [k, r] of rows[0]!.entries()) console.log(`${pad(r.name, 38)}${(r.metaMax / rows[1]![k]!.metaMax).toFixed(2)}×  (${r.metaMax.toFixed(0)} / ${rows[1]![k]!.metaMax.toFixed(0)} ms)`);
      console.log('\nmost the server ran while one meta was out, this / against');
      for (const [k, r] of rows[0]!.entries()) console.log(`${pad(r.name, 38)}${(r.metaRunMax / rows[1]![k]!.metaRunMax).toFixed(2)}×  (${r.metaRunMax.toFixed(0)} / ${rows[1]![k]!.metaRunMax.toFixed(0)} ms)`);
    }
    console.log(`\n(median of ${rounds} rounds by time; ms is until every request of the case was answered or refused; "ran / waited": the server's main thread's milliseconds on a core and waiting for one while the slowest meta was out; "most ran": its most milliseconds on a core while any one meta was out; load average now ${loadavg().map((l) => l.toFixed(1)).join(' ')})`);
  } finally {
    for (const server of servers) await server.stop();
    if (metaChild) await stop(metaChild.child, 2000);
    if (values.keep) console.log(`servers' folders kept in ${tmp}`);
    else await rm(tmp, { recursive: true, force: true });
  }
}

await main();
