import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { extractPredicates } from '../../build/predicates/extract.ts';
import { findNumbers } from '../../build/predicates/numbers.ts';
import { summaryFromBytes } from '../../build/predicates/read.ts';
import { edgesCsv, judge } from '../../build/predicates/run.ts';
import { scorePairs } from '../../build/predicates/score.ts';
import { plainText } from '../../build/predicates/text.ts';
import { readTruth, summariesDir, summaryPdf } from '../helpers/summary-pdf.ts';

const DIR = summariesDir();
if (!DIR) console.warn('test/predicates/corpus: skipped: the 510(k) summaries (shared/data/fda/summaries beside the repository) are absent');
const ROOT = resolve(import.meta.dirname, '../..');

describe.skipIf(!DIR)('the extractor on real 510(k) summaries, scored against FDA’s decision summaries', () => {
  const dir = DIR as string;
  const truth = readTruth(dir);
  const devices = [...truth.keys()].sort();
  const text = (d: string) => readFileSync(join(dir, 'text', `${d}.md`), 'utf8');

  it('is far more precise than taking every number, and finds nearly all the text allows', () => {
    const found = new Map<string, string[]>();
    const mentioned = new Map<string, string[]>();
    const every = new Map<string, string[]>();
    for (const d of devices) {
      const r = extractPredicates(text(d), d);
      found.set(d, r.predicates.map((p) => p.id));
      mentioned.set(d, r.mentioned);
      every.set(d, [...new Set(findNumbers(plainText(text(d))).map((h) => h.id))].filter((id) => id !== d));
    }
    const mine = scorePairs(found, truth, mentioned);
    const baseline = scorePairs(every, truth, every);
    expect(devices.length).toBe(321);
    expect(baseline.precision).toBeLessThan(0.7);
    expect(mine.precision).toBeGreaterThanOrEqual(0.92);
    expect(mine.recall).toBeGreaterThanOrEqual(0.86);
    expect(mine.precision - baseline.precision).toBeGreaterThan(0.2);
  });

  it('reads the same predicates from the texts rendered as PDFs with a text layer', { timeout: 180_000 }, async () => {
    // Every eighth summary: rendering and reading all of them is the bench's work.
    const sample = devices.filter((_, i) => i % 8 === 0);
    const fromText = new Map<string, string[]>();
    const fromPdf = new Map<string, string[]>();
    for (const d of sample) {
      fromText.set(d, extractPredicates(text(d), d).predicates.map((p) => p.id).sort());
      const read = await summaryFromBytes(await summaryPdf(plainText(text(d))), 'pdf');
      expect(read.status, d).toBe('read');
      if (read.status === 'read') fromPdf.set(d, extractPredicates(read.text, d).predicates.map((p) => p.id).sort());
    }
    const same = sample.filter((d) => JSON.stringify(fromText.get(d)) === JSON.stringify(fromPdf.get(d)));
    expect(same.length / sample.length).toBeGreaterThanOrEqual(0.95);
    const key = new Map(sample.map((d) => [d, truth.get(d) as string[]]));
    const t = scorePairs(fromText, key, fromText);
    const p = scorePairs(fromPdf, key, fromPdf);
    expect(Math.abs(t.precision - p.precision)).toBeLessThanOrEqual(0.05);
    expect(Math.abs(t.recall - p.recall)).toBeLessThanOrEqual(0.05);
  });

  it('ships exactly what the extractor finds in these summaries (data/fda/predicates/summary)', () => {
    const shipped = join(ROOT, 'data/fda/predicates/summary');
    const rows = devices.map((d) => judge(d, { status: 'read', text: text(d) }));
    expect(readFileSync(join(shipped, 'predicates.csv'), 'utf8')).toBe(edgesCsv(rows));
    const report = readFileSync(join(shipped, 'report.csv'), 'utf8').trim().split('\n');
    expect(report[0]).toBe('device,status,predicates,reason');
    expect(report.slice(1).map((l) => l.split(',')[0])).toEqual(devices);
    expect(JSON.parse(readFileSync(join(shipped, 'source.json'), 'utf8'))).toEqual({ source: 'summary', kind: 'predicate', report: 'report.csv' });
  });
});
