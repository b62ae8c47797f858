import { startWorker, type WorkerTarget } from '../../build/worker/local.ts';
import { startServer, type Running } from '../server/helpers.ts';

export type NamedWorker = { name: string; worker: WorkerTarget };

/**
 * Every host of one snapshot, started together for tests that compare them: the Node server, and the Worker under
 * workerd over R2, over static assets, and (with `uncached`) over static assets with a search cache of 0 bytes, so
 * that every search reads each of its chunks again. `close` stops all of them.
 */
export async function startNodeAndWorkers(
  snapshotPath: string,
  options: { uncached?: boolean } = {},
): Promise<{ node: Running; workers: NamedWorker[]; close: () => Promise<void> }> {
  const [node, r2, assets, uncached] = await Promise.all([
    startServer({ snapshotPath }),
    startWorker({ snapshotPath, storage: 'r2' }),
    startWorker({ snapshotPath, storage: 'assets' }),
    options.uncached ? startWorker({ snapshotPath, storage: 'assets', vars: { SEARCH_CACHE_BYTES: '0' } }) : null,
  ]);
  const workers: NamedWorker[] = [
    { name: 'r2', worker: r2 },
    { name: 'assets', worker: assets },
    ...(uncached ? [{ name: 'assets, no search cache', worker: uncached }] : []),
  ];
  return { node, workers, close: async () => void (await Promise.all([node.close(), ...workers.map((w) => w.worker.close())])) };
}
