import { ApiError } from './errors.ts';
import { answerChanges } from './changes.ts';
import { answerExport } from './export-answer.ts';
import { answerFeed } from './feed.ts';
import { buildOpenApiDocument } from './openapi.ts';
import { answerOpenFdaRequest, type Endpoint } from '../openfda/answer.ts';
import { localBackend } from './mcp/backend.ts';
import { DEFAULT_BUDGET_BYTES } from './mcp/budget.ts';
import type { McpAnswer, McpOptions } from './mcp/index.ts';
import { answerQuery, type QueryDeps } from './query-answer.ts';
import { MAX_BODY_BYTES } from './body.ts';
import type { OperationName } from '../contract/operations.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';

/**
 * The HTTP routes of the API, once, for every host (the Node server in src/server, the Worker in src/worker). The
 * dispatcher (src/api/dispatch.ts) matches a request against this table, answers a preflight or a refusal as told,
 * runs the route's handler and has the host send its answer; a host runs its own code only for the routes marked
 * `host` (the snapshot's files, which each host reads from its own storage) and, where it wants, for those marked
 * `hostMayOwn` (Node streams exports with its own bounds).
 *
 * Adding a route: one entry in ROUTES with a handler `(request, context) => answer` written here or in a file of its
 * own in src/api/. Both hosts then serve it, HEAD included, with the same status, headers and bytes; nothing in
 * src/server or src/worker changes.
 */

/** A request as a portable handler sees it; each host builds it with `routeRequest`. */
export type RouteRequest = {
  readonly method: string;
  /** The path as received (still percent-encoded), without the query string. */
  readonly path: string;
  /** The path and the query string as received, for example `/v1/export?query=valve&format=csv`. */
  readonly url: string;
  /** The scheme and host the request was sent to (`https://api.example.org`), for links in answers. */
  readonly origin: string;
  /** The query string's parameters. */
  readonly query: URLSearchParams;
  /** Under a prefix route (`/snapshot/*`), what follows the prefix (still percent-encoded); '' for an exact route. */
  readonly rest: string;
  /** A request header by name (any case), or undefined. */
  header(name: string): string | undefined;
};

/** What a handler may use besides the request: the snapshot, the host's shared parts, and what the host can do. */
export type RouteContext = {
  /** The snapshot the request started on, read once per request (null: none is loaded). */
  readonly snapshot: Snapshot | null;
  /** Why no snapshot is loaded, when the host knows. */
  readonly problem: string | null;
  /** Operations, cursors, clock, source state, answer cache and deadline: the same the query's answers use. */
  readonly deps: QueryDeps;
  /**
   * True when the host hands each chunk of a streamed answer to the network before it asks for the next, so the
   * chunks may be lent memory that the next one reuses (src/operations/export.ts's `lend`).
   */
  readonly lendsChunks: boolean;
  /**
   * The request's body, read the host's way and refused past MAX_BODY_BYTES (413); rejects with ClientGone when the
   * client left before sending it all.
   */
  body(): Promise<Uint8Array>;
  /**
   * Runs `work` when the request's turn comes (Node: the connection's turn of the event loop, turns.ts; the Worker:
   * at once), with a `pause` that gives the turn up between slices of a long job. GONE: the client left meanwhile,
   * and nothing was run for it.
   */
  turn<T>(work: (pause?: () => Promise<void>) => Promise<T>): Promise<T | typeof GONE>;
  /** Told the operation a request names as soon as it is known (for the request's log line). */
  onOperation(operation: OperationName): void;
  /**
   * Memory the host lends for a bytes answer made for this request alone (never kept: it is reused once sent), with
   * room before it for the host's head, so that the answer goes out from where it was made (Node's fast lane).
   * Absent: answers are new bytes.
   */
  readonly allocate?: (size: number) => Uint8Array;
};

/** What `turn` resolves to when the request's client has gone: no work was done, and nothing is sent. */
export const GONE: unique symbol = Symbol('gone');

