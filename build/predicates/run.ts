import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { extractPredicates } from './extract.ts';
import type { ReadStatus, ReadSummary } from './read.ts';

/** One device's line of the report: whether its summary was read, what was found, and why nothing was. */
export type ReportRow = { device: string; status: ReadStatus; predicates: string[]; reason: string };

/** The report row and edges for one device's summary as read. */
export function judge(device: string, summary: ReadSummary): ReportRow {
  if (summary.status !== 'read') return { device, status: summary.status, predicates: [], reason: summary.reason };
  const found = extractPredicates(summary.text, device);
  return {
    device,
    status: 'read',
    predicates: found.predicates.map((p) => p.id),
    reason: found.none ?? found.predicates.map((p) => `${p.id} ${p.reason}`).join('; '),
  };
}

const cell = (s: string) => (/[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

export function edgesCsv(rows: readonly ReportRow[]): string {
  const lines = ['device,predicate'];
  for (const r of [...rows].sort((a, b) => a.device.localeCompare(b.device))) for (const p of r.predicates) lines.push(`${r.device},${p}`);
  return `${lines.join('\n')}\n`;
}

export function reportCsv(rows: readonly ReportRow[]): string {
  const lines = ['device,status,predicates,reason'];
  for (const r of [...rows].sort((a, b) => a.device.localeCompare(b.device))) lines.push([r.device, r.status, r.predicates.join(' '), cell(r.reason.replace(/\s+/g, ' '))].join(','));
  return `${lines.join('\n')}\n`;
}

/** An edge input folder as the build reads it: predicates.csv, report.csv and source.json. */
export const EDGE_SOURCE = { source: 'summary', kind: 'predicate', report: 'report.csv' } as const;

/** Writes a file whole or not at all (a temporary name, then a rename). */
export async function writeAtomic(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, text);
  await rename(tmp, path);
}

export async function writeEdgeFolder(dir: string, rows: readonly ReportRow[], source: string = EDGE_SOURCE.source): Promise<void> {
  await writeAtomic(join(dir, 'predicates.csv'), edgesCsv(rows));
  await writeAtomic(join(dir, 'report.csv'), reportCsv(rows));
  await writeAtomic(join(dir, 'source.json'), `${JSON.stringify({ ...EDGE_SOURCE, source })}\n`);
}
