import { AnswerCache, type NextPage } from '../utils/answer-cache.ts';
import type { ClearanceRecord } from '../contract/record.ts';
import { ChunkedUnavailable, readsChunks, sectionIndexOf } from '../search/snapshot-index.ts';
import { kNumberText } from '../search/k-number.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import { catalogOf } from './catalog.ts';
import { classificationAnswer } from './classification.ts';
import { countOf, type DocSet } from '../search/docset.ts';
import { fieldDef, fields510k, sectionsFor510k, type Ctx, type FieldDef } from './fields.ts';
import { wordsFor510k } from './words.ts';
import { fieldsOf, parseSearch, SyntaxError as SearchSyntaxError, type FieldRef, type Node } from './lucene.ts';
import { afterKeyOf, afterOf, parseSearchAfter } from './order.ts';
import { pageOf, type Order } from '../search/page.ts';
import { parseParams, type OpenFdaParams } from './params.ts';
import type { Budget, Limits } from '../search/budget.ts';
import { BadQuery, checkCost, evaluate, openFdaBudget, planOf } from './plan.ts';
import { platformPause } from '../search/slices.ts';
import { LruCache } from '../utils/lru.ts';
import { toOpenFda510k } from './record.ts';
import { assemble, countBody, fieldRefOf, json, metaOf, nextLink, notFound, OpenFdaError, partsOf, type OpenFdaAnswer, type OpenFdaDeps, type OpenFdaParts } from './envelope.ts';

export { DISCLAIMER, OpenFdaError, type OpenFdaAnswer, type OpenFdaDeps } from './envelope.ts';
/**
 * GET /device/510k.json and /device/classification.json below the HTTP layer, the same for the Node server and the
 * Worker: a URL in, status, headers and JSON bytes out. openFDA's envelope: `meta` (disclaimer, terms, license,
 * last_updated, results {skip, limit, total}) and `results`; errors `{error: {code, message}}` (NOT_FOUND,
 * BAD_REQUEST). Added members (openFDA's clients ignore members they do not know): `meta.source_state`, this
 * service's freshness report, and on a count `meta.total_terms`, how many terms (or days) there are in all.
 */
export type Endpoint = '510k' | 'classification';

export const OPENFDA_PATHS: Record<string, Endpoint> = { '/device/510k.json': '510k', '/device/classification.json': 'classification' };

const decoder = new TextDecoder();

/**
 * How a request's work is paced: `pause` gives the host its turn between slices of work (the Node server's turn
 * queue; the platform's yield when absent), `limits` bound it (OPENFDA_LIMITS of src/search/budget.ts; tests give small ones).
 */
export type OpenFdaPacing = { pause?: () => Promise<void>; limits?: Limits };

/**
 * A request as the route gives it, its URL read once where it entered: the origin it was sent to, its path, the path
 * and query string as received (`target`), and the query's parameters.
 */
export type OpenFdaRequest = { readonly origin: string; readonly path: string; readonly target: string; readonly query: URLSearchParams };

/** The same, for a URL (tests, and callers that hold one). */
export function answerOpenFda(deps: OpenFdaDeps, snapshot: Snapshot | null, endpoint: Endpoint, url: URL, pacing: OpenFdaPacing = {}): Promise<OpenFdaAnswer> {
  return answerOpenFdaRequest(deps, snapshot, endpoint, { origin: url.origin, path: url.pathname, target: `${url.pathname}${url.search}`, query: url.searchParams }, pacing);
}

/**
 * A request's URL as read once: its parameters checked (or why they are refused), its search parsed (or why it is
 * refused) and its cache key, and the Link header last written for it. All are pure functions of the URL, so a URL
 * asked again (a client polling the same question) is not read again.
 */
type Prepared = {
  readonly origin: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly params: OpenFdaParams | { refused: unknown };
  readonly tree: Node | { refused: unknown } | null;
  readonly key: string;
  link: { readonly next: NextPage; readonly text: string } | null;
};

/** URLs longer than this are read for each request: a stream of long new ones costs no memory. */
const PREPARED_MAX_URL = 2048;
/** The URLs read most recently, by their text. */
const prepared = new LruCache<string, Prepared>(256);

/** The request's URL read, or as it was read before. */
function preparedOf(endpoint: Endpoint, request: OpenFdaRequest): Prepared {
  if (request.origin.length + request.target.length > PREPARED_MAX_URL) return prepare(endpoint, request);
  const key = `${endpoint} ${request.origin}${request.target}`;
  let known = prepared.get(key);
  if (!known) prepared.set(key, (known = prepare(endpoint, request)));
  return known;
}

