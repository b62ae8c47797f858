import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { extractPredicates } from '../../build/predicates/extract.ts';
import { findNumbers } from '../../build/predicates/numbers.ts';
import { summaryFromBytes } from '../../build/predicates/read.ts';
import { scorePairs, type Score } from '../../build/predicates/score.ts';
import { plainText } from '../../build/predicates/text.ts';
import { readTruth, summariesDir, summaryPdf } from '../../test/helpers/summary-pdf.ts';

/**
 * The predicate extractor scored on the 510(k) summaries whose predicates FDA's decision summaries state
 * (../shared/data/fda/summaries): on the texts, on two parts of them (the first two of every three devices in number
 * order, and the third), against taking every number, and on the same texts rendered as PDFs with a text layer
 * (pdf-lib) and read back with pdf.js; each with summaries per second.
 */
export type PredicateFigures = {
  devices: number;
  texts: Score & { perSecond: number };
  part1: Score;
  part2: Score;
  everyNumber: Score;
  pdfs: (Score & { perSecond: number; notRead: number; renderSeconds: number }) | null;
  /** Devices whose summary names more predicates than the decision summary: `device: ours / FDA's`. */
  disagreements: string[];
};

type Run = { found: Map<string, string[]>; mentioned: Map<string, string[]>; seconds: number };

/** Null when the summaries are absent (they sit beside the repository, not in it). */
export async function measurePredicates(options: { pdf: boolean }): Promise<PredicateFigures | null> {
  const dir = summariesDir();
  if (!dir) return null;
  const truth = readTruth(dir);
  const devices = [...truth.keys()].sort();
  const texts = new Map(devices.map((d) => [d, readFileSync(join(dir, 'text', `${d}.md`), 'utf8')]));
  const runOn = (get: (d: string) => string | null): Run => {
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
  };
  const part = (keep: (i: number) => boolean) => new Map(devices.filter((_, i) => keep(i)).map((d) => [d, truth.get(d) as string[]]));

  const text = runOn((d) => texts.get(d) ?? null);
  const every = new Map(devices.map((d) => [d, [...new Set(findNumbers(plainText(texts.get(d) as string)).map((h) => h.id))].filter((id) => id !== d)]));
  let pdfs: PredicateFigures['pdfs'] = null;
  if (options.pdf) {
    const t0 = performance.now();
    const bytes = new Map<string, Uint8Array>();
    for (const d of devices) bytes.set(d, await summaryPdf(plainText(texts.get(d) as string)));
    const renderSeconds = (performance.now() - t0) / 1000;
    const t1 = performance.now();
    const pdfTexts = new Map<string, string | null>();
    let notRead = 0;
    for (const d of devices) {
      const s = await summaryFromBytes(bytes.get(d) as Uint8Array, 'pdf');
      if (s.status !== 'read') notRead++;
      pdfTexts.set(d, s.status === 'read' ? s.text : null);
    }
    const parsed = (performance.now() - t1) / 1000;
    const pdf = runOn((d) => pdfTexts.get(d) ?? null);
    pdfs = { ...scorePairs(pdf.found, truth, pdf.mentioned), perSecond: devices.length / (parsed + pdf.seconds), notRead, renderSeconds };
  }
  const disagreements: string[] = [];
  for (const d of devices) {
    const mine = text.found.get(d) ?? [];
    const key = truth.get(d) as string[];
    if (mine.length > key.length && key.every((k) => mine.includes(k))) disagreements.push(`${d}: ${mine.join(' ')} / ${key.join(' ')}`);
  }
  return {
    devices: devices.length,
    texts: { ...scorePairs(text.found, truth, text.mentioned), perSecond: devices.length / text.seconds },
    part1: scorePairs(text.found, part((i) => i % 3 !== 2), text.mentioned),
    part2: scorePairs(text.found, part((i) => i % 3 === 2), text.mentioned),
    everyNumber: scorePairs(every, truth, every),
    pdfs,
    disagreements,
  };
}

const fmt = (s: Score) =>
  `precision ${s.precision.toFixed(3)}  recall ${s.recall.toFixed(3)}  ceiling ${s.ceiling.toFixed(3)}  (${s.correct}/${s.foundPairs} found, ${s.truePairs} true, ${s.devices} devices)`;

/** The figures as lines, one per reading. */
export function predicateLines(f: PredicateFigures): string[] {
  return [
    `texts            ${fmt(f.texts)}  ${f.texts.perSecond.toFixed(0)} summaries/s`,
    `  part 1 (2 of 3) ${fmt(f.part1)}`,
    `  part 2 (1 of 3) ${fmt(f.part2)}`,
    `every number     ${fmt(f.everyNumber)}`,
    ...(f.pdfs
      ? [`PDFs             ${fmt(f.pdfs)}  ${f.pdfs.perSecond.toFixed(0)} summaries/s with pdf.js (${f.pdfs.notRead} not read; rendering took ${f.pdfs.renderSeconds.toFixed(1)} s)`]
      : []),
  ];
}
