import cluster from 'node:cluster';
import { parseCommandLine } from './cli/args.ts';
import { createApp } from './server/app.ts';
import { buildFirstSnapshot, MissingSnapshot, needsFirstBuild } from './server/bootstrap.ts';
import { runPrimary, workersFromEnv } from './server/cluster.ts';
import { configFromEnv } from './server/config.ts';
import { jsonLogger } from './server/log.ts';

const USAGE = `Usage: npm start

Serves POST /v1/query, GET /healthz, GET /v1/openapi.json, the snapshot's files under /snapshot/ and the browser
page. Settings come from the environment, read once at start (see docs/server.md):

  PORT, HOST                 where to listen (8080, 127.0.0.1)
  SNAPSHOT_PATH              the snapshot link or directory (./snapshot; built from the bundled files if missing)
  SYNC_STATE_PATH            the nightly sync's state file (.sync/state.json beside the snapshot link)
  FRESHNESS_MAX_AGE_HOURS    when freshness turns stale (48)
  CURSOR_SECRET              the key of catalog cursors (a built-in key)
  PUBLIC_DIR                 the browser page's folder (the repository's public/)
  SHARD_CACHE_BYTES          verified shard and record bytes kept in memory (48MiB)
  ANSWER_CACHE_BYTES         search answers kept as bytes, per snapshot (16MiB; 0 keeps none)
  HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS   slow clients get 408 (10000, 30000)
  WORKERS                    server processes behind the port: a number or auto (1)
  FAST_LANE                  answer POST /v1/query and GET of /device/*.json below Node's HTTP layer: on or off (on)`;

/**
 * `npm start`: read the environment, listen, build a first snapshot in the background when there is none, and
 * drain on SIGTERM. With WORKERS=auto (or a number above 1) this process is a primary that runs that many workers
 * behind the one port.
 */
parseCommandLine('start', USAGE, {});
const logger = jsonLogger();
// A setting that cannot be read stops the start with one line naming it, never a stack trace.
const settings = (() => {
  try {
    return { config: configFromEnv(), workers: workersFromEnv(process.env.WORKERS) };
  } catch (err) {
    logger.error(err instanceof Error ? err.message : String(err));
    process.exit(2);
  }
})();
const { config, workers } = settings;

let firstBuild = false;
if (cluster.isPrimary) {
  try {
    firstBuild = await needsFirstBuild(config.snapshotPath);
  } catch (err) {
    if (!(err instanceof MissingSnapshot)) throw err;
    logger.error(err.message, { snapshotPath: config.snapshotPath });
    process.exit(1);
  }
}

if (workers > 1 && cluster.isPrimary) {
  runPrimary(workers, logger);
  // Each worker follows the link, so the snapshot is picked up when the build publishes it.
  if (firstBuild) void buildFirstSnapshot(config.snapshotPath, logger);
} else {
  const app = await createApp({ ...config, logger });
  const { url } = await app.listen(config.port, config.host);
  logger.info('listening', { url, snapshotId: app.snapshots.current?.id ?? null, pid: process.pid, ...(cluster.isWorker ? { worker: cluster.worker?.id } : {}) });
  if (firstBuild) void buildFirstSnapshot(config.snapshotPath, logger).then((built) => {
    if (built) void app.reload();
  });

  process.on('SIGHUP', () => void app.reload());
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('draining', { signal });
    app.close({ graceMs: 10_000 }).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
