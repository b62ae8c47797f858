import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import polka, { type Polka } from 'polka';
import type { OperationName } from '../contract/index.ts';
import { CursorCodec, OPERATION_REGISTRY, warmSearch, type Operation, type OperationRegistry } from '../operations/index.ts';
import { SnapshotSource, SyncStateReader, type CheckResult, type Snapshot } from '../snapshot/index.ts';
import {
  DEFAULT_FRESHNESS_MAX_AGE_HOURS,
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_OPERATION_TIMEOUT_MS,
  DEFAULT_PIPELINE_DEPTH,
  DEFAULT_PUBLIC_DIR,
  DEFAULT_REQUEST_TIMEOUT_MS,
  defaultSyncStatePath,
  type ServerConfig,
} from './config.ts';
import { ApiError } from './errors.ts';
import { jsonLogger, logWhenDone, type Logger } from './log.ts';
import { buildOpenApiDocument } from './openapi.ts';
import { queryHandler, sendError } from './query.ts';
import { sendJson } from './respond.ts';
import { SourceStateJson, sourceStateOf } from './source-state.ts';
import { limitPipelining } from './pipeline.ts';
import { precompressedCopy } from './public-dir.ts';
import { publicFiles, snapshotFile } from './static.ts';

export type AppOptions = ServerConfig & {
  logger?: Logger;
  /** Handlers that replace the built-in ones, by operation name (to wire an operation in, or a failing one in tests). */
  operations?: Partial<OperationRegistry>;
  /** The clock, for tests of freshness. */
  now?: () => Date;
};

export type App = {
  readonly server: Server;
  readonly polka: Polka;
  readonly snapshots: SnapshotSource;
  readonly syncState: SyncStateReader | null;
  /** Starts listening; port 0 picks a free port. */
  listen(port?: number, host?: string): Promise<{ port: number; host: string; url: string }>;
  /** Looks at the snapshot link now (what SIGHUP does) and switches if it changed. */
  reload(): Promise<CheckResult>;
  /** Stops taking connections, lets requests in flight finish (up to `graceMs`), then stops watching. */
  close(options?: { graceMs?: number }): Promise<void>;
};

/**
 * The server: POST /v1/query, GET /healthz, GET /v1/openapi.json, the active snapshot under /snapshot/, and the
 * browser page from public/. Options are read once, here; the first snapshot is opened before this resolves, and
 * a missing or broken one leaves the server answering 503 until a valid one is published.
 */
