import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import type { Logger } from './log.ts';

/**
 * WORKERS: how many server processes share the port. `auto` is one per core; unset or 1 is a single process (no
 * primary at all). Anything else is an error with the accepted forms named.
 */
export function workersFromEnv(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === '') return 1;
  if (raw.trim().toLowerCase() === 'auto') return availableParallelism();
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 256) throw new Error(`Expected \`WORKERS\` to be "auto" or a whole number from 1 to 256, got "${raw}"`);
  return n;
}

/** A worker that dies this soon after it started is not restarted at once: a crash at start would spin. */
const RESTART_BACKOFF_MS = 1000;

/**
 * The primary of `WORKERS=N`: forks N workers that each run the whole server (they share nothing but the snapshot
 * files, each following the link itself), restarts one that dies, forwards SIGHUP (look at the link now), and on
 * SIGTERM or SIGINT tells every worker to drain and exits once all have, with 0 when all drained cleanly.
 */
export function runPrimary(count: number, logger: Logger): void {
  let stopping = false;
  const startedAt = new Map<Worker, number>();
  const fork = () => {
    const worker = cluster.fork();
    startedAt.set(worker, Date.now());
  };
  cluster.on('exit', (worker, code, signal) => {
    const lived = Date.now() - (startedAt.get(worker) ?? 0);
    startedAt.delete(worker);
    if (stopping) {
      if (startedAt.size === 0) {
        logger.info('all workers stopped');
        process.exit(0);
      }
      return;
    }
    logger.error('a worker stopped; starting another', { pid: worker.process.pid, code, signal });
    setTimeout(fork, lived < RESTART_BACKOFF_MS ? RESTART_BACKOFF_MS : 0);
  });
  for (let i = 0; i < count; i++) fork();
  logger.info('started workers', { workers: count });

  process.on('SIGHUP', () => {
    for (const worker of startedAt.keys()) worker.process.kill('SIGHUP');
  });
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info('draining', { signal, workers: startedAt.size });
    if (startedAt.size === 0) process.exit(0);
    for (const worker of startedAt.keys()) worker.process.kill('SIGTERM');
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
