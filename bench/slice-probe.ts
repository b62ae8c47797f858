/**
 * The slices of a search, in one process over a snapshot's index: for each case, the engine run as the server runs it
 * (`runSearchSliced`), with a pause that times the work between two yield points. Prints each case's total, its
 * number of slices and its longest slice: how long one search can hold the event loop before it gives it back, the
 * figure that bounds a concurrent `meta` request's wait. Run it under `node --cpu-prof` to see what the longest
 * slices spend their time on.
 *
 *   npx tsx bench/slice-probe.ts --snapshot DIR [--rounds 3] [--cases NAME,...]
 *
 * A script, not a test: it prints figures and asserts nothing about time.
 */
import { readFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseCommandLine } from '../src/cli/args.ts';
import { loadSearchIndex } from '../src/search/load.ts';
import { runSearchSliced, type SearchRequest } from '../src/search/engine.ts';
import { HOSTILE_SEARCH_CASES } from './lib/hostile-search.ts';

const USAGE = `Usage: npx tsx bench/slice-probe.ts --snapshot DIR [options]

Loads the snapshot's search index and runs each hostile search case in slices, as the server does, timing the work
between two yield points. Prints per case: the answer (or the refusal), the total milliseconds, the number of slices
and the longest slice.

  --snapshot DIR    the snapshot whose index is loaded (required)
  --rounds N        rounds of each case; the longest slice of every round counts (3)
  --slice-docs N     documents a facet count reads between two yield points (the engine's default)
  --cases LIST      only the cases whose names start with these words, comma-separated (all)`;

const values = parseCommandLine('slice-probe', USAGE, {
  snapshot: { type: 'string', default: '' },
  rounds: { type: 'string', default: '3' },
  cases: { type: 'string' },
  'slice-docs': { type: 'string' },
});
const sliceDocs = values['slice-docs'] ? Number(values['slice-docs']) : undefined;
if (values.snapshot === '') {
  console.error('slice-probe: --snapshot DIR is required (see --help)');
  process.exit(2);
}
const rounds = Math.max(1, Math.min(20, Number(values.rounds) || 3));
const wanted = values.cases?.split(',').map((c) => c.trim().toLowerCase()) ?? null;
const dir = resolve(values.snapshot);

const index = await loadSearchIndex((path) => readFile(join(dir, path)));
console.log(`snapshot ${dir}: ${index.docCount.toLocaleString('en-US')} records; ${cpus().length} cores, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);

const pad = (s: string, n: number) => s.padEnd(n);
console.log(`\n${pad('case', 38)}${pad('answer', 30)}${'total ms'.padStart(10)}${'slices'.padStart(8)}${'longest'.padStart(10)}${'at slice'.padStart(10)}`);
for (const c of HOSTILE_SEARCH_CASES) {
  if (wanted && !wanted.some((w) => c.name.toLowerCase().startsWith(w))) continue;
  let longest = 0;
  let at = 0;
  let slices = 0;
  let total = 0;
  let answer = '';
  const long: { ms: number; at: number }[] = [];
  // Round -1 warms the code and the per-index tables (as a server that has been answering has them): not counted.
  for (let r = -1; r < rounds; r++) {
    for (const input of c.requests!(r)) {
      let mark = performance.now();
      let n = 0;
      const started = mark;
      const pause = async () => {
        const now = performance.now();
        n++;
        if (r >= 0) long.push({ ms: now - mark, at: n });
        if (r >= 0 && now - mark > longest) {
          longest = now - mark;
          at = n;
        }
        await new Promise((r) => setImmediate(r));
        mark = performance.now();
      };
      try {
        const outcome = await runSearchSliced(index, input as SearchRequest, { pause, ...(sliceDocs && { sliceDocs }) });
        answer = `${outcome.total.toLocaleString('en-US')} matches`;
      } catch (err) {
        answer = `refused: ${(err as Error).name}`;
      }
      const last = performance.now() - mark;
      if (r < 0) continue;
      long.push({ ms: last, at: n + 1 });
      if (last > longest) {
        longest = last;
        at = n + 1;
      }
      slices += n + 1;
      total += performance.now() - started;
    }
  }
  const runs = rounds * c.requests!(0).length;
  long.sort((a, b) => b.ms - a.ms);
  console.log(`${pad(c.name, 38)}${pad(answer, 30)}${(total / runs).toFixed(1).padStart(10)}${String(Math.round(slices / runs)).padStart(8)}${longest.toFixed(1).padStart(10)}${String(at).padStart(10)}   next: ${long.slice(1, 6).map((x) => `${x.ms.toFixed(1)}@${x.at}`).join(' ')}`);
}
console.log(`\n(total ms and slices are per request, averaged; longest is over every round; load average now ${loadavg().map((l) => l.toFixed(1)).join(' ')})`);
