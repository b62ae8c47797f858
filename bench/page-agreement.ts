/**
 * Server mode and static mode side by side over one snapshot, in Debian's Chromium: the searches of the browser
 * tests' agreement suite (test/browser/agreement.ts), each answered by the page against the API and by the page over
 * the snapshot's static files, compared by the same function as the tests (totals, first page, facet counts).
 *
 *   npx tsx bench/page-agreement.ts --snapshot DIR [--static-snapshot DIR] [--only SEARCH]... [--timeout-s 300]
 *
 * For a snapshot too large to build in the test suite (a generated 1,000,000 records, with its chunked index): prints
 * one line per search and exits 1 when any search disagrees.
 */
import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { parseCommandLine, runCommand, UsageError } from '../src/cli/args.ts';
import { SEARCH_CHUNKS_PATH } from '../src/contract/search-chunks.ts';
import { createApp } from '../src/server/app.ts';
import { AGREEMENT_SEARCHES, answerDifferences, pageAnswer, type PageAnswer } from '../test/browser/agreement.ts';
import { CHROMIUM, launchChromium } from '../test/browser/chromium.ts';
import { PUBLIC_DIR, startStaticHost } from '../test/browser/static-host.ts';

const USAGE = `Usage: npx tsx bench/page-agreement.ts --snapshot DIR [options]

Runs the browser tests' agreement searches (test/browser/agreement.ts) in server mode and in static mode over one
snapshot and compares what the page shows: the total, the first page and every facet count. Prints one line per
search; exits 1 when any disagrees. Needs Debian's Chromium (.ci/browser-deps.sh installs it).

  --snapshot DIR          the snapshot both modes answer from; static mode reads its chunked index (search/chunks.json)
  --static-snapshot DIR   serve this copy to static mode instead: the same snapshot with the chunked index added
                          (build/search-chunks.ts makes one for a snapshot built before it)
  --only SEARCH           run only this search (an address's hash without #, as listed in agreement.ts); may repeat
  --timeout-s N           the longest one page may take to show a search's final counts (300)`;

async function main() {
  const values = parseCommandLine('page-agreement', USAGE, {
    snapshot: { type: 'string' },
    'static-snapshot': { type: 'string' },
    only: { type: 'string', multiple: true },
    'timeout-s': { type: 'string', default: '300' },
  });
  if (!values.snapshot) throw new UsageError('--snapshot is required');
  const snapshot = realpathSync(values.snapshot);
  const staticDir = realpathSync(values['static-snapshot'] ?? values.snapshot);
  if (!existsSync(join(staticDir, SEARCH_CHUNKS_PATH))) throw new UsageError(`${staticDir} has no ${SEARCH_CHUNKS_PATH}: static mode would not search the snapshot's own index`);
  const timeoutS = Number(values['timeout-s']);
  if (!Number.isInteger(timeoutS) || timeoutS < 10 || timeoutS > 3600) throw new UsageError('--timeout-s must be a whole number from 10 to 3600');
  const searches: readonly string[] = values.only ?? AGREEMENT_SEARCHES;
  const unknown = searches.filter((s) => !(AGREEMENT_SEARCHES as readonly string[]).includes(s));
  if (unknown.length > 0) throw new UsageError(`--only ${unknown[0]} is not one of the agreement searches`);
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing; run .ci/browser-deps.sh`);

  const app = await createApp({ snapshotPath: snapshot, publicDir: PUBLIC_DIR, syncStatePath: null, pollMs: 0, watch: false, logger: { request: () => {}, info: () => {}, error: () => {} } });
  const server = await app.listen(0, '127.0.0.1');
  const statics = await startStaticHost(staticDir);
  const browser = await launchChromium();
  const errors: string[] = [];
  let disagreements = 0;
  try {
    // A snapshot the server refuses leaves it answering 503, and the page would wait for it: say so instead.
    const meta = await fetch(`${server.url}/v1/query`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ version: 1, operation: 'device-510k.meta', input: {} }) });
    if (!meta.ok) throw new Error(`the server does not answer from --snapshot ${snapshot} (HTTP ${meta.status}: ${((await meta.json().catch(() => null)) as { error?: { message?: string } } | null)?.error?.message ?? 'no message'})`);
    const [a, b] = [await browser.context.newPage(), await browser.context.newPage()];
    for (const p of [a, b]) p.on('pageerror', (err) => errors.push(err.message));
    console.log(`snapshot ${snapshot}${staticDir !== snapshot ? `\nstatic mode serves ${staticDir}` : ''}\n${searches.length} searches, server mode then static mode, one page each\n`);
    for (const search of searches) {
      const started = Date.now();
      const fromServer = await pageAnswer(a, `${server.url}/`, search, timeoutS * 1000);
      const serverMs = Date.now() - started;
      const fromStatic: PageAnswer = await pageAnswer(b, statics.url, search, timeoutS * 1000);
      const staticMs = Date.now() - started - serverMs;
      const modes = [await a.getAttribute('html', 'data-mode'), await b.getAttribute('html', 'data-mode'), await b.getAttribute('html', 'data-engine')];
      const differences = modes.join() === 'server,static,index' ? answerDifferences(fromServer, fromStatic) : [`the pages ran as ${modes.join(', ')}, not server, static and index`];
      if (differences.length > 0) disagreements++;
      const figures = `${fromServer.total.toLocaleString('en-US').padStart(9)} total, ${String(fromServer.facets.length).padStart(3)} facet values; ${(serverMs / 1000).toFixed(1)} s and ${(staticMs / 1000).toFixed(1)} s`;
      console.log(`${differences.length === 0 ? 'agree   ' : 'DISAGREE'} #${search.padEnd(40)} ${figures}`);
      for (const d of differences) console.log(`           ${d}`);
    }
  } finally {
    await browser.close();
    await statics.close();
    await app.close({ graceMs: 1000 });
  }
  if (errors.length > 0) console.log(`\nerrors on the pages:\n${errors.map((e) => `  ${e}`).join('\n')}`);
  console.log(`\n${searches.length - disagreements} of ${searches.length} searches agree`);
  if (disagreements > 0 || errors.length > 0) process.exitCode = 1;
}

runCommand('page-agreement', main);
