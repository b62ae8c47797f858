import { openSync, closeSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFile, type ChildProcess, type StdioOptions } from 'node:child_process';
import { freePort, startNode, startTsx, stop, waitForHttp } from './procs.ts';

/**
 * Our server exactly as `npm start` runs it (the bundle of src/main.ts, its request log and all), in its own process on 127.0.0.1,
 * over one snapshot. Its log goes to a file, as a deployment's would; a pipe nobody reads would grow in its memory.
 */
export type RunningServer = { url: string; pid: number; stop: () => Promise<void> };

export const BENCH_CURSOR_SECRET = 'device-510k benchmark cursor secret';

/** The server bundle `npm start` makes and runs (build/server-bundle.mjs), made once per checkout and run. */
const bundles = new Map<string, Promise<string>>();
function serverBundle(root: string): Promise<string> {
  let bundled = bundles.get(root);
  if (!bundled) {
    bundled = new Promise((resolve, reject) => {
      execFile(process.execPath, [join(root, 'build/server-bundle.mjs')], { cwd: root }, (err) => (err ? reject(err) : resolve(join(root, 'dist/server/main.mjs'))));
    });
    bundles.set(root, bundled);
  }
  return bundled;
}

/**
 * The options `npm start` gives Node for the server: what stands between `exec node` and the bundle in the checkout's
 * own package.json, so that each checkout of an A/B runs with its own.
 */
export function serverNodeArgs(root: string): string[] {
  const start = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts?: { start?: string } }).scripts?.start ?? '';
  const options = /exec node((?:\s+--[\w-]+(?:=\S+)?)*)\s+dist\/server\/main\.mjs/.exec(start)?.[1] ?? '';
  return options.split(/\s+/).filter((o) => o !== '');
}

/** `nodeArgs` go after `npm start`'s own Node options (`--cpu-prof`, say). */
export async function startServer(root: string, snapshotPath: string, tmp: string, env: Record<string, string> = {}, nodeArgs: readonly string[] = []): Promise<RunningServer> {
  const port = await freePort();
  const main = await serverBundle(root);
  const log = openSync(join(tmp, 'server.log'), 'a');
  const child = startNode(main, [], {
    nodeArgs: [...serverNodeArgs(root), ...nodeArgs],
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      SNAPSHOT_PATH: snapshotPath,
      // No sync state: a benchmark snapshot is built from local files.
      SYNC_STATE_PATH: join(tmp, 'no-sync-state.json'),
      CURSOR_SECRET: BENCH_CURSOR_SECRET,
      NODE_ENV: 'production',
      ...env,
    },
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${url}/healthz`, 200, 60_000, () => child.exitCode === null && child.signalCode === null);
  } catch (err) {
    await stop(child, 1000);
    throw new Error(`the server did not start: ${(err as Error).message} (its log: ${join(tmp, 'server.log')})`);
  }
  return { url, pid: child.pid!, stop: () => stop(child, 10_000) };
}

/**
 * The server from its source (`src/main.ts` under tsx, in the checkout `root`, not `npm start`'s bundle), on a free
 * port of 127.0.0.1, once /healthz answers 200. `env` comes on top of this process's (SNAPSHOT_PATH and the rest);
 * HOST and PORT are set here. For the benches that profile or time the source as it is.
 */
export async function startSourceServer(
  root: string,
  options: { env: Record<string, string>; nodeArgs?: readonly string[]; stdio?: StdioOptions; timeoutMs?: number },
): Promise<RunningServer & { child: ChildProcess }> {
  const port = await freePort();
  const child = startTsx(join(root, 'src/main.ts'), [], {
    cwd: root,
    env: { ...process.env, ...options.env, HOST: '127.0.0.1', PORT: String(port) },
    stdio: options.stdio ?? ['ignore', 'ignore', 'inherit'],
    ...(options.nodeArgs === undefined ? {} : { nodeArgs: options.nodeArgs }),
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${url}/healthz`, 200, options.timeoutMs ?? 120_000, () => child.exitCode === null && child.signalCode === null);
  } catch (err) {
    await stop(child, 1000);
    throw err;
  }
  return { url, pid: child.pid!, child, stop: () => stop(child, 10_000) };
}

/** The bare node:http floor (bench/lib/bare-node-child.ts), answering every request with one file's bytes. */
export async function startBareNode(root: string, file: string): Promise<RunningServer> {
  const port = await freePort();
  const child = startTsx(join(root, 'bench/lib/bare-node-child.ts'), [String(port), file], { stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(url, 200, 30_000, () => child.exitCode === null && child.signalCode === null);
  return { url, pid: child.pid!, stop: () => stop(child, 5000) };
}
