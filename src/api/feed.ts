import type { ClearanceRecord, ExportInput } from '../contract/index.ts';
import { ApiError, refusingCostlyQueries } from '../operations/errors.ts';
import { matchIndexOf } from '../operations/search.ts';
import type { SearchIndex } from '../search/model.ts';
import { matchesOf, matchList } from '../search/engine.ts';
import { kNumberText } from '../search/k-number.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import { partitionPoint, lowerBound } from '../utils/bisect.ts';
import { atomFeed, jsonFeed, type FeedKind, type FeedRecord } from '../feeds/render.ts';
import { badParam, oneParam, type BytesAnswer, type GetRequest } from './changes.ts';
import { checkedExportInput, exportInputOf } from './export-answer.ts';
import { parseSearchQuery } from '../operations/search-query.ts';
import { historyOf, type LoadedHistory } from './history.ts';
import { codedTag } from './json-headers.ts';
import { encodingWeights } from './media.ts';
import { sha256 } from '../operations/sha256.ts';

/**
 * GET /v1/feed: the newest matches of a search as Atom 1.0 (`format=atom`, the default) or JSON Feed 1.1
 * (`format=json`). The search's inputs are export's (query with every qualifier, applicant, productCode, yearFrom,
 * yearTo), parsed by export's own code; the order is newest first by first appearance in the data, then decision
 * date. `kind=removed` gives the records removed within the kept history instead. Feed readers poll: the answer
 * carries ETag and Last-Modified (the snapshot's time) and a conditional request answers 304.
 */
export const FEED_LIMIT = { default: 50, max: 500 } as const;

/** Parameters of the feed itself, taken out before the rest is checked as an export's input. */
const FEED_ONLY = ['format', 'limit', 'kind', 'predicate'];
/** Export parameters that make no sense for a feed (it has its own order and no parts). */
const NOT_FOR_FEEDS = ['sort', 'cursor', 'after'];

const FORMATS = { atom: 'application/atom+xml; charset=utf-8', json: 'application/feed+json; charset=utf-8' } as const;
type Format = keyof typeof FORMATS;

/**
 * `predicate`: the device whose new citing clearances the feed watches (`predicate=K123456`), added to the search as
 * its `predicate:` qualifier; `query` stays the query as asked, for the title.
 */
export type FeedRequest = { input: ExportInput; format: Format; limit: number; kind: FeedKind; predicate: string | null; query: string };

export function feedRequestOf(request: GetRequest): FeedRequest {
  const { query } = request;
  for (const name of NOT_FOR_FEEDS) if (query.has(name)) throw badParam(name, 'is not a parameter of GET /v1/feed (a feed is always newest first)');
  const format = oneParam(query, 'format') ?? 'atom';
  if (format !== 'atom' && format !== 'json') throw badParam('format', 'must be "atom" or "json"');
  const limitText = oneParam(query, 'limit');
  let limit: number = FEED_LIMIT.default;
  if (limitText !== null) {
    limit = /^\d{1,4}$/.test(limitText) ? Number(limitText) : Number.NaN;
    if (!(limit >= 1 && limit <= FEED_LIMIT.max)) throw badParam('limit', `must be a whole number from 1 to ${FEED_LIMIT.max}`);
  }
  const kind = oneParam(query, 'kind') ?? 'new';
  if (kind !== 'new' && kind !== 'removed') throw badParam('kind', 'must be "new" or "removed"');
  const raw = exportInputOf(request.url);
  for (const name of FEED_ONLY) delete raw[name];
  // The whole set is searched; the feed's own limit cuts it after ordering.
  raw.format = 'ndjson';
  raw.limit = null;
  let input = checkedExportInput(raw, 'GET /v1/feed');
  if (kind === 'removed' && input.query.trim() !== '') {
    throw badParam('query', 'cannot be given with kind=removed (removed records are no longer searchable); filter them by productCode, applicant or years');
  }
  const asked = input.query;
  const predicateText = oneParam(query, 'predicate');
  let predicate: string | null = null;
  if (predicateText !== null) {
    if (!/^\s*([Kk]|[Dd][Ee][Nn])\d{6}\s*$/.test(predicateText)) throw badParam('predicate', 'must be a K or De Novo number (K123456, DEN200012)');
    if (kind === 'removed') throw badParam('predicate', 'cannot be given with kind=removed (removed records are no longer searchable)');
    predicate = predicateText.trim().toUpperCase();
    // The feed of the search with the qualifier: the page's link and the engine read the same query.
    const withPredicate = `${asked.trim()} predicate:${predicate}`.trim();
    input = { ...input, query: withPredicate, parsed: parseSearchQuery(withPredicate, 'query') };
  }
  return { input, format, limit, kind, predicate, query: asked };
}

