/**
 * `npx tsx bench/predicates.ts [--pdf yes|no] [--disagreements]`: scores the predicate extractor on the 510(k)
 * summaries whose predicates FDA's decision summaries state (../shared/data/fda/summaries): precision, recall, the
 * ceiling (share of true predicates whose number the text mentions at all) and summaries per second, on the texts,
 * on two parts of them (the first two of every three devices in number order, and the third), against taking every
 * number, and on the same texts rendered as PDFs with a text layer (pdf-lib) and read back with pdf.js
 * (bench/lib/predicates.ts; `npm run bench` runs the same section). `--disagreements` lists the devices whose summary
 * names more predicates than the decision summary.
 *
 * A script, not a test: it prints figures and asserts nothing.
 */
import { parseCommandLine } from '../src/cli/args.ts';
import { measurePredicates, predicateLines } from './lib/predicates.ts';

const USAGE = `Usage: npx tsx bench/predicates.ts [--pdf yes|no] [--disagreements]`;
const args = parseCommandLine('predicates-bench', USAGE, { pdf: { type: 'string' }, disagreements: { type: 'boolean' } });

const figures = await measurePredicates({ pdf: args.pdf !== 'no' });
if (!figures) {
  console.error('bench/predicates: the summaries (shared/data/fda/summaries beside the repository) are absent');
  process.exit(1);
}
for (const line of predicateLines(figures)) console.log(line);
if (args.disagreements) {
  console.log("\nSummaries naming more predicates than the decision summary (device: the summary's / the decision summary's):");
  for (const line of figures.disagreements) console.log(`  ${line}`);
}
