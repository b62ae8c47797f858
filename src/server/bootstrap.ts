import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { lstat, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LAYOUT } from '../contract/index.ts';
import { DEFAULT_SNAPSHOT_PATH } from './config.ts';
import type { Logger } from './log.ts';

/**
 * `npm start` on a fresh clone: when there is no snapshot at the default path, the server starts anyway (answering
 * 503 `source_unavailable`) and builds one from the bundled sources by running `npm run build`'s command (build/cli.ts)
 * as a process of its own; the link it publishes is picked up like any later switch. The server never imports the
 * build: a deployment that ships only a snapshot and not the build still starts, and logs that it cannot make one. A
 * SNAPSHOT_PATH that was set and does not exist is a mistake, not a fresh clone: it is reported with the path, and
 * nothing is built in a mistyped place.
 */

export class MissingSnapshot extends Error {
  override readonly name = 'MissingSnapshot';
}

/**
 * Whether the first start must build a snapshot: false when one is there; true when none is at the default path
 * (relative to `cwd`); a MissingSnapshot naming the path when a path that was chosen does not exist.
 */
export async function needsFirstBuild(snapshotPath: string, cwd: string = process.cwd()): Promise<boolean> {
  if (await lstat(resolve(cwd, snapshotPath)).catch(() => null)) return false;
  if (resolve(cwd, snapshotPath) === resolve(cwd, DEFAULT_SNAPSHOT_PATH)) return true;
  throw new MissingSnapshot(
    `SNAPSHOT_PATH ${snapshotPath} does not exist: publish a snapshot there first (npm run build -- --out ${snapshotPath}), or leave SNAPSHOT_PATH unset to build one at ./${DEFAULT_SNAPSHOT_PATH}`,
  );
}

/** How the first build is run: a command, its arguments, and the folder it runs in. */
export type BuildCommand = { command: string; args: readonly string[]; cwd: string };

/** The repository: two folders up, from src/server/*.ts as from the bundle in dist/server/. */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * `npm run build -- --out <snapshotPath>` under the TypeScript loader, run in the server's folder as the build
 * would be by hand; or why it cannot be, when this deployment has no build (build/cli.ts or tsx is not there).
 */
export function firstBuildCommand(snapshotPath: string): BuildCommand | { unavailable: string } {
  const cli = join(ROOT, 'build', 'cli.ts');
  if (!existsSync(cli)) return { unavailable: `${cli} is not there` };
  let tsx: string;
  try {
    tsx = import.meta.resolve('tsx');
  } catch (err) {
    return { unavailable: `the TypeScript loader (tsx) cannot be found: ${(err as Error).message}` };
  }
  return { command: process.execPath, args: ['--import', tsx, cli, '--out', snapshotPath], cwd: process.cwd() };
}

/**
 * Builds the bundled sources into `snapshotPath` in a child process whose output (the build's progress) goes to this
 * one's; true when a snapshot was published. Failures are logged, never thrown. The build stops when the server exits.
 */
export async function buildFirstSnapshot(snapshotPath: string, logger: Logger, how = firstBuildCommand(snapshotPath)): Promise<boolean> {
  if ('unavailable' in how) {
    logger.error('no snapshot, and the build is not available to make one; serving 503 until one is published', { reason: how.unavailable });
    return false;
  }
  logger.info('no snapshot yet: building one from the bundled sources; answering 503 until it is published', { out: snapshotPath });
  const started = Date.now();
  const child = spawn(how.command, how.args, { cwd: how.cwd, stdio: ['ignore', 'inherit', 'inherit'] });
  const stop = () => child.kill();
  process.once('exit', stop);
  const outcome = await new Promise<{ code: number | null; signal: NodeJS.Signals | null } | Error>((done) => {
    child.once('error', done);
    child.once('exit', (code, signal) => done({ code, signal }));
  });
  process.off('exit', stop);
  if (outcome instanceof Error || outcome.code !== 0) {
    const reason = outcome instanceof Error ? outcome.message : outcome.signal ? `stopped by ${outcome.signal}` : `exit code ${outcome.code}`;
    logger.error('the build failed; serving 503 until a snapshot is published', { reason, command: [how.command, ...how.args].join(' ') });
    return false;
  }
  logger.info('snapshot built', { snapshotId: await snapshotIdAt(snapshotPath), seconds: (Date.now() - started) / 1000 });
  return true;
}

/** The published manifest's snapshotId (null when it cannot be read: the server's own open reports why). */
async function snapshotIdAt(snapshotPath: string): Promise<string | null> {
  try {
    const manifest: unknown = JSON.parse(await readFile(join(snapshotPath, LAYOUT.manifest), 'utf8'));
    const id = (manifest as { snapshotId?: unknown }).snapshotId;
    return typeof id === 'string' ? id : null;
  } catch {
    return null;
  }
}