/** Documents first seen after the baseline, newest first (then by id, which is decision date descending). */
const recentOf = new WeakMap<SearchIndex, { doc: number; at: string }[]>();
function recentDocs(index: SearchIndex, history: LoadedHistory): { doc: number; at: string }[] {
  let recent = recentOf.get(index);
  if (recent) return recent;
  const { byKNumber, docKNumber } = index;
  recent = [];
  for (const [k, at] of history.firstSeen) {
    const digits = Number(k.slice(1));
    const d = byKNumber[partitionPoint(0, byKNumber.length, (i) => docKNumber[byKNumber[i]!]! < digits)];
    if (d !== undefined && docKNumber[d] === digits) recent.push({ doc: d, at });
  }
  recent.sort((a, b) => (a.at !== b.at ? (a.at > b.at ? -1 : 1) : a.doc - b.doc));
  recentOf.set(index, recent);
  return recent;
}

/** The K numbers of the newest `limit` matches of the search: first seen latest, then decided latest. */
async function newestMatches(snapshot: Snapshot, history: LoadedHistory, input: ExportInput, limit: number): Promise<string[]> {
  const { index, release } = await matchIndexOf(snapshot, { ...input, sort: 'decisionDate:desc' });
  try {
    return newestOf(index, history, input, limit);
  } finally {
    release();
  }
}

function newestOf(index: SearchIndex, history: LoadedHistory, input: ExportInput, limit: number): string[] {
  // Any sort but relevance gives the matches by id, ascending: decision date descending, undated last.
  const { docs } = matchList(refusingCostlyQueries(() => matchesOf(index, { ...input, sort: 'decisionDate:desc' })));
  const has = (d: number) => {
    const i = lowerBound(docs, d);
    return i < docs.length && docs[i] === d;
  };
  const picked: number[] = [];
  const recent = recentDocs(index, history);
  const taken = new Set<number>();
  for (const r of recent) {
    if (picked.length >= limit) break;
    if (has(r.doc)) picked.push(r.doc);
  }
  for (const r of recent) taken.add(r.doc);
  for (let i = 0; i < docs.length && picked.length < limit; i++) if (!taken.has(docs[i]!)) picked.push(docs[i]!);
  return picked.map((d) => kNumberText(index.docKNumber[d]!));
}

async function deviceTypes(snapshot: Snapshot, codes: Iterable<string | null>): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>();
  for (const code of new Set(codes)) {
    if (code === null) continue;
    out.set(code, (await snapshot.getProductCode(code))?.deviceType ?? null);
  }
  return out;
}

const decoder = new TextDecoder();

async function newRecords(snapshot: Snapshot, history: LoadedHistory, req: FeedRequest): Promise<FeedRecord[]> {
  const ks = await newestMatches(snapshot, history, req.input, req.limit);
  const records = (await snapshot.recordsJson(ks)).map((b) => JSON.parse(decoder.decode(b)) as ClearanceRecord);
  const types = await deviceTypes(snapshot, records.map((r) => r.productCode));
  return records.map((r) => ({
    kNumber: r.kNumber,
    deviceName: r.deviceName,
    applicant: r.applicant,
    productCode: r.productCode,
    deviceType: r.productCode ? (types.get(r.productCode) ?? null) : null,
    advisoryCommittee: r.advisoryCommittee,
    decisionDate: r.decisionDate,
    decisionDescription: r.decisionDescription,
    reviewDays: r.reviewDays,
    firstSeenAt: history.firstSeenOf(r.kNumber),
    updatedAt: history.updatedOf(r.kNumber),
  }));
}

/** Removals within the kept history that match the filters, newest first. */
async function removedRecords(snapshot: Snapshot, history: LoadedHistory, req: FeedRequest): Promise<FeedRecord[]> {
  const { applicant, productCode, yearFrom, yearTo } = req.input;
  const sets = await history.setsAfter(history.index.completeSince);
  const out: FeedRecord[] = [];
  for (let s = sets.length - 1; s >= 0 && out.length < req.limit; s--) {
    const set = sets[s]!;
    for (const c of set.changes) {
      if (out.length >= req.limit) break;
      const was = c.was;
      if (c.kind !== 'removed' || !was) continue;
      if (productCode !== null && was.productCode !== productCode.toUpperCase()) continue;
      if (applicant !== null && (was.applicant ?? '').toLowerCase() !== applicant.toLowerCase()) continue;
      const year = was.decisionDate ? Number(was.decisionDate.slice(0, 4)) : null;
      if ((yearFrom !== null || yearTo !== null) && (year === null || (yearFrom !== null && year < yearFrom) || (yearTo !== null && year > yearTo))) continue;
      out.push({ kNumber: c.kNumber, ...was, deviceType: null, reviewDays: null, firstSeenAt: set.at, updatedAt: set.at });
    }
  }
  const types = await deviceTypes(snapshot, out.map((r) => r.productCode));
  for (const r of out) r.deviceType = r.productCode ? (types.get(r.productCode) ?? null) : null;
  return out;
}

