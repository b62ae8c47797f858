import type { AnswerCache, NextPage } from '../utils/answer-cache.ts';
import type { SourceState } from '../contract/index.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import type { Budget } from '../search/budget.ts';
import { termRowText, type CountResult } from './fields.ts';
import type { FieldRef } from './lucene.ts';

/** openFDA's envelope and errors, shared by both endpoints (answer.ts, classification.ts). */
export type OpenFdaDeps = {
  now: () => Date;
  sourceState: (snapshot: Snapshot | null, now: Date) => SourceState;
  /** The same as JSON text, written per answer more cheaply; `JSON.stringify(sourceState(…))` when absent. */
  sourceStateJson?: (snapshot: Snapshot | null, now: Date) => string;
  /** Keeps computed answers (as bytes, apart from the source state and the Link header); none are kept when absent. */
  answerCache?: AnswerCache;
};
/**
 * An answer: its status, headers, and body as the pieces it is made of, in order. A 200 answer is the cached parts
 * around this request's source state: sent piece by piece, a large answer (a date count's timeseries at a million
 * records is hundreds of KB) is not copied into a new buffer for every request (src/utils/join-bytes.ts joins them).
 */
export type OpenFdaAnswer = { status: number; headers: Record<string, string>; chunks: readonly Uint8Array[]; failure?: unknown };
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
  return { status, headers, chunks: [encoder.encode(JSON.stringify(value))] };
}


/**
 * A 200 answer as computed from the snapshot and the request's normalized parameters, before the two members that
 * are written per request: `head` and `tail` are the body's bytes before and after `meta.source_state` (which carries
 * the time of the answer), and `next` is what the Link header of the next page changes in the request's own
 * parameters (null: there is no next page). Being a pure function of (snapshot, request), it may be cached.
 */
export type OpenFdaParts = { head: Uint8Array; tail: Uint8Array; next: NextPage | null };

/** Stands for `source_state` while a body is serialized; its JSON text is then cut out. */
const SOURCE_STATE_MARK = '\u0000source_state\u0000';
const MARK_TEXT = JSON.stringify(SOURCE_STATE_MARK);

export function metaOf(snapshot: Snapshot): Record<string, unknown> {
  const m = snapshot.manifest;
  return {
    disclaimer: DISCLAIMER,
    terms: 'https://open.fda.gov/terms/',
    license: 'https://open.fda.gov/license/',
    last_updated: (m.lastSuccessfulSyncAt ?? m.generatedAt).slice(0, 10),
    source_state: SOURCE_STATE_MARK,
  };
}

/**
 * `{meta, results}` as parts, where `meta` is `metaOf`'s (with members added) and `results` is JSON text already
 * (the same text JSON.stringify would write of it). meta is written first, so the mark's first occurrence is meta's
 * whatever the records hold.
 */
export function partsOf(meta: Record<string, unknown>, resultsJson: string, next: NextPage | null = null): OpenFdaParts {
  const metaJson = JSON.stringify(meta);
  const at = metaJson.indexOf(MARK_TEXT);
  return {
    head: encoder.encode(`{"meta":${metaJson.slice(0, at)}`),
    tail: encoder.encode(`${metaJson.slice(at + MARK_TEXT.length)},"results":${resultsJson}}`),
    next,
  };
}

/**
 * The answer's bytes and headers for one request: the parts around this answer's source state, and its Link (made by
 * `linkOf` from the request's URL, as `nextLink` makes it). The
 * parts are shared with later answers (the cache keeps them), so they are passed on as they are and never written.
 */
export function assemble(deps: OpenFdaDeps, snapshot: Snapshot, parts: OpenFdaParts, linkOf: (next: NextPage) => string): OpenFdaAnswer {
  const now = deps.now();
  const state = deps.sourceStateJson ? deps.sourceStateJson(snapshot, now) : JSON.stringify(deps.sourceState(snapshot, now));
  const headers: Record<string, string> = parts.next ? { Link: linkOf(parts.next) } : {};
  return { status: 200, headers, chunks: [parts.head, encoder.encode(state), parts.tail] };
}

/**
 * The `Link` header of the next page: every parameter of the request (`query`) but the page's own, which moves on, at
 * the request's origin and path. The origin is written as the URL standard writes one (host in lower case, a default
 * port left out).
 */
export function nextLink(origin: string, path: string, query: URLSearchParams, set: Record<string, string>, drop: readonly string[]): string {
  const next = new URLSearchParams();
  for (const [k, v] of query) if (!drop.includes(k) && !(k in set)) next.append(k, v);
  for (const [k, v] of Object.entries(set)) next.set(k, v);
  return `<${new URL(origin).origin}${path}?${next.toString()}>; rel="next"`;
}

/** Count answers: terms by count (then term), or a date field's every day with a match, in time order. */
export function countBody(snapshot: Snapshot, result: CountResult, limit: number, budget: Budget): OpenFdaParts {
  const meta = metaOf(snapshot);
  if (result.kind === 'days') {
    if (result.days === 0) throw notFound('Nothing to count');
    return partsOf({ ...meta, total_terms: result.days }, result.json);
  }
  if (result.kind === 'ranked') {
    if (result.total === 0) throw notFound('Nothing to count');
    return partsOf({ ...meta, total_terms: result.total }, `[${result.rows.join(',')}]`);
  }
  // The terms sorted (a kept count's rows are sorted once): a comparison an entry and level of the sort.
  if (!sortedRows.has(result.counts)) budget.charge(result.counts.size * Math.max(1, Math.ceil(Math.log2(result.counts.size + 1))));
  const rows = termRows(result.counts);
  if (rows.length === 0) throw notFound('Nothing to count');
  return partsOf({ ...meta, total_terms: rows.length }, `[${(limit >= rows.length ? rows : rows.slice(0, limit)).join(',')}]`);
}

/** Counts that are made once and kept (a count over every record) keep their sorted rows too. */
const sortedRows = new WeakMap<ReadonlyMap<string, number>, string[]>();

/** Each term's `{"term":…,"count":…}` text (as JSON.stringify writes it), by count and then term. */
function termRows(counts: ReadonlyMap<string, number>): string[] {
  let rows = sortedRows.get(counts);
  if (rows) return rows;
  const terms = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  rows = terms.map(([term, count]) => termRowText(term, count));
  sortedRows.set(counts, rows);
  return rows;
}

export function fieldRefOf(raw: string): FieldRef {
  return raw.endsWith('.exact') ? { name: raw.slice(0, -'.exact'.length), exact: true } : { name: raw, exact: false };
}

