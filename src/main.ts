import cluster from 'node:cluster';
import { createApp } from './server/app.ts';
import { ensureSnapshot } from './server/bootstrap.ts';
import { runPrimary, workersFromEnv } from './server/cluster.ts';
import { configFromEnv } from './server/config.ts';
import { jsonLogger } from './server/log.ts';

/**
 * `npm start`: read the environment, make sure a snapshot exists, listen, and drain on SIGTERM. With WORKERS=auto
 * (or a number above 1) this process is a primary that runs that many workers behind the one port.
 */
const logger = jsonLogger();
const config = configFromEnv();
const workers = workersFromEnv(process.env.WORKERS);

if (workers > 1 && cluster.isPrimary) {
  await ensureSnapshot(config.snapshotPath, logger);
  runPrimary(workers, logger);
} else {
  if (cluster.isPrimary) await ensureSnapshot(config.snapshotPath, logger);
  const app = await createApp({ ...config, logger });
  const { url } = await app.listen(config.port, config.host);
  logger.info('listening', { url, snapshotId: app.snapshots.current?.id ?? null, pid: process.pid, ...(cluster.isWorker ? { worker: cluster.worker?.id } : {}) });

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
