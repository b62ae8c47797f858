import type { Snapshot } from '../snapshot/snapshot.ts';
import { ClientGone } from './body.ts';
import { ApiError } from './errors.ts';
import { BUG_MESSAGE, bugFields } from './log.ts';
import { errorAnswer, type QueryDeps } from './query-answer.ts';
import {
  CORS_HEADERS,
  GONE,
  matchRoute,
  pathOf,
  routeRequest,
  withoutFragment,
  type BytesAnswer,
  type HostMayRouteId,
  type HostRouteId,
  type RouteAnswer,
  type RouteContext,
  type RouteHandler,
  type TableRoute,
} from './routes.ts';

/**
 * The one dispatcher of the API for every host, as hono's `dispatch` under its adapters: a request is matched against
 * the route table (routes.ts), a preflight or a refusal answered as the table says, the route's handler run over the
 * snapshot the request started on, and its answer handed to the host to send; every failure becomes the canonical
 * error answer, a bug is logged with its stack, HEAD gets the headers alone, and a request no route serves goes to
 * the host's fallback (the page's files), else 404. A host (src/server/routes.ts for Node, src/worker/index.ts for
 * the Worker) only says how to read its request, what it holds, and how to send an answer.
 */

/** A request as every host has it: its method, its target as received (`/v1/export?query=valve`), origin and headers. */
export type HostRequest = {
  readonly method: string;
  readonly url: string;
  /** The path of `url`, when the host has already split it off (Node's fast lane); else the dispatcher does. */
  readonly path?: string;
  readonly origin: string;
  header(name: string): string | undefined;
};

/**
 * What the host sends. `json`: a JSON answer's status, body and own headers, which the host sends under the JSON
 * headers (json-headers.ts) with its coding. `stream`: all of the headers and the chunks. `empty`: a status and
 * headers, no body. `head`: a HEAD, answered with the headers alone.
 */
export type Sendable =
  | { readonly kind: 'json'; readonly status: number; readonly body: Uint8Array | readonly Uint8Array[]; readonly headers: Readonly<Record<string, string>>; readonly head: boolean }
  | { readonly kind: 'stream'; readonly status: number; readonly headers: Readonly<Record<string, string>>; readonly chunks: AsyncIterable<Uint8Array>; readonly head: boolean }
  | { readonly kind: 'empty'; readonly status: number; readonly headers: Readonly<Record<string, string>> };

/** What a host's own code for a route has of the dispatcher: the error answer for a thrown value, and the 404. */
export type HostTools<T> = {
  fail(err: unknown, snapshot: Snapshot | null): Promise<T>;
  notFound(snapshot: Snapshot | null): Promise<T>;
};

/** A host's own code for a route: answers (T), or null to hand the request on to the host's fallback. */
export type HostRoute<N, T> = (native: N, rest: string, tools: HostTools<T>) => T | null | Promise<T | null>;

/** The host's code for the routes the table leaves to it (every one), and for those it may take (as it wants). */
export type HostRoutes<N, T> = Record<HostRouteId, HostRoute<N, T>> & Partial<Record<HostMayRouteId, HostRoute<N, T>>>;

/** What a request of the host's can do: read its body, wait for its turn, and note its operation. */
export type RequestIo = Pick<RouteContext, 'body' | 'turn' | 'onOperation' | 'allocate'>;

/** A host: `N` is its own request (Node's request and response, a Web Request), `T` what it makes of an answer. */
export type Host<N, T> = {
  /** Operations, cursors, clock, source state, answer cache and deadline. */
  readonly deps: QueryDeps;
  readonly lendsChunks: boolean;
  /** The snapshot serving now: read once per request. */
  snapshot(): Snapshot | null | Promise<Snapshot | null>;
  /** Why no snapshot is loaded, when the host knows. */
  problem(): string | null;
  io(native: N): RequestIo;
  own: HostRoutes<N, T>;
  /** Sends an answer; throws when it could not be made (a coding that failed), and the error answer is sent instead. */
  send(native: N, answer: Sendable): T | Promise<T>;
  /** Sends nothing: the client is gone. */
  gone(native: N): T;
  /** Cuts the connection: part of an answer is out and the rest cannot follow, or not even an error can be sent. */
  cut(native: N): T;
  /** A request no route serves: the host's own files, or null for the 404. */
  fallback(native: N): T | null | Promise<T | null>;
  /** Logs an error event (a bug with its stack). */
  logError(message: string, fields: Record<string, unknown>): void;
  /** Told of the cause of each failure behind an error answer (the Worker reads its manifest again after a bad file). */
  onFailure?(cause: unknown): void;
};

