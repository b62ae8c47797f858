import { NO_APPLICANT, NO_CODE } from '../contract/search-index.ts';
import type { SearchIndexData } from './codec.ts';
import { groupByColumn, type Rows } from './csr.ts';
import { applicantKey } from './tokenize.ts';
import { partitionPoint } from '../utils/bisect.ts';

/**
 * A loaded search index: the stored arrays plus lookups derived from them at load time (each a linear pass, cheaper
 * than storing and reading them): documents by K number, by product code and by applicant. Everything is typed
 * arrays; nothing is an object per document.
 */
export type SearchIndex = SearchIndexData & {
  docCount: number;
  /** Each document's deviceName terms, ascending (`docTermOffsets` and `docTermIds` as rows). */
  docTerms: Rows;
  /** Document ids in K number ascending order. */
  byKNumber: Uint32Array;
  codeDocs: Rows;
  applicantDocs: Rows;
  codesLower: string[];
};

export function openSearchIndex(data: SearchIndexData): SearchIndex {
  const docCount = data.docKNumber.length;
  return {
    ...data,
    docCount,
    docTerms: { offsets: data.docTermOffsets, values: data.docTermIds },
    byKNumber: sortByKNumber(data.docKNumber),
    codeDocs: groupByColumn(data.docCode, data.codes.length, NO_CODE),
    applicantDocs: groupByColumn(data.docApplicant, data.applicants.length, NO_APPLICANT),
    codesLower: data.codes.map((c) => c.toLowerCase()),
  };
}

/** K numbers are six digits, so a counting pass over a million slots sorts them in linear time. */
function sortByKNumber(kNumbers: Uint32Array): Uint32Array {
  if (kNumbers.length < 10_000) {
    const ids = Uint32Array.from(kNumbers.keys());
    return ids.sort((a, b) => kNumbers[a]! - kNumbers[b]!);
  }
  const slot = new Int32Array(1_000_000).fill(-1);
  for (let d = 0; d < kNumbers.length; d++) slot[kNumbers[d]!] = d;
  const out = new Uint32Array(kNumbers.length);
  let at = 0;
  for (let k = 0; k < slot.length && at < out.length; k++) if (slot[k]! >= 0) out[at++] = slot[k]!;
  if (at !== out.length) throw new Error('search index: K numbers are not unique');
  return out;
}

/** The applicant group the applicant filter names, or null when no clearance has that applicant. */
export function findApplicant(index: SearchIndex, applicant: string): number | null {
  const key = applicantKey(applicant);
  const lo = partitionPoint(0, index.applicantsByKey.length, (i) => applicantKey(index.applicants[index.applicantsByKey[i]!]!) < key);
  const id = index.applicantsByKey[lo];
  return id !== undefined && applicantKey(index.applicants[id]!) === key ? id : null;
}

/** The product code's index, or null when no clearance carries it. */
export function findCode(index: SearchIndex, code: string): number | null {
  const i = partitionPoint(0, index.codes.length, (i) => index.codes[i]! < code);
  return index.codes[i] === code ? i : null;
}

/** Documents whose decision year is within [from, to]: one id range, since ids run in decision date order. */
export function yearRange(index: SearchIndex, from: number | null, to: number | null): { lo: number; hi: number } {
  if (from === null && to === null) return { lo: 0, hi: index.docCount };
  const upper = to ?? 0xffff;
  const lower = from ?? 1; // year 0 stands for "no decision date", which never passes a year filter
  const years = index.docYear;
  const lo = partitionPoint(0, index.docCount, (d) => years[d]! > upper);
  const hi = partitionPoint(0, index.docCount, (d) => years[d]! >= lower);
  return { lo, hi: Math.max(lo, hi) };
}

