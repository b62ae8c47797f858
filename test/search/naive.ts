import type { ClearanceRecord } from '../../src/contract/index.ts';
import { makeRecord } from '../helpers/records.ts';
import { tokenize } from '../../src/search/tokenize.ts';

/**
 * Search as docs/contract.md section 6 and docs/search.md state it, by a plain scan over every record: the reference the
 * index is checked against. Deliberately written without any of the engine's code but the tokenizer.
 */
export type NaiveRequest = {
  query: string;
  applicant: string | null;
  productCode: string | null;
  yearFrom: number | null;
  yearTo: number | null;
};
export type NaiveFacet = { field: string; values: { value: string | number; count: number }[] };
export type NaiveResult = { kNumbers: string[]; facets: NaiveFacet[] };

export const sameApplicant = (s: string): string => s.trim().split(/\s+/).join(' ').toLowerCase();

/** The contract's filters (section 6): product code equal, applicant equal ignoring case and runs of spaces, decision year within the bounds. */
export function passesFilters(
  r: ClearanceRecord,
  req: { productCode: string | null; applicant: string | null; yearFrom: number | null; yearTo: number | null },
): boolean {
  if (req.productCode !== null && r.productCode !== req.productCode) return false;
  if (req.applicant !== null && (r.applicant === null || sameApplicant(r.applicant) !== sameApplicant(req.applicant))) return false;
  if (req.yearFrom === null && req.yearTo === null) return true;
  if (r.decisionDate === null) return false;
  const year = Number(r.decisionDate.slice(0, 4));
  return (req.yearFrom === null || year >= req.yearFrom) && (req.yearTo === null || year <= req.yearTo);
}

/** Points of one query word on one record: n + 2, n + 1, 1 or 0 (primary whole, primary prefix, secondary whole,
 * secondary prefix), or null when the word does not match. */
function wordPoints(word: string, primary: string[], secondary: string[], n: number): number | null {
  if (primary.includes(word)) return n + 2;
  if (primary.some((p) => p.startsWith(word))) return n + 1;
  if (secondary.includes(word)) return 1;
  if (secondary.some((s) => s.startsWith(word))) return 0;
  return null;
}

export function naiveSearch(
  records: readonly ClearanceRecord[],
  deviceTypes: ReadonlyMap<string, string | null>,
  req: NaiveRequest,
): NaiveResult {
  const words = [...new Set(tokenize(req.query))];
  const n = words.length;
  const hits: { r: ClearanceRecord; score: number }[] = [];
  for (const r of records) {
    if (!passesFilters(r, req)) continue;
    const primary = [...tokenize(r.deviceName), r.kNumber.toLowerCase(), ...(r.productCode ? [r.productCode.toLowerCase()] : [])];
    const deviceType = r.productCode === null ? null : (deviceTypes.get(r.productCode) ?? null);
    const secondary = [...tokenize(r.applicant ?? ''), ...tokenize(deviceType ?? '')];
    let score = 0;
    let all = true;
    for (const w of words) {
      const p = wordPoints(w, primary, secondary, n);
      if (p === null) {
        all = false;
        break;
      }
      score += p;
    }
    if (all) hits.push({ r, score });
  }
  hits.sort(
    (a, b) =>
      b.score - a.score ||
      compareDesc(a.r.decisionDate, b.r.decisionDate) ||
      (a.r.kNumber < b.r.kNumber ? 1 : a.r.kNumber > b.r.kNumber ? -1 : 0),
  );
  const matched = hits.map((h) => h.r);
  return { kNumbers: matched.map((r) => r.kNumber), facets: naiveFacets(records, matched) };
}

/** Descending, null last. */
function compareDesc(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a < b ? 1 : -1;
}

function naiveFacets(all: readonly ClearanceRecord[], matched: readonly ClearanceRecord[]): NaiveFacet[] {
  // An applicant group shows its most frequent spelling over the whole snapshot, ties to the smallest.
  const spellings = new Map<string, Map<string, number>>();
  for (const r of all) {
    if (r.applicant === null) continue;
    const key = sameApplicant(r.applicant);
    const m = spellings.get(key) ?? new Map<string, number>();
    m.set(r.applicant, (m.get(r.applicant) ?? 0) + 1);
    spellings.set(key, m);
  }
  const display = (applicant: string): string => {
    const ranked = [...spellings.get(sameApplicant(applicant))!].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    return ranked[0]![0];
  };
  const count = <V extends string | number>(values: (V | null)[]) => {
    const counts = new Map<V, number>();
    for (const v of values) if (v !== null) counts.set(v, (counts.get(v) ?? 0) + 1);
    return [...counts]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .slice(0, 10)
      .map(([value, c]) => ({ value, count: c }));
  };
  return [
    { field: 'productCode', values: count(matched.map((r) => r.productCode)) },
    { field: 'applicant', values: count(matched.map((r) => (r.applicant === null ? null : display(r.applicant)))) },
    { field: 'decisionYear', values: count(matched.map((r) => (r.decisionDate === null ? null : Number(r.decisionDate.slice(0, 4))))) },
  ];
}

/** A record for table tests: only the members search reads need saying. */
export function record(
  kNumber: string,
  deviceName: string,
  more: { applicant?: string | null; productCode?: string | null; decisionDate?: string | null } = {},
): ClearanceRecord {
  return makeRecord(kNumber, { deviceName, ...more });
}