export type Dispatcher<N, T> = {
  /** Answers one request, whatever happens: nothing it does throws. */
  dispatch(native: N, request: HostRequest): Promise<T>;
  /**
   * A table route's answer as bytes, for a host that sends it its own way (Node's fast lane, for routes marked
   * `lane`); `io` is how the request reads its body and waits for its turn (none: no body, and at once). A failure,
   * or an answer that is not bytes, is made the error answer and logged.
   */
  answer(handler: RouteHandler, request: HostRequest, io?: RequestIo): Promise<{ snapshot: Snapshot | null; answer: BytesAnswer }>;
};

const NOT_FOUND = 'Nothing is served at this path.';

const NO_IO: RequestIo = {
  body: () => Promise.resolve(new Uint8Array(0)),
  turn: (work) => work(),
  onOperation: () => {},
};

export function createDispatcher<N, T>(host: Host<N, T>): Dispatcher<N, T> {
  const { deps } = host;
  const snapshotOrNull = async (): Promise<Snapshot | null> => {
    try {
      return await host.snapshot();
    } catch {
      return null;
    }
  };

  /** A failure as its error answer (bytes), logged when it is a bug. */
  const failure = (err: unknown, operation: string | null, snapshot: Snapshot | null): BytesAnswer => {
    const made = errorAnswer(deps, err, operation, snapshot);
    return { kind: 'bytes', status: made.status, body: made.body, headers: made.headers, operation, failure: made.failure };
  };

  const noteFailure = (answer: BytesAnswer, request: HostRequest): void => {
    const f = answer.failure;
    if (!f) return;
    if (f.bug) host.logError(BUG_MESSAGE, bugFields(f.cause, request.method, pathOf(request.url), answer.operation ?? null));
    host.onFailure?.(f.cause);
  };

  /** A JSON answer sent; one that could not be made becomes its error, and an error that cannot be sent cuts. */
  const sendJson = async (native: N, request: HostRequest, answer: BytesAnswer, snapshot: Snapshot | null): Promise<T> => {
    noteFailure(answer, request);
    try {
      return await host.send(native, { kind: 'json', status: answer.status, body: answer.body, headers: answer.headers ?? {}, head: request.method === 'HEAD' });
    } catch (sendErr) {
      if (answer.status === 200) return sendJson(native, request, failure(sendErr, answer.operation ?? null, snapshot), snapshot);
      host.logError('could not send an error answer', { stack: sendErr instanceof Error ? sendErr.stack : String(sendErr) });
      return host.cut(native);
    }
  };

  const fail = (native: N, request: HostRequest, err: unknown, snapshot: Snapshot | null): Promise<T> => {
    if (err instanceof ClientGone) return Promise.resolve(host.gone(native));
    return sendJson(native, request, failure(err, null, snapshot), snapshot);
  };

  const send = async (native: N, request: HostRequest, answer: RouteAnswer, snapshot: Snapshot | null): Promise<T> => {
    if (answer.kind === 'gone') return host.gone(native);
    if (answer.kind === 'bytes') return sendJson(native, request, answer, snapshot);
    const sendable: Sendable = { kind: 'stream', status: answer.status, headers: { ...CORS_HEADERS, ...answer.headers }, chunks: answer.chunks, head: request.method === 'HEAD' };
    try {
      return await host.send(native, sendable);
    } catch (err) {
      // Before the first byte, the error is the answer; after it the host cuts the connection (its `send` of a JSON
      // answer once the headers are out), so that a truncated body never looks complete.
      return fail(native, request, err, snapshot);
    }
  };

  const contextOf = (native: N | null, snapshot: Snapshot | null, io: RequestIo = NO_IO): RouteContext => ({
    snapshot,
    problem: host.problem(),
    deps,
    lendsChunks: host.lendsChunks,
    ...(native === null ? io : host.io(native)),
  });

  /** Runs a handler; one that throws at once fails as one whose promise rejects. */
  const run = (handler: RouteHandler, native: N | null, request: HostRequest, rest: string, path: string, snapshot: Snapshot | null, io?: RequestIo): Promise<RouteAnswer> => {
    try {
      const routed = routeRequest(request.method, withoutFragment(request.url), rest, request.header, request.origin, path);
      return Promise.resolve(handler(routed, contextOf(native, snapshot, io)));
    } catch (err) {
      return Promise.reject(err);
    }
  };

  const toolsOf = (native: N, request: HostRequest): HostTools<T> => ({
    fail: (err, snapshot) => fail(native, request, err, snapshot),
    notFound: (snapshot) => fail(native, request, new ApiError('not_found', NOT_FOUND), snapshot),
  });

  const fallback = async (native: N, request: HostRequest): Promise<T> => {
    const answered = await host.fallback(native);
    return answered !== null ? answered : fail(native, request, new ApiError('not_found', NOT_FOUND), await snapshotOrNull());
  };

  const routed = async (native: N, request: HostRequest, route: TableRoute, rest: string, path: string): Promise<T> => {
    const own = (host.own as Partial<Record<string, HostRoute<N, T>>>)[route.id];
    if (own) {
      const answered = await own(native, rest, toolsOf(native, request));
      return answered !== null ? answered : fallback(native, request);
    }
    // Only `host` routes have no handler, and a host names every one of them (HostRoutes).
    const handler = route.handler as RouteHandler;
    let snapshot: Snapshot | null = null;
    let answer: RouteAnswer;
    try {
      snapshot = await host.snapshot();
      answer = await run(handler, native, request, rest, path, snapshot);
    } catch (err) {
      return fail(native, request, err, snapshot ?? (await snapshotOrNull()));
    }
    return send(native, request, answer, snapshot);
  };

  const dispatch = async (native: N, request: HostRequest): Promise<T> => {
    try {
      const path = pathOf(request.url);
      const match = matchRoute(request.method, path);
      if (match.kind === 'route') return await routed(native, request, match.route, match.rest, path);
      if (match.kind === 'preflight') return await host.send(native, { kind: 'empty', status: 204, headers: match.headers });
      if (match.kind === 'refuse') return await fail(native, request, match.error, await snapshotOrNull());
      return await fallback(native, request);
    } catch (err) {
      // Nothing above throws by design; a bug that does is still the canonical error answer.
      return fail(native, request, err, await snapshotOrNull());
    }
  };

  const answer = async (handler: RouteHandler, request: HostRequest, io?: RequestIo) => {
    let snapshot: Snapshot | null = null;
    let made: BytesAnswer;
    try {
      snapshot = await host.snapshot();
      const path = request.path ?? pathOf(request.url);
      const routedAnswer = await run(handler, null, request, '', path, snapshot, io);
      if (routedAnswer.kind !== 'bytes') throw new Error(`${path} answered a ${routedAnswer.kind}, which only the dispatcher sends`);
      made = routedAnswer;
    } catch (err) {
      made = failure(err, null, snapshot);
    }
    noteFailure(made, request);
    return { snapshot, answer: made };
  };

  return { dispatch, answer };
}

export { GONE };

/** What a host answers when it could not start (a wrong configuration, which it logs): 500 internal_error. */
export function notConfigured(deps: Pick<QueryDeps, 'sourceState' | 'now'>, head: boolean): Sendable {
  const made = errorAnswer(deps, new ApiError('internal_error', 'The service is not configured; the failure has been logged.'), null, null);
  return { kind: 'json', status: made.status, body: made.body, headers: made.headers, head };
}
