import { lstat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { DEFAULT_SNAPSHOT_PATH } from './config.ts';
import type { Logger } from './log.ts';

/**
 * `npm start` on a fresh clone: when there is no snapshot at the default path, the server starts anyway (answering
 * 503 `source_unavailable`) and builds one from the bundled sources, exactly as `npm run build` would; the link it
 * publishes is picked up like any later switch. The build modules are loaded only then, and their absence is logged,
 * so that the server still starts in a deployment that ships only a snapshot and not the build. A SNAPSHOT_PATH that was set and does not exist is
 * a mistake, not a fresh clone: it is reported with the path, and nothing is built in a mistyped place.
 */
type PipelineModule = Pick<typeof import('../../build/pipeline.ts'), 'runBuild'>;
type DefaultSourcesModule = Pick<typeof import('../../build/sources/default.ts'), 'defaultSources'>;

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

/** Builds the bundled sources into `snapshotPath`; true when a snapshot was published. Failures are logged, never thrown. */
export async function buildFirstSnapshot(snapshotPath: string, logger: Logger): Promise<boolean> {
  let pipeline: PipelineModule;
  let sources: DefaultSourcesModule;
  try {
    // Imported only here, so a server that never builds never loads them (the server bundle keeps them in chunks).
    [pipeline, sources] = await Promise.all([import('../../build/pipeline.ts'), import('../../build/sources/default.ts')]);
  } catch (err) {
    logger.error('no snapshot, and the build is not available to make one; serving 503 until one is published', {
      reason: (err as Error).message,
    });
    return false;
  }
  logger.info('no snapshot yet: building one from the bundled sources; answering 503 until it is published', { out: snapshotPath });
  const started = Date.now();
  try {
    const bundled = await sources.defaultSources();
    const result = await pipeline.runBuild({ sources: bundled.sources, notes: bundled.notes, out: snapshotPath, progress: true });
    logger.info('snapshot built', { snapshotId: result.manifest.snapshotId, seconds: (Date.now() - started) / 1000 });
    return true;
  } catch (err) {
    logger.error('the build failed; serving 503 until a snapshot is published', { stack: (err as Error).stack ?? String(err) });
    return false;
  }
}
