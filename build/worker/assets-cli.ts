import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCommandLine, runCommand, UsageError } from '../../src/cli/args.ts';
import { DEFAULT_SNAPSHOT_PATH } from '../../src/server/config.ts';
import { MissingSnapshot, needsFirstBuild } from '../../src/server/bootstrap.ts';
import { runBuild } from '../snapshot/build.ts';
import { defaultSources } from '../sources/default.ts';
import { prepareAssets } from './assets.ts';

const USAGE = `Usage: npm run worker:assets [-- --page-only]

Fills dist/worker-assets, the folder wrangler.toml deploys, from scratch: the browser page (public/) at the root and
the snapshot under snapshot/. wrangler runs it before every deploy ([build] in wrangler.toml), so
\`npx wrangler deploy\` (and \`npx wrangler deploy --dry-run\`) works from a fresh clone. Settings:

  SNAPSHOT_PATH    the snapshot link or directory (./snapshot); when there is none at ./snapshot, one is built from
                   the bundled FDA files first, as npm start does
  --page-only      the page alone, for a Worker that reads the snapshot from an R2 bucket (SNAPSHOT_BUCKET)`;

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const ASSETS_DIR = resolve(ROOT, 'dist/worker-assets');

const { 'page-only': pageOnly } = parseCommandLine('worker:assets', USAGE, { 'page-only': { type: 'boolean' } });

runCommand('worker:assets', async () => {
  let snapshotPath: string | null = null;
  if (!pageOnly) {
    const chosen = process.env.SNAPSHOT_PATH || DEFAULT_SNAPSHOT_PATH;
    const firstBuild = await needsFirstBuild(chosen).catch((err: unknown) => {
      throw err instanceof MissingSnapshot ? new UsageError(err.message) : err;
    });
    snapshotPath = resolve(chosen);
    if (firstBuild) {
      console.log(`No snapshot at ./${DEFAULT_SNAPSHOT_PATH}: building one from the bundled FDA files.`);
      const bundled = await defaultSources();
      await runBuild({ sources: bundled.sources, edges: bundled.edges, notes: bundled.notes, out: snapshotPath, progress: true });
    }
  }
  await prepareAssets({ snapshotPath, publicDir: resolve(ROOT, 'public'), out: ASSETS_DIR });
  console.log(`${ASSETS_DIR}: the page${snapshotPath ? ` and the snapshot of ${snapshotPath} under snapshot/` : ' only (the snapshot is read from R2)'}.`);
});
