import { createHmac } from 'node:crypto';
import { resolve } from 'node:path';
import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { AnswerCache } from '../utils/answer-cache.ts';
import { CursorCodec, warmSearch } from '../operations/index.ts';
import { SnapshotSource, SyncStateReader, type CheckResult } from '../node/index.ts';
import { UNREADABLE, type Snapshot } from '../snapshot/index.ts';
import { resolveAppOptions, type AppOptions, type ResolvedOptions } from './app-options.ts';
import { closeGracefully, createHttpServer } from './http-server.ts';
import { headerOf as laneHeader, installFastLane, type FastLaneControl } from './fast-lane.ts';
import { MAX_BODY_BYTES } from '../api/body.ts';
import { errorAnswer } from '../api/query-answer.ts';
import { limitPipelining } from './pipelining.ts';
import { createTurns } from './turns.ts';
import { createExportSlots, type ExportSlots } from './export-slots.ts';
import { ExportTables } from '../operations/export-tables.ts';
import { precompressedCopy } from './public-dir.ts';
import { queryRunner, type QueryDeps } from './query-handler.ts';
import { mountRoutes, originOf } from './routes.ts';
import { GONE, LANE_POST_ROUTES, LANE_ROUTES } from '../api/routes.ts';
import { SourceStateJson, sourceStateOf } from '../api/source-state.ts';
import { publicFiles } from './static.ts';

export type { AppOptions } from './app-options.ts';

export type App = {
  readonly server: Server;
  readonly snapshots: SnapshotSource;
  readonly syncState: SyncStateReader | null;
  /** The fast lane in front of Node's HTTP server (null when it is off). */
  readonly fastLane: FastLaneControl | null;
  /** Exports streaming now, and the bound (EXPORT_CONCURRENCY). */
  readonly exports: ExportSlots;
  /** Starts listening; port 0 picks a free port. */
  listen(port?: number, host?: string): Promise<{ port: number; host: string; url: string }>;
  /** Looks at the snapshot link now and opens a refused snapshot again (what SIGHUP does); switches if it can. */
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
  const settings = resolveAppOptions(options);
  const { snapshots, syncState } = followSnapshots(settings);
  await Promise.all([snapshots.start(), syncState?.start()]);
  if (!snapshots.current) settings.logger.error('no valid snapshot is loaded; answering 503 until one is published', { path: snapshots.path, reason: snapshots.problem });

  const pageDir = await precompressedCopy(settings.publicDir ?? '');
  const serveStatic = pageDir === null ? null : publicFiles(pageDir);
  if (!serveStatic && settings.publicDir !== null) settings.logger.info('no public/ folder: the browser page is not served');

  let draining = false;
  const deps = queryDeps(settings, snapshots, syncState);
  const exportSlots = createExportSlots(settings.exportConcurrency);
  const { handle, dispatcher } = mountRoutes({
    deps,
    snapshots,
    serveStatic,
    fileMemoryMaxBytes: settings.fileMemoryMaxBytes,
    exports: { slots: exportSlots, tables: new ExportTables(settings.exportTableBytes), ...settings.exportHooks },
  });
  const pipelining = {
    depth: settings.pipelineDepth,
    maxWaiting: settings.pipelineMaxWaiting,
    onRefused: (socket: Socket) =>
      settings.logger.info('connection closed: too many pipelined requests waiting', { remote: socket.remoteAddress ?? null, waitingMax: settings.pipelineMaxWaiting }),
  };
  const server = createHttpServer(settings, limitPipelining(pipelining, handle), () => draining);
  const lane = settings.fastLane
    ? installFastLane(server, {
        current: () => snapshots.current,
        runner: (allocate) => queryRunner({ ...deps, allocate }),
        fail: (err, operation, snapshot) => errorAnswer(deps, err, operation, snapshot),
        logger: settings.logger,
        draining: () => draining,
        depth: pipelining.depth,
        maxWaiting: pipelining.maxWaiting,
        onRefused: pipelining.onRefused,
        maxBodyBytes: MAX_BODY_BYTES,
        bufferBytes: settings.pipelineBufferBytes,
        requestTimeoutMs: settings.requestTimeoutMs,
        getPaths: new Set(LANE_ROUTES.keys()),
        postPaths: new Set(LANE_POST_ROUTES.keys()),
        answerRoute: (route, body, socket, allocate) => {
          const request = { method: route.method, url: route.url, path: route.path, origin: originOf(route.host), header: (name: string) => laneHeader(route.fields, name) };
          if (route.method !== 'POST') return dispatcher.answer(LANE_ROUTES.get(route.path)!, request);
          // A POST's work waits for its connection's turn, as /v1/query's on the lane and every route's on Node's path.
          return dispatcher.answer(LANE_POST_ROUTES.get(route.path)!, request, {
            body: () => Promise.resolve(body),
            turn: <T,>(work: (pause?: () => Promise<void>) => Promise<T>) => deps.turns.run<T | typeof GONE>(socket, (pause) => (socket.destroyed ? Promise.resolve(GONE) : work(pause))),
            onOperation: () => {},
            allocate,
          });
        },
      })
    : null;

  return {
    server,
    snapshots,
    syncState,
    fastLane: lane,
    exports: exportSlots,
    listen: (port = 0, host = '127.0.0.1') => listen(server, port, host),
    reload: () => snapshots.check({ retry: true }),
    async close({ graceMs = 10_000 } = {}) {
      draining = true;
      snapshots.close();
      syncState?.close();
      await closeGracefully(server, graceMs, lane);
    },
  };
}

