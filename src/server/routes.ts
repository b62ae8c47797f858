import type { IncomingMessage, ServerResponse } from 'node:http';
import polka, { type Polka } from 'polka';
import type { SnapshotSource } from '../node/index.ts';
import type { Snapshot } from '../snapshot/index.ts';
import { ApiError } from '../api/errors.ts';
import { CORS_HEADERS, matchRoute, ROUTES, routeRequest, type HostRouteId, type RouteAnswer, type RouteContext, type RouteHandler } from '../api/routes.ts';
import { logWhenDone } from './log.ts';
import { coreDeps, queryHandler, sendError, type QueryDeps } from './query-handler.ts';
import { sendBytes } from './respond.ts';
import { snapshotFile } from './static.ts';
import { sendStream } from './stream.ts';
import { exportHandler, type ExportDeps } from './export-handler.ts';
import { mcpHandler } from './mcp-handler.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
type Middleware = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

export type RouteOptions = {
  deps: QueryDeps;
  snapshots: SnapshotSource;
  /** The browser page's files, or null for a bare API. */
  serveStatic: Middleware | null;
  fileMemoryMaxBytes: number;
  /** POST /mcp's byte budget of a tool result (mcp-handler.ts). */
  mcpBudgetBytes: number;
  /** GET /v1/export's bounds: its slots and the record table cache its exports share (export-handler.ts). */
  exports: Pick<ExportDeps, 'slots' | 'tables' | 'onFlow' | 'batchSize'>;
};

type Fail = (req: IncomingMessage, res: ServerResponse, err: unknown, snapshot?: Snapshot | null) => Promise<void>;
/** Node's code for the routes the table leaves to each host; `rest` is what follows a prefix route's prefix. */
type NodeRoute = (req: IncomingMessage, res: ServerResponse, rest: string) => void | Promise<void>;

/** A portable route's answer to a request, and the snapshot it started on (for the error a failure becomes). */
export type PortableRun = { snapshot: Snapshot | null; answer: Promise<RouteAnswer> };
/** Runs a portable route's handler for a request: the method, the URL as received, the Host header, and a header by name. */
export type RunPortable = (handler: RouteHandler, method: string, url: string, rest: string, host: string | undefined, header: (name: string) => string | undefined) => PortableRun;

/**
 * The routes whose GET and HEAD the fast lane answers too, each with the same portable handler (runPortable) and the
 * same encoding (respond.ts's `encodeAnswer`) as Node's route: openFDA's device endpoints, whose answers are bytes.
 */
export const FAST_LANE_GET_ROUTES: ReadonlyMap<string, RouteHandler> = new Map(
  ROUTES.filter((r) => r.id === 'openfda-510k' || r.id === 'openfda-classification').map((r) => [r.path, r.handler as RouteHandler]),
);

/**
 * The API's routes on Node, from the one table in src/api/routes.ts: its preflights, refusals and portable handlers,
 * with Node's own code for the query and the snapshot's files; then the browser page. Returns polka's app and the
 * request handler for the HTTP server.
 */
export function mountRoutes(options: RouteOptions): { polka: Polka; dispatch: Handler; runPortable: RunPortable } {
  const { deps, snapshots } = options;
  const fail: Fail = (req, res, err, snapshot = snapshots.current) => sendError(deps, req, res, err, null, snapshot);
  const notFound = (req: IncomingMessage, res: ServerResponse) => fail(req, res, new ApiError('not_found', 'Nothing is served at this path.'));
  const answerQuery = queryHandler(deps);
  const core = coreDeps(deps);

  const runPortable: RunPortable = (handler, method, url, rest, host, header) => {
    const snapshot = snapshots.current;
    const context: RouteContext = { snapshot, problem: snapshots.problem, deps: core, lendsChunks: true };
    const request = routeRequest(method, url, rest, header, originOf(host ?? ''));
    // A handler that throws at once fails as one whose promise rejects.
    let answer: Promise<RouteAnswer>;
    try {
      answer = Promise.resolve(handler(request, context));
    } catch (err) {
      answer = Promise.reject(err);
    }
    return { snapshot, answer };
  };

  /**
   * Portable routes that Node answers with its own code: the export, whose stream Node bounds (a slot per export,
   * batches in the connection's turn, compression as the client accepts; export-handler.ts). The Worker runs the table's
   * handler, and its platform bounds each request.
   */
  const nodeOwn: Partial<Record<string, NodeRoute>> = {
    export: exportHandler({ current: () => snapshots.current, fail, turns: deps.turns, cursors: deps.cursors, ...options.exports }),
  };

  const own: Record<HostRouteId, NodeRoute> = {
    query: answerQuery,
    mcp: mcpHandler(deps, options.mcpBudgetBytes),
    'snapshot-files': (req, res, rest) => {
      const snapshot = snapshots.current;
      if (!snapshot) return fail(req, res, new ApiError('source_unavailable', 'No valid snapshot is loaded; try again once one has been published.'), null);
      snapshotFile(
        snapshot,
        rest,
        req,
        res,
        () => void notFound(req, res),
        (err) => void fail(req, res, err, snapshot),
        options.fileMemoryMaxBytes,
      );
    },
  };

  const app = polka({
    onError: (err, req, res) => void fail(req, res, err),
    onNoMatch: (req, res) => void notFound(req, res),
  });
  app.use((req, res, next) => {
    logWhenDone(deps.logger, req, res);
    next();
  });
  app.use((req, res, next) => {
    const method = req.method ?? '';
    const match = matchRoute(method, req.path);
    if (match.kind === 'none') return next();
    if (match.kind === 'preflight') {
      res.writeHead(204, match.headers);
      res.end();
      return;
    }
    if (match.kind === 'refuse') return void fail(req, res, match.error);
    const { route, rest } = match;
    if (route.handler === 'host') return void own[route.id](req, res, rest);
    const nodeRoute = nodeOwn[route.id];
    if (nodeRoute) return void nodeRoute(req, res, rest);
    const run = runPortable(route.handler, method, req.url ?? '', rest, req.headers.host, (name) => headerOf(req, name));
    void (async () => {
      try {
        await send(req, res, await run.answer);
      } catch (err) {
        await fail(req, res, err, run.snapshot);
      }
    })();
  });
  const serveStatic = options.serveStatic;
  if (serveStatic) app.use((req, res, next) => serveStatic(req, res, () => void next()));

  // The API's one route skips the router: what polka's middleware above does for it is done here.
  const dispatch: Handler = (req, res) => {
    if (req.method === 'POST' && req.url === '/v1/query') {
      logWhenDone(deps.logger, req, res);
      void answerQuery(req, res);
    } else {
      app.handler(req as never, res, undefined as never);
    }
  };
  return { polka: app, dispatch, runPortable };
}

/** The origin of links in answers: the Host header's when it is a plain host[:port], else localhost's. */
function originOf(host: string): string {
  return `http://${/^[\w.-]+(:\d+)?$|^\[[0-9a-fA-F:.]+\](:\d+)?$/.test(host) ? host : 'localhost'}`;
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** A portable handler's answer, sent: bytes with the JSON headers (compressed as the client accepts), or streamed. */
function send(req: IncomingMessage, res: ServerResponse, answer: RouteAnswer): Promise<void> {
  if (answer.kind === 'bytes') return sendBytes(req, res, answer.status, answer.body, answer.headers);
  return sendStream(req, res, answer.status, { ...CORS_HEADERS, ...answer.headers }, answer.chunks);
}
