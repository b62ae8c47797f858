/**
 * `npx tsx bench/predicates.ts [--pdf yes|no] [--disagreements]`: scores the predicate extractor on the 510(k)
 * summaries whose predicates FDA's decision summaries state (../shared/data/fda/summaries): precision, recall, the
 * ceiling (share of true predicates whose number the text mentions at all) and summaries per second, on the texts,
 * on two parts of them (the first two of every three devices in number order, and the third), against taking every
 * number, and on the same texts rendered as PDFs with a text layer (pdf-lib) and read back with pdf.js.
 * `--disagreements` lists the devices whose summary names more predicates than the decision summary.
 *
 * A script, not a test: it prints figures and asserts nothing.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseCommandLine } from '../src/cli/args.ts';
import { extractPredicates } from '../build/predicates/extract.ts';
import { findNumbers } from '../build/predicates/numbers.ts';
import { summaryFromBytes } from '../build/predicates/read.ts';
import { scorePairs, type Score } from '../build/predicates/score.ts';
import { plainText } from '../build/predicates/text.ts';
import { readTruth, summariesDir, summaryPdf } from '../test/helpers/summary-pdf.ts';

const USAGE = `Usage: npx tsx bench/predicates.ts [--pdf yes|no] [--disagreements]`;
const args = parseCommandLine('predicates-bench', USAGE, { pdf: { type: 'string' }, disagreements: { type: 'boolean' } });

const dir = summariesDir();
if (!dir) {
  console.error('bench/predicates: the summaries (shared/data/fda/summaries beside the repository) are absent');
  process.exit(1);
}
const truth = readTruth(dir);
const devices = [...truth.keys()].sort();
const texts = new Map(devices.map((d) => [d, readFileSync(join(dir, 'text', `${d}.md`), 'utf8')]));

type Run = { found: Map<string, string[]>; mentioned: Map<string, string[]>; seconds: number };

function runOn(get: (d: string) => string | null): Run {
  const found = new Map<string, string[]>();
  const mentioned = new Map<string, string[]>();
  const t0 = performance.now();
  for (const d of devices) {
    const text = get(d);
    if (text === null) continue;
    const r = extractPredicates(text, d);
    found.set(d, r.predicates.map((p) => p.id));
    mentioned.set(d, r.mentioned);
  }
  return { found, mentioned, seconds: (performance.now() - t0) / 1000 };
}

const part = (keep: (i: number) => boolean) => new Map(devices.filter((_, i) => keep(i)).map((d) => [d, truth.get(d) as string[]]));
const fmt = (s: Score) => `precision ${s.precision.toFixed(3)}  recall ${s.recall.toFixed(3)}  ceiling ${s.ceiling.toFixed(3)}  (${s.correct}/${s.foundPairs} found, ${s.truePairs} true, ${s.devices} devices)`;

const text = runOn((d) => texts.get(d) ?? null);
console.log(`texts            ${fmt(scorePairs(text.found, truth, text.mentioned))}  ${(devices.length / text.seconds).toFixed(0)} summaries/s`);
console.log(`  part 1 (2 of 3) ${fmt(scorePairs(text.found, part((i) => i % 3 !== 2), text.mentioned))}`);
console.log(`  part 2 (1 of 3) ${fmt(scorePairs(text.found, part((i) => i % 3 === 2), text.mentioned))}`);
const every = new Map(devices.map((d) => [d, [...new Set(findNumbers(plainText(texts.get(d) as string)).map((h) => h.id))].filter((id) => id !== d)]));
console.log(`every number     ${fmt(scorePairs(every, truth, every))}`);

if (args.pdf !== 'no') {
  const pdfTexts = new Map<string, string | null>();
  const t0 = performance.now();
  const pdfs = new Map<string, Uint8Array>();
  for (const d of devices) pdfs.set(d, await summaryPdf(plainText(texts.get(d) as string)));
  const rendered = (performance.now() - t0) / 1000;
  const t1 = performance.now();
  let notRead = 0;
  for (const d of devices) {
    const s = await summaryFromBytes(pdfs.get(d) as Uint8Array, 'pdf');
    if (s.status !== 'read') notRead++;
    pdfTexts.set(d, s.status === 'read' ? s.text : null);
  }
  const parsed = (performance.now() - t1) / 1000;
  const pdf = runOn((d) => pdfTexts.get(d) ?? null);
  console.log(`PDFs             ${fmt(scorePairs(pdf.found, truth, pdf.mentioned))}  ${(devices.length / (parsed + pdf.seconds)).toFixed(0)} summaries/s with pdf.js (${notRead} not read; rendering took ${rendered.toFixed(1)} s)`);
}

if (args.disagreements) {
  console.log("\nSummaries naming more predicates than the decision summary (device: the summary's / the decision summary's):");
  for (const d of devices) {
    const mine = text.found.get(d) ?? [];
    const key = truth.get(d) as string[];
    if (mine.length > key.length && key.every((k) => mine.includes(k))) console.log(`  ${d}: ${mine.join(' ')} / ${key.join(' ')}`);
  }
}