export async function createApp(options: AppOptions): Promise<App> {
  if (typeof options.snapshotPath !== 'string' || options.snapshotPath === '') {
    throw new Error('Expected `snapshotPath` to be the path of the snapshot link or directory');
  }
  const maxAgeHours = options.freshnessMaxAgeHours ?? DEFAULT_FRESHNESS_MAX_AGE_HOURS;
  if (!(maxAgeHours > 0)) throw new Error(`Expected \`freshnessMaxAgeHours\` to be a number above 0, got ${maxAgeHours}`);
  const logger = options.logger ?? jsonLogger();
  const now = options.now ?? (() => new Date());
  const cursors = new CursorCodec(options.cursorSecret);
  const syncStatePath = options.syncStatePath === undefined ? defaultSyncStatePath(options.snapshotPath) : options.syncStatePath;
  const syncState =
    syncStatePath === null
      ? null
      : new SyncStateReader(syncStatePath, { pollMs: options.syncPollMs ?? 5000, onError: (m) => logger.error(m) });

  const snapshots = new SnapshotSource(options.snapshotPath, {
    snapshot: {
      cacheBytes: options.cacheBytes,
      onCorrupt: (r) => logger.error('snapshot file does not match its sha256; it is not served', { ...r }),
    },
    pollMs: options.pollMs ?? 1000,
    watch: options.watch ?? true,
    prepare: warmSearch,
    onPrepareError: (next, err) => logger.error('could not load the search index ahead of the switch', { snapshotId: next.id, reason: err.message }),
    onSwitch: (next, previous) => {
      logger.info('snapshot loaded', {
        snapshotId: next.id,
        generatedAt: next.manifest.generatedAt,
        records: next.manifest.counts.records,
        previousSnapshotId: previous?.id ?? null,
      });
      void syncState?.refresh();
    },
    onRefuse: (target, err) => logger.error('snapshot refused; the current one keeps serving', { target, reason: err.message }),
  });

  const operations: { -readonly [N in OperationName]: Operation } = { ...OPERATION_REGISTRY };
  for (const [name, op] of Object.entries(options.operations ?? {}) as [OperationName, Operation | undefined][]) {
    if (op) operations[name] = op;
  }
  await Promise.all([snapshots.start(), syncState?.start()]);
  if (!snapshots.current) logger.error('no valid snapshot is loaded; answering 503 until one is published', { path: snapshots.path });

  const sourceState = (snapshot: Snapshot | null, at: Date, warnings?: readonly string[]) =>
    sourceStateOf({ manifest: snapshot?.manifest ?? null, sync: syncState?.current ?? null, now: at, maxAgeHours, warnings });
  const stateJson = new SourceStateJson();
  const deps = {
    operations,
    current: () => snapshots.current,
    sourceState,
    sourceStateJson: (snapshot: Snapshot | null, at: Date, warnings?: readonly string[]) =>
      stateJson.json({ manifest: snapshot?.manifest ?? null, sync: syncState?.current ?? null, now: at, maxAgeHours, warnings }),
    cursors,
    logger,
    now,
    operationTimeoutMs: options.operationTimeoutMs ?? DEFAULT_OPERATION_TIMEOUT_MS,
  };
  const fail = (req: IncomingMessage, res: ServerResponse, err: unknown, snapshot: Snapshot | null = snapshots.current) =>
    sendError(deps, req, res, err, null, snapshot);
  const notFound = (req: IncomingMessage, res: ServerResponse) =>
    fail(req, res, new ApiError('not_found', 'Nothing is served at this path.'));

  const answerQuery = queryHandler(deps);
  let draining = false;
  const headersTimeout = options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  const requestTimeout = Math.max(options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, headersTimeout);
  const server = createServer({
    keepAliveTimeout: 5000,
    headersTimeout,
    requestTimeout,
    // Node checks the two timeouts on this interval (30 s by default), which would let a short limit run long.
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(headersTimeout / 4))),
  });
  // The two limits above end once a request has arrived. A client that then stops reading keeps its socket and the
  // answers queued for it for good; drop the connection once nothing has moved either way for as long.
  server.timeout = requestTimeout;
  const app = polka({
    server,
    onError: (err, req, res) => void fail(req, res, err),
    onNoMatch: (req, res) => void notFound(req, res),
  });

  let openapi: Record<string, unknown> | null = null;
  const pageDir = await precompressedCopy(options.publicDir === undefined ? DEFAULT_PUBLIC_DIR : (options.publicDir ?? ''));
  const serveStatic = pageDir === null ? null : publicFiles(pageDir);
  if (!serveStatic && options.publicDir !== null) logger.info('no public/ folder: the browser page is not served');

  app
    .use((req, res, next) => {
      logWhenDone(logger, req, res);
      if (draining) res.setHeader('Connection', 'close');
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
      const state = sourceState(snapshot, now());
      return sendJson(req, res, snapshot ? 200 : 503, { status: snapshot ? 'ok' : 'unavailable', sourceState: state });
    })
    .get('/v1/openapi.json', (req, res) => {
      openapi ??= buildOpenApiDocument();
      return sendJson(req, res, 200, openapi);
    })
    .get('/snapshot/*', (req, res) => {
      const snapshot = snapshots.current;
      if (!snapshot) return fail(req, res, new ApiError('source_unavailable', 'No valid snapshot is loaded yet.'), null);
      snapshotFile(
        snapshot,
        req.path.slice('/snapshot/'.length),
        req,
        res,
        () => void notFound(req, res),
        (err) => void fail(req, res, err, snapshot),
      );
    });
  if (serveStatic) app.use((req, res, next) => serveStatic(req, res, () => void next()));

  // The API's one route skips the router: what polka's middleware above does for it is done here.
  const dispatch = (req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'POST' && req.url === '/v1/query') {
      logWhenDone(logger, req, res);
      if (draining) res.setHeader('Connection', 'close');
      void answerQuery(req, res);
    } else {
      app.handler(req as never, res, undefined as never);
    }
  };
  server.on('request', limitPipelining(options.pipelineDepth ?? DEFAULT_PIPELINE_DEPTH, dispatch));
  // No 'clientError' listener on purpose: Node's own handler answers each client error with its status (431 for
  // headers over maxHeaderSize, 408 when a timeout above cuts a slow client, 400 for garbage), writes nothing into an
  // answer already under way, and destroys the socket; a listener of ours would have to redo all of that.

  return {
    server,
    polka: app,
    snapshots,
    syncState,
    listen(port = 0, host = '127.0.0.1') {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          const address = server.address() as AddressInfo;
          const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
          resolve({ port: address.port, host: address.address, url: `http://${shown}:${address.port}` });
        });
      });
    },
    reload: () => snapshots.check(),
    async close({ graceMs = 10_000 } = {}) {
      draining = true;
      snapshots.close();
      syncState?.close();
      if (!server.listening) return;
      await new Promise<void>((resolve) => {
        // Idle keep-alive connections would hold close() open; requests in flight finish and then go idle too.
        const sweep = setInterval(() => server.closeIdleConnections(), 50);
        const deadline = setTimeout(() => server.closeAllConnections(), graceMs);
        server.close(() => {
          clearInterval(sweep);
          clearTimeout(deadline);
          resolve();
        });
        server.closeIdleConnections();
      });
    },
  };
}