/** What the feed watches, in a few words: "DQY · Catheter, Percutaneous", "Medtronic, Inc. · stent". */
async function titleOf(snapshot: Snapshot, req: FeedRequest): Promise<string> {
  const { applicant, productCode, yearFrom, yearTo } = req.input;
  const query = req.query;
  const parts: string[] = [];
  if (req.predicate !== null) parts.push(`naming ${req.predicate}`);
  if (productCode !== null) {
    const code = productCode.toUpperCase();
    const type = (await snapshot.getProductCode(code))?.deviceType;
    parts.push(type ? `${code} · ${type}` : code);
  }
  if (applicant !== null) parts.push(applicant);
  if (query.trim() !== '') parts.push(`“${query.trim()}”`);
  if (yearFrom !== null || yearTo !== null) parts.push(yearFrom === yearTo ? `${yearFrom}` : `${yearFrom ?? '…'}–${yearTo ?? '…'}`);
  const what = parts.length > 0 ? parts.join(' · ') : 'All clearances';
  return req.kind === 'removed' ? `Removed 510(k) records: ${what}` : `510(k) clearances: ${what}`;
}

/** The origin the client asked, for absolute links: the Host header, https unless it is this machine or a proxy says. */
function originOf(request: GetRequest): string | null {
  const host = request.header('host');
  if (!host || !/^[A-Za-z0-9.\-:[\]]+$/.test(host)) return null;
  const forwarded = request.header('x-forwarded-proto');
  const proto = forwarded === 'http' || forwarded === 'https' ? forwarded : /^(localhost|127\.|\[::1\])/.test(host) ? 'http' : 'https';
  return `${proto}://${host}`;
}

/** The page's hash for the same search (public/js/state.js reads it). */
function pageHash(input: ExportInput): string {
  const p = new URLSearchParams();
  if (input.query.trim() !== '') p.set('q', input.query);
  if (input.productCode !== null) p.set('code', input.productCode.toUpperCase());
  if (input.applicant !== null) p.set('applicant', input.applicant);
  if (input.yearFrom !== null) p.set('from', String(input.yearFrom));
  if (input.yearTo !== null) p.set('to', String(input.yearTo));
  const text = p.toString();
  return text ? `#${text}` : '';
}

/** The first 128 bits of the sha256 of the text, as hex: two questions of one snapshot never share a tag in practice. */
function questionHash(text: string): string {
  const digest = sha256(encoder.encode(text)).subarray(0, 16);
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * Whether the client's copy is current. A tag matches the answer's identity tag, or its tag in a coding the request
 * accepts (the host names the coding in the tag it sends: json-headers.ts), compared weakly as RFC 9110 asks for
 * If-None-Match; a tag of another question, or of a coding the request does not take, never does.
 */
function notModified(request: GetRequest, etag: string, lastModifiedMs: number): boolean {
  const match = request.header('if-none-match');
  if (match !== undefined) {
    const weights = encodingWeights(request.header('accept-encoding'));
    const current = new Set([etag, ...(['gzip', 'br'] as const).filter((c) => weights[c] > 0).map((c) => codedTag(etag, c))]);
    return match
      .split(',')
      .map((t) => t.trim().replace(/^W\//, ''))
      .some((t) => t === '*' || current.has(t));
  }
  const since = request.header('if-modified-since');
  if (since === undefined) return false;
  const ms = Date.parse(since);
  return Number.isFinite(ms) && Math.floor(lastModifiedMs / 1000) * 1000 <= ms;
}

const encoder = new TextEncoder();

export async function answerFeed(request: GetRequest, snapshot: Snapshot | null): Promise<BytesAnswer> {
  const req = feedRequestOf(request);
  if (!snapshot) throw new ApiError('source_unavailable', 'No valid snapshot is loaded yet.');
  const origin = originOf(request);
  // The answer depends on the snapshot, the parameters and the address it is asked at (its links): so does the tag.
  const etag = `"${snapshot.id}-${questionHash(`${origin ?? ''} ${request.url}`)}"`;
  const updated = snapshot.manifest.generatedAt;
  const lastModified = new Date(updated).toUTCString();
  const headers: Record<string, string> = {
    ETag: etag,
    'Last-Modified': lastModified,
    'Cache-Control': 'no-cache',
    'X-Snapshot-Token': snapshot.id,
    'Access-Control-Expose-Headers': 'ETag, Last-Modified, X-Snapshot-Token',
  };
  if (notModified(request, etag, Date.parse(updated))) return { status: 304, body: new Uint8Array(0), headers };
  const history = await historyOf(snapshot);
  const records = req.kind === 'removed' ? await removedRecords(snapshot, history, req) : await newRecords(snapshot, history, req);
  const base = origin ?? '';
  const feed = {
    kind: req.kind,
    title: await titleOf(snapshot, req),
    selfUrl: `${base}${request.url}`,
    pageUrl: `${base}/${pageHash(req.input)}`,
    recordUrlPrefix: `${base}/#record=`,
    updated,
    records,
  };
  const body = req.format === 'atom' ? atomFeed(feed) : jsonFeed(feed);
  return { status: 200, body: encoder.encode(body), headers: { ...headers, 'Content-Type': FORMATS[req.format] } };
}
