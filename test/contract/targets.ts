import { afterAll, beforeAll } from 'vitest';
import { startWorker } from '../../build/worker/local.ts';
import { startServer } from '../server/helpers.ts';

/**
 * The hosts of POST /v1/query that the contract suites run against: the Node server in-process, and the Cloudflare
 * Worker under workerd (Miniflare from node_modules: no account, no network). A suite loops over TARGETS and starts
 * one host per target in its beforeAll, so every test of the file shares it.
 *
 * CONTRACT_TARGETS=node (or worker) narrows a run to one of them. CONTRACT_WORKER_SEARCH_CACHE_BYTES sets the Worker's
 * search cache (0: every search reads its chunks again).
 */
export type TargetName = 'node' | 'worker';

const ALL: readonly TargetName[] = ['node', 'worker'];

export const TARGETS: readonly TargetName[] = (() => {
  const wanted = process.env.CONTRACT_TARGETS?.split(',').map((s) => s.trim()).filter(Boolean);
  if (!wanted?.length) return ALL;
  const unknown = wanted.filter((w) => !ALL.includes(w as TargetName));
  if (unknown.length) throw new Error(`Expected \`CONTRACT_TARGETS\` to list some of ${ALL.join(', ')}, got "${unknown.join(', ')}"`);
  return wanted as TargetName[];
})();

export type Target = { name: TargetName; url: string; close: () => Promise<void> };

/**
 * One host of the API. `snapshotPath: null` starts it with no snapshot at all (every answer 503): for Node a link
 * that does not exist, for the Worker an empty R2 bucket (no manifest published). With a snapshot, the Worker reads
 * it from its static assets, as `npm run worker` serves it.
 */
export async function startTarget(name: TargetName, options: { snapshotPath: string | null; missingPath?: string; cursorSecret?: string }): Promise<Target> {
  if (name === 'node') {
    const snapshotPath = options.snapshotPath ?? options.missingPath;
    if (!snapshotPath) throw new Error('Expected `missingPath` (a path that does not exist) when `snapshotPath` is null');
    const server = await startServer({ snapshotPath, ...(options.cursorSecret ? { cursorSecret: options.cursorSecret } : {}) });
    return { name, url: server.url, close: server.close };
  }
  const vars: Record<string, string> = options.cursorSecret ? { CURSOR_SECRET: options.cursorSecret } : {};
  const searchCache = process.env.CONTRACT_WORKER_SEARCH_CACHE_BYTES;
  if (searchCache) vars.SEARCH_CACHE_BYTES = searchCache;
  const worker = options.snapshotPath
    ? await startWorker({ storage: 'assets', snapshotPath: options.snapshotPath, vars })
    : await startWorker({ storage: 'r2', vars });
  return { name, url: worker.url, close: worker.close };
}

/**
 * Starts `name` before the tests of the enclosing describe block and closes it after them; the returned object reads
 * the running host's URL (valid from the block's first test on). `snapshotPath` is called when the host starts, so it
 * may name a snapshot an earlier beforeAll builds.
 */
export function hostFor(name: TargetName, snapshotPath: () => string): { readonly url: string } {
  let host: Target | undefined;
  beforeAll(async () => {
    host = await startTarget(name, { snapshotPath: snapshotPath() });
  });
  afterAll(async () => {
    await host?.close();
  });
  return {
    get url(): string {
      if (!host) throw new Error(`the ${name} host has not started`);
      return host.url;
    },
  };
}
