import {
  toClearanceRecord,
  type BuildReport,
  type Classification,
  type ClearanceRecord,
  type ReportRow,
  type SourceSummary,
} from '../../src/contract/index.ts';
import { fromFoiclassRow } from '../normalize/classification.ts';
import { fromOpenFdaResult, fromPmnRow, type RowOutcome } from '../normalize/clearance.ts';
import type { Lookups } from '../normalize/lookups.ts';
import { decodeJsonText, decodePipeText, openFdaResults, pipeRows } from '../sources/parse.ts';
import type { SourceInput } from '../sources/read.ts';
import { sha256Hex } from '../../src/utils/sha256-hex.ts';
import { ClearanceMerger, type Origin } from './merge.ts';

export type Ingested = {
  /** Every clearance, kNumber ascending. */
  records: ClearanceRecord[];
  /** Every classified product code, code ascending. */
  classifications: Classification[];
  report: Omit<BuildReport, 'sourceRevision'>;
};

export type IngestProgress = (event: { file: string; rows: number; done: boolean }) => void;

const countBy = (rows: readonly ReportRow[]): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const r of rows) out[r.reason] = (out[r.reason] ?? 0) + 1;
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)));
};

/**
 * Turns the source inputs, in precedence order, into merged records and classifications, accounting for every row:
 * each becomes a record, is merged into one, or is listed in the report with its file, line and reason.
 */
export function ingest(inputs: readonly SourceInput[], lookups: Lookups, onProgress?: IngestProgress): Ingested {
  const merger = new ClearanceMerger();
  const classifications = new Map<string, Classification>();
  const skipped: ReportRow[] = [];
  const merged: ReportRow[] = [];
  const fieldIssues: ReportRow[] = [];
  const sources: SourceSummary[] = [];

  for (const input of inputs) {
    const summary: SourceSummary = {
      name: input.name,
      kind: input.kind,
      bytes: input.bytes.byteLength,
      sha256: sha256Hex(input.bytes),
      rows: 0,
      records: 0,
      merged: 0,
      skipped: 0,
      decisionDateMin: null,
      decisionDateMax: null,
    };
    const skip = (at: Origin, kNumber: string | null, reason: string) => {
      summary.skipped++;
      skipped.push({ file: input.name, line: at.line, entry: at.entry, kNumber, reason });
    };
    const takeClearance = (outcome: RowOutcome, at: Origin) => {
      if (outcome.kind === 'skip') return skip(at, outcome.kNumber, outcome.reason);
      for (const issue of outcome.issues) {
        fieldIssues.push({ file: input.name, line: at.line, entry: at.entry, kNumber: outcome.kNumber, reason: `${issue.field}: ${issue.reason}` });
      }
      const date = outcome.fields.decisionDate;
      if (date !== null) {
        if (summary.decisionDateMin === null || date < summary.decisionDateMin) summary.decisionDateMin = date;
        if (summary.decisionDateMax === null || date > summary.decisionDateMax) summary.decisionDateMax = date;
      }
      const first = merger.add(outcome.kNumber, outcome.fields, at);
      if (first === null) summary.records++;
      else {
        summary.merged++;
        const where = first.line !== null ? `line ${first.line}` : `entry ${first.entry}`;
        merged.push({ file: input.name, line: at.line, entry: at.entry, kNumber: outcome.kNumber, reason: `merged into the record from ${first.file} ${where}` });
      }
    };

    if (input.kind === 'openfda-json') {
      let results: unknown[];
      try {
        results = openFdaResults(decodeJsonText(input.bytes));
      } catch (err) {
        throw new Error(`${input.name}: ${(err as Error).message}`);
      }
      results.forEach((result, i) => {
        summary.rows++;
        const at = { file: input.name, line: null, entry: i + 1 };
        if (typeof result !== 'object' || result === null || Array.isArray(result)) return skip(at, null, 'not a JSON object');
        takeClearance(fromOpenFdaResult(result as Record<string, unknown>, lookups), at);
      });
    } else {
      for (const r of pipeRows(decodePipeText(input.bytes))) {
        summary.rows++;
        const at = { file: input.name, line: r.line, entry: null };
        if ('problem' in r) {
          skip(at, null, r.problem);
        } else if (input.kind === 'pmn') {
          takeClearance(fromPmnRow(r.row, lookups), at);
        } else {
          const outcome = fromFoiclassRow(r.row, lookups);
          if (outcome.kind === 'skip') skip(at, null, outcome.reason);
          else {
            const previous = classifications.get(outcome.value.productCode);
            if (previous) {
              summary.merged++;
              merged.push({ file: input.name, line: r.line, entry: null, kNumber: null, reason: `product code ${outcome.value.productCode} repeated; merged` });
              classifications.set(outcome.value.productCode, mergeClassification(previous, outcome.value));
            } else {
              summary.records++;
              classifications.set(outcome.value.productCode, outcome.value);
            }
          }
        }
        if (summary.rows % 50_000 === 0) onProgress?.({ file: input.name, rows: summary.rows, done: false });
      }
    }
    onProgress?.({ file: input.name, rows: summary.rows, done: true });
    sources.push(summary);
  }

  const records = merger.sorted().map(([k, fields]) => toClearanceRecord(k, fields));
  const classified = [...classifications.values()].sort((a, b) => (a.productCode < b.productCode ? -1 : 1));
  return {
    records,
    classifications: classified,
    report: {
      sources,
      skipped,
      skippedByReason: countBy(skipped),
      merged,
      fieldIssues,
      fieldIssuesByReason: countBy(fieldIssues.map((r) => ({ ...r, reason: r.reason.replace(/ "[^"]*"$/, '') }))),
    },
  };
}

function mergeClassification(base: Classification, next: Classification): Classification {
  const out = { ...base };
  for (const key of Object.keys(next) as (keyof Classification)[]) {
    const v = next[key];
    if (v !== null && v !== '') (out as Record<string, unknown>)[key] = v;
  }
  return out;
}
