/**
 * Writes the latest run's tables into docs/performance.md, between its two markers, from bench/results.json: the
 * same tables `npm run bench` prints. A full `npm run bench` does this itself; run this after changing how the
 * report lays out its tables, or with --check to see whether the page is up to date.
 *
 *   npx tsx bench/report-docs.ts [--results FILE] [--doc FILE] [--check]
 */
import { readFile } from 'node:fs/promises';
import { relative, resolve } from 'node:path';
import { parseCommandLine, runCommand } from '../src/cli/args.ts';
import { renderResultsSection, replaceResults, writeResultsInto } from './lib/docs-results.ts';
import type { Results } from './lib/results.ts';

const USAGE = `Usage: npx tsx bench/report-docs.ts [options]

Writes the results section of docs/performance.md (between its two marker lines) from bench/results.json.

  --results FILE   the run to show (bench/results.json)
  --doc FILE       the page to write (docs/performance.md)
  --check          write nothing; exit 1 if the page does not show the run as it would be written`;

const values = parseCommandLine('report-docs', USAGE, {
  results: { type: 'string', default: 'bench/results.json' },
  doc: { type: 'string', default: 'docs/performance.md' },
  check: { type: 'boolean', default: false },
});

runCommand('report-docs', async () => {
  const resultsPath = resolve(values.results);
  const docPath = resolve(values.doc);
  const results = JSON.parse(await readFile(resultsPath, 'utf8')) as Results;
  const name = relative(process.cwd(), docPath);
  if (values.check) {
    const doc = await readFile(docPath, 'utf8');
    if (replaceResults(doc, renderResultsSection(results)) !== doc) {
      console.error(`${name} does not show ${relative(process.cwd(), resultsPath)}: run npx tsx bench/report-docs.ts`);
      process.exitCode = 1;
      return;
    }
    console.log(`${name} shows ${relative(process.cwd(), resultsPath)}.`);
    return;
  }
  const changed = await writeResultsInto(docPath, results);
  console.log(changed ? `Wrote the results of ${results.startedAt.slice(0, 10)} into ${name}.` : `${name} already shows them.`);
});
