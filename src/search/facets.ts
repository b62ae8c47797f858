import { MAX_YEAR, NO_APPLICANT, NO_CODE } from '../contract/search-index.ts';
import type { Facet } from '../contract/envelope.ts';
import type { SearchIndex } from './model.ts';

export const FACET_SIZE = 10;

/** Matches as a list of document ids, or as one id range (no query words and at most a year filter). */
export type DocSet = Uint32Array | { lo: number; hi: number };

/**
 * The three facets over every match (not just the page): productCode, applicant, decisionYear, each its ten most
 * frequent values, count descending then value ascending, documents without the value not counted. Code and applicant
 * ids are assigned in value order, so "value ascending" is "id ascending" for all three.
 */
export function countFacets(index: SearchIndex, docs: DocSet): Facet[] {
  const { docCode, docYear, docApplicant } = index;
  // Years are 0 (no decision date, dropped after) or 1900..9999, so they index an array without a branch.
  const codes = new Uint32Array(index.codes.length);
  const years = new Uint32Array(MAX_YEAR + 1);
  const applicants = new Uint32Array(index.applicants.length);
  if (docs instanceof Uint32Array) {
    for (let i = 0; i < docs.length; i++) {
      const d = docs[i]!;
      const c = docCode[d]!;
      if (c !== NO_CODE) codes[c]!++;
      years[docYear[d]!]!++;
      const a = docApplicant[d]!;
      if (a !== NO_APPLICANT) applicants[a]!++;
    }
  } else {
    for (let d = docs.lo; d < docs.hi; d++) {
      const c = docCode[d]!;
      if (c !== NO_CODE) codes[c]!++;
      years[docYear[d]!]!++;
      const a = docApplicant[d]!;
      if (a !== NO_APPLICANT) applicants[a]!++;
    }
  }
  years[0] = 0;
  return [
    { field: 'productCode', values: topCounts(codes, FACET_SIZE).map(([id, count]) => ({ value: index.codes[id]!, count })) },
    { field: 'applicant', values: topCounts(applicants, FACET_SIZE).map(([id, count]) => ({ value: index.applicants[id]!, count })) },
    { field: 'decisionYear', values: topCounts(years, FACET_SIZE).map(([year, count]) => ({ value: year, count })) },
  ];
}

/** The `k` ids with the highest non-zero counts, count descending then id ascending, as [id, count] pairs. */
export function topCounts(counts: Uint32Array, k: number): [number, number][] {
  const best: [number, number][] = [];
  let floor = 0; // the count an id must beat to enter a full list; ids come ascending, so a tie never enters
  for (let id = 0; id < counts.length; id++) {
    const count = counts[id]!;
    if (count === 0 || (best.length === k && count <= floor)) continue;
    if (best.length === k) best.pop();
    let at = best.length;
    while (at > 0 && best[at - 1]![1] < count) at--;
    best.splice(at, 0, [id, count]);
    if (best.length === k) floor = best[k - 1]![1];
  }
  return best;
}
