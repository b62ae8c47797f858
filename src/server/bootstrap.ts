import { lstat } from 'node:fs/promises';
import type { Logger } from './log.ts';

/**
 * `npm start` on a fresh clone: when there is no snapshot yet, build one from the bundled sources, exactly as
 * `npm run build` would. The build modules are loaded by URL so that the server still starts (answering 503) in a
 * deployment that ships only a snapshot and not the build.
 */
const PIPELINE = new URL('../../build/pipeline.ts', import.meta.url).href;
const DEFAULT_SOURCES = new URL('../../build/sources/default.ts', import.meta.url).href;

type PipelineModule = { runBuild: (o: { sources: readonly string[]; notes?: readonly string[]; out: string; progress?: boolean }) => Promise<{ manifest: { snapshotId: string } }> };
type DefaultSourcesModule = { defaultSources: () => Promise<{ sources: string[]; notes: string[] }> };

export async function ensureSnapshot(snapshotPath: string, logger: Logger): Promise<void> {
  if (await lstat(snapshotPath).catch(() => null)) return;
  let pipeline: PipelineModule;
  let sources: DefaultSourcesModule;
  try {
    [pipeline, sources] = (await Promise.all([import(PIPELINE), import(DEFAULT_SOURCES)])) as [PipelineModule, DefaultSourcesModule];
  } catch (err) {
    logger.error('no snapshot, and the build is not available to make one; serving 503 until one is published', {
      reason: (err as Error).message,
    });
    return;
  }
  logger.info('no snapshot yet: building one from the bundled sources', { out: snapshotPath });
  const started = Date.now();
  try {
    const bundled = await sources.defaultSources();
    const result = await pipeline.runBuild({ sources: bundled.sources, notes: bundled.notes, out: snapshotPath, progress: true });
    logger.info('snapshot built', { snapshotId: result.manifest.snapshotId, seconds: (Date.now() - started) / 1000 });
  } catch (err) {
    logger.error('the build failed; serving 503 until a snapshot is published', { stack: (err as Error).stack ?? String(err) });
  }
}
