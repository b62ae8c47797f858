import type { SourceState } from '../contract/index.ts';
import { isoOfDay } from '../contract/search-index.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import type { CountResult } from './fields.ts';
import type { FieldRef } from './lucene.ts';

/** openFDA's envelope and errors, shared by both endpoints (answer.ts, classification.ts). */
export type OpenFdaDeps = { now: () => Date; sourceState: (snapshot: Snapshot | null, now: Date) => SourceState };
export type OpenFdaAnswer = { status: number; headers: Record<string, string>; body: Uint8Array; failure?: unknown };
const encoder = new TextEncoder();
export const DISCLAIMER =
  'Answered by device-510k from its snapshot of FDA\'s 510(k) and product classification files, in openFDA\'s format; this is not openFDA. Do not rely on it to make decisions regarding medical care; assume all results are unvalidated.';

/** An answer of an openFDA endpoint, or of openFDA's error shape. */
export class OpenFdaError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}
export const notFound = (message = 'No matches found!') => new OpenFdaError(404, 'NOT_FOUND', message);

export function json(status: number, value: unknown, headers: Record<string, string> = {}): OpenFdaAnswer {
  return { status, headers, body: encoder.encode(JSON.stringify(value)) };
}

export function metaOf(deps: OpenFdaDeps, snapshot: Snapshot): Record<string, unknown> {
  const m = snapshot.manifest;
  return {
    disclaimer: DISCLAIMER,
    terms: 'https://open.fda.gov/terms/',
    license: 'https://open.fda.gov/license/',
    last_updated: (m.lastSuccessfulSyncAt ?? m.generatedAt).slice(0, 10),
    source_state: deps.sourceState(snapshot, deps.now()),
  };
}

/** The `Link` header of the next page: every parameter of the request but the page's own, which moves on. */
export function nextLink(url: URL, set: Record<string, string>, drop: readonly string[]): string {
  const next = new URLSearchParams();
  for (const [k, v] of url.searchParams) if (!drop.includes(k) && !(k in set)) next.append(k, v);
  for (const [k, v] of Object.entries(set)) next.set(k, v);
  return `<${url.origin}${url.pathname}?${next.toString()}>; rel="next"`;
}

/** Count answers: terms by count (then term), or a date field's every day with a match, in time order. */
export function countBody(deps: OpenFdaDeps, snapshot: Snapshot, result: CountResult, limit: number): OpenFdaAnswer {
  const meta = metaOf(deps, snapshot);
  if (result.kind === 'days') {
    const days = [...result.counts.entries()].sort((a, b) => a[0] - b[0]);
    if (days.length === 0) throw notFound('Nothing to count');
    const results = days.map(([day, count]) => ({ time: isoOfDay(day).replaceAll('-', ''), count }));
    return json(200, { meta: { ...meta, total_terms: results.length }, results });
  }
  const terms = [...result.counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  if (terms.length === 0) throw notFound('Nothing to count');
  const results = terms.slice(0, limit).map(([term, count]) => ({ term, count }));
  return json(200, { meta: { ...meta, total_terms: terms.length }, results });
}

export function fieldRefOf(raw: string): FieldRef {
  return raw.endsWith('.exact') ? { name: raw.slice(0, -'.exact'.length), exact: true } : { name: raw, exact: false };
}

