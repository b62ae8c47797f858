import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCommandLine } from '../../src/cli/args.ts';
import { startWorker, type WorkerTarget } from './local.ts';

const USAGE = `Usage: npm run worker

Runs the Cloudflare Worker under workerd on this machine (no account, no network), over the snapshot as static
assets with the browser page. Settings come from the environment:

  SNAPSHOT_PATH    the snapshot link or directory (./snapshot)
  PORT             where it listens (8787)
  CURSOR_SECRET    the key of catalog cursors (a built-in key)`;

/**
 * npm run worker: the Worker under workerd on this machine (no account, no network), over ./snapshot (or
 * SNAPSHOT_PATH) as static assets with the page, on PORT (default 8787). The assets folder is dist/worker-assets,
 * the one wrangler.toml deploys.
 */
parseCommandLine('worker', USAGE, {});
const root = fileURLToPath(new URL('../..', import.meta.url));
const port = Number(process.env.PORT || 8787);
// Signals are taken from the first moment: a SIGTERM while workerd starts stops it once it is up, rather than
// killing this process and leaving workerd serving. npm runs this script with `exec`, so npm's SIGTERM reaches it.
let worker: WorkerTarget | undefined;
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  if (worker) void worker.close().then(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
worker = await startWorker({
  storage: 'assets',
  snapshotPath: resolve(process.env.SNAPSHOT_PATH || 'snapshot'),
  publicDir: resolve(root, 'public'),
  assetsDir: resolve(root, 'dist/worker-assets'),
  port,
  vars: process.env.CURSOR_SECRET ? { CURSOR_SECRET: process.env.CURSOR_SECRET } : {},
});
if (stopping) {
  await worker.close();
  process.exit(0);
}
console.log(`The Worker answers at ${worker.url}/ (workerd, assets in dist/worker-assets); Ctrl-C stops it.`);