/**
 * What a handler answers. `bytes`: a whole body (or the pieces it is made of, in order, which a host sends one after
 * the other rather than copy them into one buffer), sent with the JSON headers (Content-Type application/json,
 * Access-Control-Allow-Origin *, Vary: Accept-Encoding) under the answer's own, which win; Node compresses it over
 * 1 KiB as the client accepts, the Worker's platform does the same. `stream`: a status, all of the headers, and the
 * chunks, pulled one at a time as the network takes them; an error before the first chunk becomes the usual error
 * answer, one after it cuts the connection so that a truncated body never looks complete.
 */
export type RouteAnswer = BytesAnswer | StreamAnswer | { readonly kind: 'gone' };

/**
 * An answer in bytes. `operation`: the operation it answers, and `failure`: the thrown value behind an error answer
 * made below the dispatcher (the query's), which the dispatcher logs when it is a bug, as its own.
 */
export type BytesAnswer = {
  readonly kind: 'bytes';
  readonly status: number;
  readonly body: Uint8Array | readonly Uint8Array[];
  readonly headers?: Readonly<Record<string, string>>;
  readonly operation?: string | null;
  readonly failure?: { readonly cause: unknown; readonly bug: boolean } | undefined;
};

export type StreamAnswer = { readonly kind: 'stream'; readonly status: number; readonly headers: Readonly<Record<string, string>>; readonly chunks: AsyncIterable<Uint8Array> };

/** A portable route's code: throw an ApiError (or anything: a bug becomes 500) and the host sends the canonical error. */
export type RouteHandler = (request: RouteRequest, context: RouteContext) => RouteAnswer | Promise<RouteAnswer>;

export type RouteMethod = 'GET' | 'POST';

export type Route = {
  /** The route's name: hosts key their own code for `host` routes by it. */
  readonly id: string;
  /** An exact path (`/healthz`), or a prefix ending in `/*` (`/snapshot/*`) for everything under it. */
  readonly path: string;
  /** The methods served. GET serves HEAD too (the same answer without its body). */
  readonly methods: readonly RouteMethod[];
  /**
   * Another method on this path: 405 method_not_allowed with an Allow header (true), or nothing matched (false: the
   * host goes on to its static files, and then 404 not_found).
   */
  readonly refuseOtherMethods: boolean;
  /** Answers the CORS preflight (OPTIONS) with 204; needed only where browsers send one (a POST of JSON). */
  readonly preflight?: { readonly allowHeaders: string; readonly maxAgeSeconds: number };
  /** The portable code that answers, or `host` when each host answers with its own code. */
  readonly handler: RouteHandler | 'host';
  /** A host may answer it with its own code instead of the handler (Node's export, which it bounds its own way). */
  readonly hostMayOwn?: true;
  /**
   * Node's fast lane answers it too, from the socket's bytes (its answers are always bytes): a GET route's GET and
   * HEAD, a POST route's POST (`POST <path> HTTP/1.1` exactly, with its body).
   */
  readonly lane?: true;
};

const encoder = new TextEncoder();

/** A JSON value as a `bytes` answer. */
export function jsonAnswer(status: number, value: unknown, headers?: Readonly<Record<string, string>>): RouteAnswer {
  return { kind: 'bytes', status, body: encoder.encode(JSON.stringify(value)), ...(headers && { headers }) };
}

/** POST /v1/query (src/api/query-answer.ts says what it answers): the body read by the host, run in its turn. */
const query: RouteHandler = async (request, context) => {
  const body = await context.body();
  const made = await context.turn((pause) => answerQuery(context.deps, context.snapshot, body, request.header('content-type'), context.onOperation, pause));
  if (made === GONE) return { kind: 'gone' };
  return { kind: 'bytes', status: made.status, body: made.body, headers: made.headers, operation: made.operation, failure: made.failure };
};