function prepare(endpoint: Endpoint, request: OpenFdaRequest): Prepared {
  const refusal = (f: () => unknown) => {
    try {
      return f();
    } catch (err) {
      return { refused: err };
    }
  };
  const params = refusal(() => parseParams(request.query)) as Prepared['params'];
  const tree = 'refused' in params ? null : (refusal(() => parseTree(params.search)) as Node | { refused: unknown });
  const key = 'refused' in params || tree === null || 'refused' in tree ? '' : keyOf(endpoint, tree, params);
  return { origin: request.origin, path: request.path, query: request.query, params, tree, key, link: null };
}

/** GET /device/510k.json or /device/classification.json, from the request as its route read it. */
export async function answerOpenFdaRequest(deps: OpenFdaDeps, snapshot: Snapshot | null, endpoint: Endpoint, from: OpenFdaRequest, pacing: OpenFdaPacing = {}): Promise<OpenFdaAnswer> {
  try {
    const request = preparedOf(endpoint, from);
    const params = request.params;
    if ('refused' in params) throw params.refused;
    if (!snapshot) throw new OpenFdaError(503, 'SERVICE_UNAVAILABLE', 'No valid snapshot is loaded; try again once one has been published.');
    const tree = request.tree!;
    if ('refused' in tree) throw tree.refused;
    const cache = deps.answerCache;
    const key = request.key;
    const cached = cache?.get(snapshot, key);
    let parts: OpenFdaParts;
    if (cached) {
      parts = { head: cached.data, tail: cached.tail, next: cached.next ?? null };
    } else {
      const budget = openFdaBudget(pacing.limits, pacing.pause ?? platformPause);
      parts = endpoint === '510k' ? await answer510k(snapshot, params, tree, budget) : await classificationAnswer(snapshot, params, tree, budget);
      cache?.set(snapshot, key, { data: parts.head, tail: parts.tail, warnings: undefined, ...(parts.next && { next: parts.next }) });
    }
    return assemble(deps, snapshot, parts, (next) => {
      // The Link of the cached answer's next page, written once for the URL while that answer is kept.
      if (request.link?.next !== next) request.link = { next, text: nextLink(request.origin, request.path, request.query, next.set, next.drop) };
      return request.link.text;
    });
  } catch (err) {
    if (err instanceof BadQuery || err instanceof SearchSyntaxError) return json(400, { error: { code: 'BAD_REQUEST', message: err.message } });
    if (err instanceof OpenFdaError) return json(err.status, { error: { code: err.code, message: err.message } });
    return { ...json(500, { error: { code: 'SERVER_ERROR', message: 'The request failed on our side; the failure has been logged.' } }), failure: err };
  }
}

/**
 * The cache key of a request: the endpoint and the request as parsed (the search as its tree, the other parameters
 * checked and defaulted), so that spellings of one question share an entry; `api_key` and the parameters' order do
 * not count. Answers are kept apart from what each request writes itself (the source state and the Link header).
 */
function keyOf(endpoint: Endpoint, tree: Node, p: OpenFdaParams): string {
  return AnswerCache.keyOf(`openfda:${endpoint}`, [tree, p.count, p.limit, p.skip, p.sort, p.searchAfter]);
}

export function parseTree(search: string): Node {
  const tree = parseSearch(search);
  checkCost(tree);
  return tree;
}

async function answer510k(snapshot: Snapshot, params: OpenFdaParams, tree: Node, budget: Budget): Promise<OpenFdaParts> {
  const refs: FieldRef[] = fieldsOf(tree);
  const countRef = params.count ? fieldRefOf(params.count) : null;
  const sortRef = params.sort ? fieldRefOf(params.sort.field) : null;
  // Every named field is checked (and refused by name) before any data is read.
  for (const r of refs) fieldDef(r, 'search');
  const countDef = countRef ? fieldDef(countRef, 'count') : null;
  if (countDef && !countDef.count) throw new BadQuery(countDef.uncountable ?? `count: ${countRef!.name} cannot be counted`);
  const sortDef = sortRef ? fieldDef(sortRef, 'sort') : null;
  if (sortDef && (!sortDef.sortKey || (sortDef.kind === 'text' && !sortRef!.exact && sortRef!.name !== 'k_number'))) {
    throw new BadQuery(`Sorting allowed by non-analyzed fields only: ${params.sort!.field}${sortDef.sortKey ? `; sort by ${sortRef!.name}.exact` : ''}`);
  }
  const one = countDef === null && params.searchAfter === null ? oneKNumber(tree) : null;
  if (one !== null && (await readsChunks(snapshot))) return oneRecord(snapshot, params, one);
  const sections = sectionsFor510k([...refs, ...(sortRef ? [sortRef] : [])], hasUnfielded(tree), countRef);
  // Over a chunked index (a Worker's), only the files of these sections and the term chunks of the request's words,
  // held until it is answered.
  const [held, catalog] = await Promise.all([sectionIndexOf(snapshot, sections, wordsFor510k(tree, countRef)), catalogOf(snapshot)]);
  if ('unavailable' in held) throw new OpenFdaError(503, 'SERVICE_UNAVAILABLE', held.unavailable);
  try {
    return await answer510kOver({ index: held.index, catalog, more: held.more }, snapshot, params, tree, budget, countDef, countRef, sortDef);
  } catch (err) {
    if (err instanceof ChunkedUnavailable) throw new OpenFdaError(503, 'SERVICE_UNAVAILABLE', err.message);
    throw err;
  } finally {
    held.release();
  }
}

