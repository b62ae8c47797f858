import { parseCommandLine, runCommand } from '../src/cli/args.ts';
import { SYNC_ARGS, SYNC_USAGE, syncOptionsFrom } from './sync/cli.ts';
import { reportSyncOutcome, runSync } from './sync/run.ts';

const USAGE = `Usage: npm run sync -- [options]

Downloads FDA's current 510(k) and classification files, verifies them, and rebuilds and publishes the snapshot
when any of them changed. Exits 1 when the sync failed (the served snapshot is then left as it was).

${SYNC_USAGE}`;

runCommand('sync', async () => {
  const values = parseCommandLine('sync', USAGE, SYNC_ARGS);
  reportSyncOutcome(await runSync(await syncOptionsFrom(values)));
});
