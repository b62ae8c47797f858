import { ApiError } from '../operations/errors.ts';
import type { ChangeSet } from '../contract/history.ts';
import { historyOf } from './history.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';

/** What the feed and change routes read of a request (routes.ts's RouteRequest has these). */
export type GetRequest = { readonly url: string; readonly query: URLSearchParams; header(name: string): string | undefined };
/** A whole answer: routes.ts sends it as its `bytes` kind. */
export type BytesAnswer = { status: number; body: Uint8Array; headers: Record<string, string> };

/**
 * GET /v1/changes?since=<date or time>[&format=json|ndjson]: the change sets of the snapshot's history after `since`,
 * oldest first; a `since` before the history's start gets every set kept. Mirrors and pipelines ask it what changed instead of diffing two snapshots.
 */

/** One bad query parameter as the contract's invalid_input, naming the parameter and the rule. */
export function badParam(name: string, rule: string): ApiError {
  return new ApiError('invalid_input', `${name} ${rule}.`, { details: [{ path: name, message: rule }] });
}

/** Refuses any parameter the route does not take, naming it. */
export function onlyParams(query: URLSearchParams, allowed: ReadonlySet<string>, route: string): void {
  for (const name of query.keys()) if (!allowed.has(name)) throw badParam(name, `is not a parameter of ${route}`);
}

/** A parameter given at most once. */
export function oneParam(query: URLSearchParams, name: string): string | null {
  const all = query.getAll(name);
  if (all.length > 1) throw badParam(name, 'must be given at most once');
  return all[0] ?? null;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;
const SINCE_RULE = 'must be a date (2026-11-01) or a time with its offset (2026-11-01T02:00:00Z)';

/** `since` as an ISO time in UTC: a date is the start of that day in UTC. */
export function parseSince(text: string | null): string {
  if (text === null || text === '') throw badParam('since', `is required and ${SINCE_RULE}`);
  let ms = Number.NaN;
  const date = DATE.exec(text);
  if (date) {
    const [y, m, d] = [Number(date[1]), Number(date[2]), Number(date[3])];
    ms = Date.UTC(y, m - 1, d);
    const back = new Date(ms);
    if (back.getUTCFullYear() !== y || back.getUTCMonth() !== m - 1 || back.getUTCDate() !== d) ms = Number.NaN;
  } else if (TIME.test(text)) {
    ms = Date.parse(text);
  }
  if (!Number.isFinite(ms)) throw badParam('since', SINCE_RULE);
  return new Date(ms).toISOString();
}

const PARAMS = new Set(['since', 'format']);
const encoder = new TextEncoder();

/** A change as the answer lists it: which record, what happened, which members, and their values before and after. */
function changeLines(set: ChangeSet): unknown[] {
  return set.changes.map((c) => ({ at: set.at, ...c }));
}

export async function answerChanges(request: GetRequest, snapshot: Snapshot | null): Promise<BytesAnswer> {
  const { query } = request;
  onlyParams(query, PARAMS, 'GET /v1/changes');
  const since = parseSince(oneParam(query, 'since'));
  const format = oneParam(query, 'format') ?? 'json';
  if (format !== 'json' && format !== 'ndjson') throw badParam('format', 'must be "json" or "ndjson"');
  if (!snapshot) throw new ApiError('source_unavailable', 'No valid snapshot is loaded yet.');
  const history = await historyOf(snapshot);
  const { completeSince } = history.index;
  // A `since` before the kept history is answered with all of it, saying where it starts, so that a pipeline's first
  // run (or one after a long pause) needs no special case; changes before that time are not recorded.
  const before = since < completeSince;
  const sets = await history.setsAfter(since);
  const headers: Record<string, string> = {
    'Cache-Control': 'no-cache',
    'X-Snapshot-Token': snapshot.id,
    'Access-Control-Expose-Headers': before ? 'X-Snapshot-Token, X-History-Starts' : 'X-Snapshot-Token',
    ...(before ? { 'X-History-Starts': completeSince } : {}),
  };
  if (format === 'ndjson') {
    const body = encoder.encode(sets.flatMap(changeLines).map((c) => `${JSON.stringify(c)}\n`).join(''));
    return { status: 200, body, headers: { ...headers, 'Content-Type': 'application/x-ndjson; charset=utf-8' } };
  }
  const value = {
    snapshot: snapshot.id,
    since,
    completeSince,
    ...(before ? { historyStartsAfterSince: true } : {}),
    sets: sets.map((s) => ({ at: s.at, previousAt: s.previousAt, baseline: s.baseline, records: s.records, counts: s.counts, changes: s.changes })),
  };
  return { status: 200, body: encoder.encode(JSON.stringify(value)), headers };
}