/**
 * POST /mcp (src/api/mcp/http.ts says what it answers): the Model Context Protocol's Streamable HTTP transport
 * without sessions. The body is read as a query's, each tool's operation runs in the request's turn as a query does,
 * and a failure behind a tool's error result (a damaged file, a bug) reaches the dispatcher as a query's does.
 */
const mcp: RouteHandler = async (request, context) => {
  // The protocol's SDK (its message schemas, a JSON Schema validator) is loaded by the first MCP request, not at
  // start: a Worker isolate that answers only searches and lookups never holds it.
  const { answerMcpPost, keptAnswer, readMcpPost, tooLarge } = await import('./mcp/http.ts');
  let body: Uint8Array;
  try {
    body = await context.body();
  } catch (err) {
    // Past the bound, the protocol's error rather than the envelope's, with the same status and closed connection.
    if (err instanceof ApiError && err.code === 'request_too_large') return mcpAnswer(tooLarge(MAX_BODY_BYTES), undefined);
    throw err;
  }
  const header = (name: string) => request.header(name);
  const budgetBytes = context.deps.mcpBudgetBytes ?? DEFAULT_BUDGET_BYTES;
  const answers = context.deps.answerCache;
  // Finished results are kept beside the operations' answers, for the snapshot this request is answered from.
  const resultCache = answers && context.snapshot ? { answers, snapshot: context.snapshot } : undefined;
  const post = readMcpPost(body);
  // A call whose result is kept is answered before anything else is made for the request (a backend, the SDK's turn).
  const kept = resultCache ? keptAnswer(header, post, budgetBytes, resultCache, context.allocate) : null;
  if (kept) return mcpAnswer(kept, undefined);
  let failure: { cause: unknown; bug: boolean } | undefined;
  let gone = false;
  const backend = localBackend({
    deps: context.deps,
    current: () => context.snapshot,
    schedule: async (work) => {
      const done = await context.turn(work);
      if (done === GONE) {
        gone = true;
        throw new Error('the client left before its turn');
      }
      return done;
    },
    onFailure: (f) => (failure ??= f),
  });
  const options: McpOptions = {
    backend,
    budgetBytes,
    onBug: (_tool: string, cause: unknown) => (failure ??= { cause, bug: true }),
    ...(resultCache && { resultCache }),
  };
  const answer = await answerMcpPost(header, post, options);
  if (gone) return { kind: 'gone' };
  return mcpAnswer(answer, failure);
};

/** An MCP answer as the route's: a 202 has no body (and no JSON headers but CORS'). */
function mcpAnswer(answer: McpAnswer, failure: { cause: unknown; bug: boolean } | undefined): RouteAnswer {
  return { kind: 'bytes', status: answer.status, body: answer.body ?? new Uint8Array(0), headers: answer.headers, ...(failure && { failure }) };
}

/** GET /healthz: 200 with the source state while a snapshot serves, else 503 saying why. */
const health: RouteHandler = (_request, { snapshot, problem, deps }) => {
  const sourceState = deps.sourceState(snapshot, deps.now());
  if (snapshot) return jsonAnswer(200, { status: 'ok', sourceState });
  return jsonAnswer(503, { status: 'unavailable', reason: problem ?? 'no valid snapshot is loaded', sourceState });
};

let openApiBytes: Uint8Array | null = null;
/** GET /v1/openapi.json: built once per process or isolate. */
const openApi: RouteHandler = () => {
  openApiBytes ??= encoder.encode(JSON.stringify(buildOpenApiDocument()));
  return { kind: 'bytes', status: 200, body: openApiBytes };
};

/** GET /v1/export (src/api/export-answer.ts says what it answers). */
const exportAll: RouteHandler = async (request, { snapshot, lendsChunks, deps }) => {
  const answer = await answerExport(request.url, snapshot, { lend: lendsChunks, cursors: deps.cursors, ...(deps.exportTables && { tables: deps.exportTables }) });
  return { kind: 'stream', status: 200, headers: answer.headers, chunks: answer.chunks };
};