/** The snapshot link and the sync's state file, each followed for changes, with what they report logged. */
function followSnapshots(settings: ResolvedOptions): { snapshots: SnapshotSource; syncState: SyncStateReader | null } {
  const { logger } = settings;
  const syncState =
    settings.syncStatePath === null ? null : new SyncStateReader(settings.syncStatePath, { pollMs: settings.syncPollMs, onError: (m) => logger.error(m), snapshot: resolve(settings.snapshotPath) });
  const snapshots: SnapshotSource = new SnapshotSource(settings.snapshotPath, {
    snapshot: {
      cacheBytes: settings.cacheBytes,
      openFiles: settings.openFiles,
      onCorrupt: (r) => {
        logger.error(r.actual === UNREADABLE ? 'snapshot file cannot be read; it is not served' : 'snapshot file does not match its sha256; it is not served', { ...r });
        // A file that vanished may be the first sign of a snapshot that is gone: look at all of its files now. A file
        // that is there but does not match is not (and a check racing its repair in place would drop the snapshot).
        const serving = snapshots.current;
        if (r.actual === UNREADABLE && serving?.id === r.snapshotId && serving.dir === r.dir) snapshots.fileFailed(serving);
      },
    },
    pollMs: settings.pollMs,
    watch: settings.watch,
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
    onRefuse: (target, err) =>
      logger.error(snapshots.current ? 'snapshot refused; the current one keeps serving' : 'snapshot refused; answering 503 until a valid one is published', { target, reason: err.message }),
    onDrop: (dropped, reason) => logger.error('snapshot dropped; answering 503 until a valid one is published', { snapshotId: dropped.id, reason }),
  });
  return { snapshots, syncState };
}

/** What the query handler and the error answers need: operations, the current snapshot, and the source state. */
function queryDeps(settings: ResolvedOptions, snapshots: SnapshotSource, syncState: SyncStateReader | null): QueryDeps {
  const { maxAgeHours } = settings;
  const stateJson = new SourceStateJson();
  return {
    operations: settings.operations,
    current: () => snapshots.current,
    sourceState: (snapshot: Snapshot | null, now: Date, warnings?: readonly string[]) =>
      sourceStateOf({ manifest: snapshot?.manifest ?? null, sync: syncState?.current ?? null, now, maxAgeHours, warnings }),
    sourceStateJson: (snapshot: Snapshot | null, now: Date, warnings?: readonly string[]) =>
      stateJson.json({ manifest: snapshot?.manifest ?? null, sync: syncState?.current ?? null, now, maxAgeHours, warnings }),
    cursors: new CursorCodec(settings.cursorSecret, (key, message) => createHmac('sha256', key).update(message).digest()),
    logger: settings.logger,
    now: settings.now,
    operationTimeoutMs: settings.operationTimeoutMs,
    turns: createTurns(settings.turnBudgetMs),
    answerCache: new AnswerCache(settings.answerCacheBytes),
    mcpBudgetBytes: settings.mcpBudgetBytes,
    facetValuesMax: settings.facetValuesMax,
  };
}

function listen(server: Server, port: number, host: string): Promise<{ port: number; host: string; url: string }> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address() as AddressInfo;
      const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      resolve({ port: address.port, host: address.address, url: `http://${shown}:${address.port}` });
    });
  });
}
