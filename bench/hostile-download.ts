/**
 * The mirror and the sync against a hostile origin on 127.0.0.1: a gzip bomb served as the mirror's meta.json, and a
 * pmn7680.zip with an extra entry of zeros for the sync. Each run is a child process (`npm run mirror`, `npm run sync`
 * as a user starts them) under /usr/bin/time -v; the script prints its peak RSS, whether it failed with the expected
 * message, and whether the published snapshot was left as it was. Target: peak RSS under 300 MiB.
 *
 *   npx tsx bench/hostile-download.ts --snapshot DIR [--bomb-mib 1536] [--only mirror|sync]
 *
 * A script, not a test: it prints figures and asserts nothing about time.
 */
import { loadavg } from 'node:os';
import { parseCommandLine } from '../src/cli/args.ts';
import { downloadBombsProblem, runDownloadBombs, type DownloadRow } from './lib/hostile-download.ts';

const USAGE = `Usage: npx tsx bench/hostile-download.ts --snapshot DIR [options]

Runs npm run mirror and npm run sync as child processes against a hostile origin on 127.0.0.1 (a gzip bomb as the
mirror's meta.json, a zip with an extra entry of zeros for the sync) and prints each run's peak RSS, whether it failed
with the expected message, and whether the published snapshot was left as it was. Needs /usr/bin/time.

  --snapshot DIR    a built snapshot the origin serves to the mirror (only read) (default snapshot)
  --bomb-mib N      what each bomb inflates to, in MiB (default 1536)
  --only WHICH      mirror or sync (default both)`;

const values = parseCommandLine('hostile-download', USAGE, {
  snapshot: { type: 'string', default: 'snapshot' },
  'bomb-mib': { type: 'string', default: '1536' },
  only: { type: 'string' },
});
const bombBytes = Number(values['bomb-mib']) * 1024 * 1024;
if (!Number.isInteger(bombBytes) || bombBytes <= 0) throw new Error('Expected `--bomb-mib` to be a whole number above 0');
if (values.only !== undefined && values.only !== 'mirror' && values.only !== 'sync') throw new Error('Expected `--only` to be mirror or sync');

const problem = downloadBombsProblem();
if (problem) throw new Error(problem);

const line = (r: DownloadRow) =>
  `${r.name.padEnd(58)} peak RSS ${(r.peakRssBytes / 1048576).toFixed(0).padStart(4)} MiB  ${r.seconds.toFixed(1).padStart(5)} s  exit ${r.exitCode}  message ${r.messageAsExpected ? 'as expected' : 'NOT as expected'}  snapshot ${r.snapshotUntouched ? 'untouched' : 'CHANGED'}`;
console.log(`load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}; bombs inflate to ${bombBytes.toLocaleString('en-US')} bytes`);
const rows = await runDownloadBombs({
  snapshotDir: values.snapshot,
  bombBytes,
  ...(values.only && { only: values.only as 'mirror' | 'sync' }),
  log: (l) => console.log(l),
  onRow: (r) => {
    console.log(line(r));
    if (!r.messageAsExpected) console.log(`  output: ${r.output}`);
  },
});
console.log(`\nsummary (target: peak RSS under 300 MiB)\n${rows.map(line).join('\n')}`);