/** GET /device/510k.json and /device/classification.json: openFDA's URLs, syntax and JSON (src/openfda). */
const openFda =
  (endpoint: Endpoint): RouteHandler =>
  async (request, { snapshot, deps, turn }) => {
    // The URL as the route read it: its query parsed once, here (src/openfda reads no URL of its own). Its work is
    // counted and sliced (src/openfda/plan.ts's Budget), each slice in the request's turn; without the host's pause
    // (the Worker), a slice ends with the platform's yield.
    const from = { origin: request.origin, path: request.path, target: request.url, query: request.query };
    const answer = await turn((pause) => answerOpenFdaRequest(deps, snapshot, endpoint, from, pause ? { pause } : {}));
    if (answer === GONE) return { kind: 'gone' };
    // A bug: the host logs it and answers 500 as for any route.
    if (answer.failure !== undefined) throw answer.failure;
    return { kind: 'bytes', status: answer.status, body: answer.chunks, headers: answer.headers };
  };
/** GET /v1/changes (src/api/changes.ts says what it answers). */
const changes: RouteHandler = async (request, { snapshot }) => ({ kind: 'bytes', ...(await answerChanges(request, snapshot)) });

/** GET /v1/feed (src/api/feed.ts says what it answers). */
const feed: RouteHandler = async (request, { snapshot }) => ({ kind: 'bytes', ...(await answerFeed(request, snapshot)) });

/** Every route of the API, in the order they are matched. */
export const ROUTES = [
  { id: 'query', path: '/v1/query', methods: ['POST'], refuseOtherMethods: true, preflight: { allowHeaders: 'Content-Type', maxAgeSeconds: 86400 }, handler: query },
  // The Model Context Protocol (src/api/mcp): GET (a server-sent stream) and DELETE (ending a session) are answered
  // 405, as the spec says for a server that offers neither.
  {
    id: 'mcp',
    path: '/mcp',
    methods: ['POST'],
    refuseOtherMethods: true,
    preflight: { allowHeaders: 'Content-Type, Accept, Authorization, Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID', maxAgeSeconds: 86400 },
    handler: mcp,
    lane: true,
  },
  { id: 'health', path: '/healthz', methods: ['GET'], refuseOtherMethods: false, handler: health },
  { id: 'openapi', path: '/v1/openapi.json', methods: ['GET'], refuseOtherMethods: false, handler: openApi },
  { id: 'export', path: '/v1/export', methods: ['GET'], refuseOtherMethods: false, handler: exportAll, hostMayOwn: true },
  { id: 'openfda-510k', path: '/device/510k.json', methods: ['GET'], refuseOtherMethods: false, handler: openFda('510k'), lane: true },
  { id: 'openfda-classification', path: '/device/classification.json', methods: ['GET'], refuseOtherMethods: false, handler: openFda('classification'), lane: true },
  { id: 'changes', path: '/v1/changes', methods: ['GET'], refuseOtherMethods: false, handler: changes },
  { id: 'feed', path: '/v1/feed', methods: ['GET'], refuseOtherMethods: false, handler: feed },
  { id: 'snapshot-files', path: '/snapshot/*', methods: ['GET'], refuseOtherMethods: false, handler: 'host' },
] as const satisfies readonly Route[];

/** The routes marked `lane` by path and method: Node's fast lane answers their GET and HEAD, or POST, with these handlers. */
const laneRoutes = (method: RouteMethod): ReadonlyMap<string, RouteHandler> =>
  new Map(ROUTES.flatMap((r): [string, RouteHandler][] => ('lane' in r && r.lane && (r.methods as readonly RouteMethod[]).includes(method) ? [[r.path, r.handler]] : [])));
export const LANE_ROUTES: ReadonlyMap<string, RouteHandler> = laneRoutes('GET');
export const LANE_POST_ROUTES: ReadonlyMap<string, RouteHandler> = laneRoutes('POST');

/** A route of the table, with its own literal id and handler. */
export type TableRoute = (typeof ROUTES)[number];

