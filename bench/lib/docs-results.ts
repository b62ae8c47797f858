import { readFile, writeFile } from 'node:fs/promises';
import { renderReport } from './report.ts';
import type { Results } from './results.ts';
import { fixed } from './stats.ts';

/**
 * docs/performance.md shows the latest full run, drawn from bench/results.json between these two lines. Everything
 * between them is rewritten by `npm run bench` (a full run) and by bench/report-docs.ts; nothing there is edited by hand.
 */
export const RESULTS_START = '<!-- results: written from bench/results.json by bench/report-docs.ts; do not edit by hand -->';
export const RESULTS_END = '<!-- end of results -->';

/** The run as the page shows it: which run, then the report's tables and verdicts, exactly as the bench prints them. */
export function renderResultsSection(r: Results): string {
  const day = r.startedAt.slice(0, 10);
  const how = r.mode === 'full' ? '`npm run bench`' : '`npm run bench -- --quick`';
  return [`The ${r.mode} run of ${day} (${how}, ${fixed(r.seconds / 60)} minutes; every figure and every round in \`bench/results.json\`).`, '', renderReport(r)].join('\n');
}

/** `doc` with the lines between the two markers replaced by `section`; an error names a marker that is missing or out of order. */
export function replaceResults(doc: string, section: string): string {
  const start = doc.indexOf(RESULTS_START);
  const end = doc.indexOf(RESULTS_END);
  if (start < 0) throw new Error(`Expected the page to hold the line ${RESULTS_START}`);
  if (end < 0 || end < start) throw new Error(`Expected the page to hold the line ${RESULTS_END} after ${RESULTS_START}`);
  return `${doc.slice(0, start + RESULTS_START.length)}\n\n${section}\n\n${doc.slice(end)}`;
}

/** Rewrites the results section of the page at `docPath` from `results`; returns whether its bytes changed. */
export async function writeResultsInto(docPath: string, results: Results): Promise<boolean> {
  const before = await readFile(docPath, 'utf8');
  const after = replaceResults(before, renderResultsSection(results));
  if (after === before) return false;
  await writeFile(docPath, after);
  return true;
}
