import type {
  BuildReport,
  Classification,
  ClearanceRecord,
  Download,
  MetaData,
  ProductCodeCount,
  ProductCodeEntry,
} from '../../src/contract/index.ts';
import { FACET_FIELDS, SORTS } from '../../src/contract/index.ts';
import { QUALIFIER_NAMES, QUALIFIERS } from '../../src/search/grammar.ts';

/** Clearances per product code. */
export function countByProductCode(records: readonly ClearanceRecord[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of records) if (r.productCode !== null) counts.set(r.productCode, (counts.get(r.productCode) ?? 0) + 1);
  return counts;
}

/** Every code of the classification file and every code seen on a clearance, code ascending. */
export function productCodeEntries(classifications: readonly Classification[], counts: ReadonlyMap<string, number>): ProductCodeEntry[] {
  const byCode = new Map<string, Classification>(classifications.map((c) => [c.productCode, c]));
  const codes = [...new Set([...byCode.keys(), ...counts.keys()])].sort();
  return codes.map((code) => {
    const c = byCode.get(code);
    return {
      productCode: code,
      deviceType: c?.deviceType ?? null,
      deviceClass: c?.deviceClass ?? null,
      regulationNumber: c?.regulationNumber ?? null,
      medicalSpecialty: c?.medicalSpecialty ?? null,
      reviewPanel: c?.reviewPanel ?? null,
      definition: c?.definition ?? null,
      submissionType: c?.submissionType ?? null,
      unclassifiedReason: c?.unclassifiedReason ?? null,
      gmpExempt: c?.gmpExempt ?? null,
      thirdPartyEligible: c?.thirdPartyEligible ?? null,
      thirdPartyReviewCode: c?.thirdPartyReviewCode ?? null,
      implant: c?.implant ?? null,
      lifeSustaining: c?.lifeSustaining ?? null,
      summaryMalfunctionReporting: c?.summaryMalfunctionReporting ?? null,
      physicalState: c?.physicalState ?? null,
      technicalMethod: c?.technicalMethod ?? null,
      targetArea: c?.targetArea ?? null,
      clearanceCount: counts.get(code) ?? 0,
    };
  });
}

/** Count descending, then code ascending. */
export function topProductCodes(counts: ReadonlyMap<string, number>): ProductCodeCount[] {
  return [...counts.entries()]
    .map(([code, count]) => ({ code, count }))
    .sort((a, b) => b.count - a.count || (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
}

export function decisionDateRange(records: readonly ClearanceRecord[]): { min: string | null; max: string | null } {
  let min: string | null = null;
  let max: string | null = null;
  for (const r of records) {
    const d = r.decisionDate;
    if (d === null) continue;
    if (min === null || d < min) min = d;
    if (max === null || d > max) max = d;
  }
  return { min, max };
}

const n = (x: number) => x.toLocaleString('en-US');
const KIND_NAMES = { pmn: 'FDA 510(k) pipe file', 'openfda-json': 'openFDA 510(k) JSON download', foiclass: 'FDA product classification file' };

/** The plain sentences of meta.sourceNotes, made from the build report. */
export function sourceNotes(
  records: readonly ClearanceRecord[],
  entries: readonly ProductCodeEntry[],
  report: Omit<BuildReport, 'sourceRevision'>,
  extraNotes: readonly string[] = [],
): string[] {
  const notes: string[] = [];
  notes.push(
    `Built from ${report.sources.length} source file${report.sources.length === 1 ? '' : 's'} in precedence order: a later file overrides an earlier one field by field, and an empty value never overrides a non-empty one.`,
  );
  for (const s of report.sources) {
    const range = s.decisionDateMin ? `, decision dates ${s.decisionDateMin} to ${s.decisionDateMax}` : '';
    const unit = s.kind === 'foiclass' ? 'product codes' : 'new records';
    const parts = [`${n(s.records)} ${unit}`];
    if (s.merged) parts.push(`${n(s.merged)} merged into earlier rows`);
    if (s.skipped) parts.push(`${n(s.skipped)} skipped`);
    notes.push(`${s.name} (${KIND_NAMES[s.kind]}): ${n(s.rows)} rows${range}; ${parts.join(', ')}.`);
  }
  const { min, max } = decisionDateRange(records);
  const years = new Set(records.map((r) => r.decisionDate?.slice(0, 4)).filter(Boolean));
  const classified = entries.filter((e) => e.deviceType !== null || e.deviceClass !== null).length;
  notes.push(
    `Coverage: ${n(records.length)} 510(k) clearances` +
      (min ? ` decided from ${min} to ${max} across ${years.size} decision years` : '') +
      `; ${n(entries.length)} product codes, ${n(classified)} of them classified.`,
  );
  const undated = records.filter((r) => r.decisionDate === null).length;
  if (undated) notes.push(`${n(undated)} clearances have no usable decision date and never pass a year filter.`);
  const skippedTotal = report.skipped.length;
  notes.push(
    skippedTotal === 0
      ? 'No source row was skipped.'
      : `Skipped ${n(skippedTotal)} rows: ${Object.entries(report.skippedByReason).map(([reason, count]) => `${n(count)} ${reason}`).join('; ')}.`,
  );
  if (report.fieldIssues.length) {
    notes.push(
      `Kept ${n(report.fieldIssues.length)} values as null because they could not be read: ${Object.entries(report.fieldIssuesByReason).map(([reason, count]) => `${n(count)} ${reason}`).join('; ')}.`,
    );
  }
  notes.push(...extraNotes);
  return notes;
}

export const META_TITLE = 'FDA 510(k) Premarket Notifications';
export const SUPPORTED_FILTERS = ['query', 'applicant', 'productCode', 'yearFrom', 'yearTo'];
/** Every value search's `sort` accepts (the contract's two first). */
export const SUPPORTED_SORTS: string[] = [...SORTS];

export function metaData(totalRecords: number, notes: string[], downloads: readonly Download[]): MetaData {
  return {
    title: META_TITLE,
    totalRecords,
    supportedFilters: SUPPORTED_FILTERS,
    supportedSorts: SUPPORTED_SORTS,
    sourceNotes: notes,
    qualifiers: QUALIFIER_NAMES.map((name) => ({ name: `${name}:`, accepts: QUALIFIERS[name] })),
    facetFields: [...FACET_FIELDS],
    downloads: [...downloads],
  };
}