/** The routes each host answers with its own code: a host's map of them must name every one (the compiler checks). */
export type HostRouteId = Extract<TableRoute, { handler: 'host' }>['id'];

/** The routes a host may answer with its own code, or leave to their handler. */
export type HostMayRouteId = Extract<TableRoute, { hostMayOwn: true }>['id'];

/** Every answer carries this, errors included: the API is public and read-only, for any origin. */
export const CORS_HEADERS: Readonly<Record<string, string>> = { 'Access-Control-Allow-Origin': '*' };

export type RouteMatch =
  /** Run the route: its handler, or the host's own code when it is `host`. `rest` is what follows a prefix route's prefix. */
  | { readonly kind: 'route'; readonly route: TableRoute; readonly rest: string }
  /** Answer 204 with these headers and no body. */
  | { readonly kind: 'preflight'; readonly headers: Readonly<Record<string, string>> }
  /** Answer this error (405 method_not_allowed, with its Allow header). */
  | { readonly kind: 'refuse'; readonly error: ApiError }
  /** No route: the host's static files, else 404 not_found. */
  | { readonly kind: 'none' };

const NONE: RouteMatch = { kind: 'none' };

/** The methods a route answers, as an Allow header lists them. */
function allowOf(route: Route): string {
  const methods: string[] = [...route.methods];
  if (methods.includes('GET')) methods.push('HEAD');
  if (route.preflight) methods.push('OPTIONS');
  return methods.join(', ');
}

/** What, by the table, a request with this method and path (percent-encoded, no query string) is. */
export function matchRoute(method: string, path: string): RouteMatch {
  for (const route of ROUTES as readonly TableRoute[]) {
    const spec: Route = route;
    let rest = '';
    if (spec.path.endsWith('/*')) {
      const prefix = spec.path.slice(0, -1);
      if (!path.startsWith(prefix)) continue;
      rest = path.slice(prefix.length);
    } else if (path !== spec.path) {
      continue;
    }
    const served: readonly string[] = spec.methods;
    if (served.includes(method) || (method === 'HEAD' && served.includes('GET'))) return { kind: 'route', route, rest };
    if (method === 'OPTIONS' && spec.preflight) {
      return {
        kind: 'preflight',
        headers: {
          ...CORS_HEADERS,
          'Access-Control-Allow-Methods': allowOf(spec),
          'Access-Control-Allow-Headers': spec.preflight.allowHeaders,
          'Access-Control-Max-Age': String(spec.preflight.maxAgeSeconds),
        },
      };
    }
    if (!spec.refuseOtherMethods) return NONE;
    const sent = served.length === 1 ? `; send a ${served[0]}` : `; send one of ${served.join(', ')}`;
    return { kind: 'refuse', error: new ApiError('method_not_allowed', `${method} is not allowed on ${spec.path}${sent}.`, { headers: { Allow: allowOf(spec) } }) };
  }
  return NONE;
}

/**
 * A request target as received, without its fragment (the Worker's platform drops it; Node passes it on, and it is
 * no part of what is asked).
 */
export function withoutFragment(url: string): string {
  const hash = url.indexOf('#', 1);
  return hash < 0 ? url : url.slice(0, hash);
}

/** The path of a request target as received: what comes before its query string and fragment. */
export function pathOf(url: string): string {
  for (let i = 1; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c === 0x3f /* ? */ || c === 0x23 /* # */) return url.slice(0, i);
  }
  return url;
}

/** The request a portable handler sees, from what every host has: the method, the URL as received, and its headers. */
export function routeRequest(method: string, url: string, rest: string, header: (name: string) => string | undefined, origin: string, path = pathOf(url)): RouteRequest {
  let query: URLSearchParams | null = null;
  return {
    method,
    origin,
    path,
    url,
    // Parsed once, when a handler first asks: not on every request. The query string follows the path and its `?`.
    get query() {
      return (query ??= new URLSearchParams(url.length > path.length ? url.slice(path.length + 1) : ''));
    },
    rest,
    header,
  };
}
