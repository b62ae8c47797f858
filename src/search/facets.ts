import { NO_APPLICANT, NO_CODE } from '../contract/search-index.ts';
import type { Facet } from '../contract/envelope.ts';
import type { SearchIndex } from './model.ts';

export const FACET_SIZE = 10;

/**
 * The three facets over every match (not just the page): productCode, applicant, decisionYear, each its ten most
 * frequent values, count descending then value ascending, documents without the value not counted. Code and applicant
 * ids are assigned in value order, so "value ascending" is "id ascending" for all three.
 */
export function countFacets(index: SearchIndex, docs: Uint32Array): Facet[] {
  const codes = new Counter(index.codes.length);
  const applicants = new Counter(index.applicants.length);
  const years = new Counter(0x10000);
  for (let i = 0; i < docs.length; i++) {
    const d = docs[i]!;
    const c = index.docCode[d]!;
    if (c !== NO_CODE) codes.add(c);
    const a = index.docApplicant[d]!;
    if (a !== NO_APPLICANT) applicants.add(a);
    const y = index.docYear[d]!;
    if (y !== 0) years.add(y);
  }
  return [
    { field: 'productCode', values: codes.top(FACET_SIZE).map(([id, count]) => ({ value: index.codes[id]!, count })) },
    { field: 'applicant', values: applicants.top(FACET_SIZE).map(([id, count]) => ({ value: index.applicants[id]!, count })) },
    { field: 'decisionYear', values: years.top(FACET_SIZE).map(([year, count]) => ({ value: year, count })) },
  ];
}

/** Counts over small integer ids, remembering which ids it saw so that few matches stay cheap to rank. */
export class Counter {
  private readonly counts: Uint32Array;
  private readonly seen: number[] = [];

  constructor(size: number) {
    this.counts = new Uint32Array(size);
  }

  add(id: number): void {
    if (this.counts[id]!++ === 0) this.seen.push(id);
  }

  /** The `k` ids with the highest counts, count descending then id ascending, as [id, count] pairs. */
  top(k: number): [number, number][] {
    const best: [number, number][] = [];
    for (const id of this.seen) {
      const count = this.counts[id]!;
      if (best.length === k) {
        const last = best[k - 1]!;
        if (count < last[1] || (count === last[1] && id > last[0])) continue;
        best.pop();
      }
      let at = best.length;
      while (at > 0 && (best[at - 1]![1] < count || (best[at - 1]![1] === count && best[at - 1]![0] > id))) at--;
      best.splice(at, 0, [id, count]);
    }
    return best;
  }
}