async function answer510kOver(
  ctx: Ctx,
  snapshot: Snapshot,
  params: OpenFdaParams,
  tree: Node,
  budget: Budget,
  countDef: FieldDef | null,
  countRef: FieldRef | null,
  sortDef: FieldDef | null,
): Promise<OpenFdaParts> {
  const catalog = ctx.catalog;
  const set: DocSet = await evaluate(await planOf(tree, fields510k(ctx), budget), ctx.index.docCount, budget);
  const total = countOf(set);
  if (total === 0) throw notFound();
  if (countDef) return countBody(snapshot, await countDef.count!(ctx, set, countRef!.exact, budget, params.limit), params.limit, budget);

  const order: Order = {
    kNumber: ctx.index.docKNumber,
    decided: ctx.index.docDecided,
    sort: sortDef
      ? {
          key: sortDef.sortKey!(ctx),
          descending: params.sort!.descending,
          keyText: (k) => sortDef.keyText!(ctx, k),
          keyOf: (t) => sortDef.keyOf!(ctx, t),
        }
      : null,
  };
  const after = params.searchAfter === null ? null : parseSearchAfter(params.searchAfter);
  const page = await pageOf(set, total, order, params.skip, params.limit, after && afterOf(order, after), budget);
  if (page.length === 0 && params.limit > 0) throw notFound();
  const kNumbers = page.map((d) => kNumberText(ctx.index.docKNumber[d]!));
  const records = await snapshot.recordsJson(kNumbers);
  const results = records.map((bytes) => {
    const r = JSON.parse(decoder.decode(bytes)) as ClearanceRecord;
    return toOpenFda510k(r, r.productCode === null ? undefined : catalog.byCode.get(r.productCode));
  });
  let next: NextPage | null = null;
  if (page.length > 0) {
    if (after !== null) {
      // A page as long as the limit may have one after it: there is one when any match lies past its last record.
      if (page.length === params.limit) {
        const more = await pageOf(set, total, order, 0, 1, afterOf(order, parseSearchAfter(afterKeyOf(order, page[page.length - 1]!))), budget);
        if (more.length > 0) next = { set: { search_after: afterKeyOf(order, page[page.length - 1]!) }, drop: ['skip'] };
      }
    } else if (params.skip + page.length < total) {
      next = { set: { skip: String(params.skip + params.limit) }, drop: [] };
    }
  }
  const meta = { ...metaOf(snapshot), results: { skip: params.skip, limit: params.limit, total } };
  return partsOf(meta, JSON.stringify(results), next);
}

/** The K number a search names when it is one clause `k_number:K123456` (six digits, K optional), else null. */
function oneKNumber(tree: Node): string | null {
  if ((tree.type !== 'term' || tree.prefix) && tree.type !== 'phrase') return null;
  if (tree.field?.name !== 'k_number') return null;
  const m = /^[Kk]?(\d{6})$/.exec(tree.value.trim());
  return m ? `K${m[1]}` : null;
}

/**
 * The answer to a search for one K number, from its record, as the index would give it: the record is the one match
 * (every record is a document of the index, with its own K number). A host that reads the chunked index answers it
 * so, reading no file of the index (as a record's detail does).
 */
async function oneRecord(snapshot: Snapshot, params: OpenFdaParams, kNumber: string): Promise<OpenFdaParts> {
  const [bytes, catalog] = await Promise.all([snapshot.recordJson(kNumber), catalogOf(snapshot)]);
  if (bytes === null || (params.skip > 0 && params.limit > 0)) throw notFound();
  const results: unknown[] = [];
  if (params.skip === 0 && params.limit > 0) {
    const r = JSON.parse(decoder.decode(bytes)) as ClearanceRecord;
    results.push(toOpenFda510k(r, r.productCode === null ? undefined : catalog.byCode.get(r.productCode)));
  }
  const meta = { ...metaOf(snapshot), results: { skip: params.skip, limit: params.limit, total: 1 } };
  return partsOf(meta, JSON.stringify(results), null);
}

function hasUnfielded(node: Node): boolean {
  switch (node.type) {
    case 'and':
    case 'or':
      return node.children.some(hasUnfielded);
    case 'not':
      return hasUnfielded(node.child);
    case 'all':
      return false;
    default:
      return node.field === null;
  }
}
