import type { z } from 'zod';
import type { ChangesSinceOutput, CountByOutput, LineageOutput, ReviewTimeOutput, SearchOutput } from './schemas.ts';

/**
 * The short text beside each structured result: what a model reads first, one line a record or value, with the
 * numbers that answer the question up front. Pure: a result in, its text out.
 */

type Json = Record<string, unknown>;
const n = (x: number) => x.toLocaleString('en-US');
const of = (query: string) => (query.trim() === '' ? 'every clearance' : `the clearances matching ${JSON.stringify(query)}`);
const show = (v: unknown) => (v === null || v === undefined || v === '' ? '-' : String(v));

export function renderSearch(query: string, r: z.infer<typeof SearchOutput>): string {
  const first = (r.page - 1) * r.pageSize + 1;
  const lines = [`${n(r.total)} clearances match${query.trim() === '' ? '' : ` ${JSON.stringify(query)}`} (exact).`];
  if (r.items.length > 0) lines.push(`Records ${n(first)} to ${n(first + r.items.length - 1)} (page ${r.page}, ${r.pageSize} a page): K number | decided | product code | device | applicant | review days`);
  for (const i of r.items) lines.push(`${i.kNumber} | ${show(i.decisionDate)} | ${show(i.productCode)} | ${i.deviceName} | ${show(i.applicant)} | ${show(i.reviewDays)}`);
  for (const f of r.facets) if (f.values.length > 0) lines.push(`Top ${f.field}: ${f.values.map((v) => `${v.value} (${n(v.count)})`).join(', ')}`);
  return lines.join('\n');
}

export function renderCounts(query: string, r: z.infer<typeof CountByOutput>): string {
  const lines = [`${n(r.total)} clearances (${of(query)}), counted by ${r.field}${r.order === 'value' ? ' in value order' : ', largest first'}${r.offset > 0 ? `, from value ${n(r.offset + 1)}` : ''}:`];
  for (const v of r.values) lines.push(`${v.value}${v.label ? ` (${v.label})` : ''}: ${n(v.count)}`);
  if (r.values.length === 0) lines.push('(no values)');
  return lines.join('\n');
}

export function renderReviewTimes(query: string, r: z.infer<typeof ReviewTimeOutput>): string {
  const s = r.reviewDays;
  if (!s) return `${n(r.total)} clearances (${of(query)}); none has both a received and a decision date, so there is no review time.`;
  const figures = (f: { count: number; min: number; median: number; p90: number; max: number }) =>
    `${n(f.count)} with both dates: median ${f.median} days, 90th percentile ${f.p90}, min ${f.min}, max ${f.max}`;
  const lines = [`Review time of ${n(r.total)} clearances (${of(query)}): ${figures(s)}.`, 'By decision year:'];
  for (const y of s.byDecisionYear) lines.push(`${y.year}: ${figures(y)}`);
  return lines.join('\n');
}

export function renderChanges(r: z.infer<typeof ChangesSinceOutput>): string {
  const lines = [
    `${n(r.totalChanges)} changes after ${r.since} in ${r.sets.length} rebuild${r.sets.length === 1 ? '' : 's'} (history complete since ${r.completeSince}):`,
  ];
  if (r.historyStartsAfterSince) lines.push(`The history kept starts after ${r.since}: changes before ${r.completeSince} are not known.`);
  for (const s of r.sets) lines.push(`rebuild ${s.at}: ${s.counts.added} added, ${s.counts.changed} changed, ${s.counts.removed} removed${s.baseline ? ' (baseline)' : ''}`);
  if (r.changes.length > 0 && r.offset > 0) lines.push(`From change ${n(r.offset + 1)}:`);
  for (const c of r.changes) lines.push(`${c.at} ${c.kNumber} ${c.kind}${c.fields.length > 0 ? `: ${c.fields.join(', ')}` : ''}`);
  return lines.join('\n');
}

export function renderClearance(r: Json): string {
  const lines = [`${r.kNumber}: ${r.deviceName}`];
  const members = ['applicant', 'productCode', 'decisionDate', 'decisionDescription', 'receivedDate', 'reviewDays', 'submissionType', 'advisoryCommittee', 'statementOrSummary', 'thirdParty', 'expeditedReview', 'city', 'state', 'countryCode'];
  for (const m of members) if (r[m] !== null && r[m] !== undefined) lines.push(`${m}: ${String(r[m])}`);
  return lines.join('\n');
}

export function renderClassification(c: Json): string {
  const lines = [`${c.productCode}: ${show(c.deviceType)}`];
  for (const [k, v] of Object.entries(c)) if (k !== 'productCode' && k !== 'deviceType' && v !== null) lines.push(`${k}: ${String(v)}`);
  return lines.join('\n');
}

export function renderLineage(r: z.infer<typeof LineageOutput>): string {
  const what = r.direction === 'predicates' ? `Predicates of ${r.id} (what it was compared to, then theirs)` : `Descendants of ${r.id} (the clearances that name it, then those that name them)`;
  const reach = r.depth === null ? 'the whole chain' : `up to ${r.depth} step${r.depth === 1 ? '' : 's'}`;
  const kinds = r.kinds === null ? '' : `, ${r.kinds.join(' and ')} edges only`;
  const lines = [`${what}, ${reach}${kinds}: ${n(r.total)} devices (exact)${r.cyclesTotal > 0 ? `, ${n(r.cyclesTotal)} edges back into a cycle` : ''}.`];
  if (r.byDepth.length > 0) lines.push(`By depth: ${r.byDepth.map((d) => `${d.depth}: ${n(d.count)}`).join(', ')}`);
  if (r.items.length > 0) {
    lines.push('K number | depth | via | kind (source) | decided | product code | device | applicant');
    for (const i of r.items) {
      const c = i.record;
      const record = c ? `${show(c.decisionDate)} | ${show(c.productCode)} | ${c.deviceName} | ${show(c.applicant)}` : 'no record in this snapshot';
      lines.push(`${i.kNumber} | ${i.depth} | ${i.via} | ${i.kind} (${i.source}) | ${record}`);
    }
  }
  for (const c of r.cycles) lines.push(`Cycle: ${c.via} names ${c.kNumber}, already in the walk (${c.kind}, ${c.source}).`);
  return lines.join('\n');
}
