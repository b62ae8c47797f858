import { startWorker } from '../../build/worker/local.ts';
import { PUBLIC_DIR } from './static-host.ts';

/**
 * The API as a Cloudflare Worker under workerd (Miniflare from node_modules: no account, no network), the way
 * `npm run worker` serves it: the page and the snapshot in the Worker's static assets, with a service.json that
 * names the API, and POST /v1/query answered by the Worker. The page should find itself in server mode.
 */
export async function startWorkerHost(snapshotDir: string): Promise<{ url: string; close: () => Promise<void> }> {
  const worker = await startWorker({ storage: 'assets', snapshotPath: snapshotDir, publicDir: PUBLIC_DIR });
  return { url: `${worker.url}/`, close: worker.close };
}
