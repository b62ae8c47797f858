/**
 * The openFDA path's hostile requests in process, over a built snapshot: for each, the time to its answer, the
 * longest run between two turns it gave back (what a request arriving meanwhile waits for at most), its turns and
 * the RSS after it. Load-independent figures are the turns and the steps; times move with the machine's load.
 *
 *   npx tsx bench/openfda-slices.ts --snapshot DIR
 */
import { parseCommandLine } from '../src/cli/args.ts';
import { sourceStateOf } from '../src/api/source-state.ts';
import { answerOpenFda } from '../src/openfda/answer.ts';
import { openSnapshotDirectory } from '../src/node/index.ts';
import type { Snapshot } from '../src/snapshot/index.ts';
import { HOSTILE_OPENFDA_CASES } from './lib/hostile-search.ts';

const USAGE = `Usage: npx tsx bench/openfda-slices.ts --snapshot DIR

Runs the openFDA path's hostile requests in process over a built snapshot and prints, for each, the time to its
answer, the longest run between two turns, its turns and the RSS after it.`;
const values = parseCommandLine('openfda-slices', USAGE, { snapshot: { type: 'string' } });
if (!values.snapshot) {
  console.error('openfda-slices: Expected `--snapshot DIR` (see --help)');
  process.exit(2);
}
const snapshot = await openSnapshotDirectory(values.snapshot);
const deps = { now: () => new Date(), sourceState: (s: Snapshot | null, now: Date) => sourceStateOf({ manifest: s?.manifest ?? null, sync: null, now, maxAgeHours: 48 }) };
const MiB = 1024 * 1024;

// Round 0 warms the index and the per-index tables (as a server that has been answering has them); round 1 is shown.
for (const round of [0, 1])
for (const c of HOSTILE_OPENFDA_CASES) {
  for (const path of c.gets(round)) {
    let last = performance.now();
    let lastCpu = process.cpuUsage();
    let longest = 0;
    let longestCpu = 0;
    let turns = 0;
    const cpuSince = (from: NodeJS.CpuUsage) => {
      const d = process.cpuUsage(from);
      return (d.user + d.system) / 1000;
    };
    const pause = () =>
      new Promise<void>((resolve) => {
        longest = Math.max(longest, performance.now() - last);
        longestCpu = Math.max(longestCpu, cpuSince(lastCpu));
        turns++;
        setImmediate(() => {
          last = performance.now();
          lastCpu = process.cpuUsage();
          resolve();
        });
      });
    const started = performance.now();
    last = started;
    lastCpu = process.cpuUsage();
    const a = await answerOpenFda(deps, snapshot, path.startsWith('/device/510k') ? '510k' : 'classification', new URL(`http://bench${path}`), { pause });
    const ms = performance.now() - started;
    longest = Math.max(longest, performance.now() - last);
    longestCpu = Math.max(longestCpu, cpuSince(lastCpu));
    const bytes = a.chunks.reduce((n, c) => n + c.length, 0);
    if (round === 1) console.log(`${c.name.padEnd(44)} ${a.status} ${String(bytes).padStart(8)} B  ${ms.toFixed(0).padStart(6)} ms  longest run ${longest.toFixed(1).padStart(6)} ms (CPU ${longestCpu.toFixed(1).padStart(5)} ms)  turns ${String(turns).padStart(4)}  rss ${(process.memoryUsage().rss / MiB).toFixed(0)} MiB`);
  }
}
