import type { IncomingMessage, ServerResponse } from 'node:http';
import polka, { type Polka } from 'polka';
import type { Snapshot, SnapshotSource } from '../snapshot/index.ts';
import { ApiError } from '../api/errors.ts';
import { logWhenDone } from './log.ts';
import { exportHandler, type ExportDeps } from './export.ts';
import { buildOpenApiDocument } from '../api/openapi.ts';
import { queryHandler, sendError, type QueryDeps } from './query.ts';
import { sendJson } from './respond.ts';
import { snapshotFile } from './static.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
type Middleware = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

export type RouteContext = {
  deps: QueryDeps;
  snapshots: SnapshotSource;
  /** The browser page's files, or null for a bare API. */
  serveStatic: Middleware | null;
  fileMemoryMaxBytes: number;
  /** True once the server is stopping: answers then close their connection. */
  draining: () => boolean;
  /** GET /v1/export's bounds: its slots and the record table cache its exports share (export.ts). */
  exports: Pick<ExportDeps, 'slots' | 'tables' | 'onFlow' | 'batchSize'>;
};

/**
 * The routes: POST /v1/query (and its CORS preflight), GET /healthz, GET /v1/openapi.json, GET /snapshot/*, then
 * the browser page. Returns polka's app and the request handler for the HTTP server.
 */
export function mountRoutes(ctx: RouteContext): { polka: Polka; dispatch: Handler } {
  const { deps, snapshots } = ctx;
  const fail = (req: IncomingMessage, res: ServerResponse, err: unknown, snapshot: Snapshot | null = snapshots.current) =>
    sendError(deps, req, res, err, null, snapshot);
  const notFound = (req: IncomingMessage, res: ServerResponse) => fail(req, res, new ApiError('not_found', 'Nothing is served at this path.'));
  const unavailable = () => new ApiError('source_unavailable', 'No valid snapshot is loaded; try again once one has been published.');
  const answerQuery = queryHandler(deps);
  let openapi: Record<string, unknown> | null = null;

  const app = polka({
    onError: (err, req, res) => void fail(req, res, err),
    onNoMatch: (req, res) => void notFound(req, res),
  });
  app
    .use((req, res, next) => {
      logWhenDone(deps.logger, req, res);
      if (ctx.draining()) res.setHeader('Connection', 'close');
      next();
    })
    .post('/v1/query', answerQuery)
    .options('/v1/query', (_req, res) => {
      res.writeHead(204, {
        'Access-Control-Allow-Origin': '*',
        'Access-Control-Allow-Methods': 'POST, OPTIONS',
        'Access-Control-Allow-Headers': 'Content-Type',
        'Access-Control-Max-Age': '86400',
      });
      res.end();
    })
    .all('/v1/query', (req, res) =>
      fail(req, res, new ApiError('method_not_allowed', `${req.method} is not allowed on /v1/query; send a POST.`, { headers: { Allow: 'POST, OPTIONS' } })),
    )
    .get('/healthz', (req, res) => {
      const snapshot = snapshots.current;
      const sourceState = deps.sourceState(snapshot, deps.now());
      if (snapshot) return sendJson(req, res, 200, { status: 'ok', sourceState });
      return sendJson(req, res, 503, { status: 'unavailable', reason: snapshots.problem ?? 'no valid snapshot is loaded', sourceState });
    })
    .get('/v1/export', exportHandler({ current: () => snapshots.current, fail, turns: deps.turns, cursors: deps.cursors, ...ctx.exports }))
    .get('/v1/openapi.json', (req, res) => {
      openapi ??= buildOpenApiDocument();
      return sendJson(req, res, 200, openapi);
    })
    .get('/snapshot/*', (req, res) => {
      const snapshot = snapshots.current;
      if (!snapshot) return fail(req, res, unavailable(), null);
      snapshotFile(
        snapshot,
        req.path.slice('/snapshot/'.length),
        req,
        res,
        () => void notFound(req, res),
        (err) => void fail(req, res, err, snapshot),
        ctx.fileMemoryMaxBytes,
      );
    });
  const serveStatic = ctx.serveStatic;
  if (serveStatic) app.use((req, res, next) => serveStatic(req, res, () => void next()));

  // The API's one route skips the router: what polka's middleware above does for it is done here.
  const dispatch: Handler = (req, res) => {
    if (req.method === 'POST' && req.url === '/v1/query') {
      logWhenDone(deps.logger, req, res);
      if (ctx.draining()) res.setHeader('Connection', 'close');
      void answerQuery(req, res);
    } else {
      app.handler(req as never, res, undefined as never);
    }
  };
  return { polka: app, dispatch };
}
