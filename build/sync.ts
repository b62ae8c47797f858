import { parseArgs } from 'node:util';
import { FDA_BASE_URL, FDA_FILES, SYNC_DEFAULTS } from './sync/config.ts';
import { reportSyncOutcome, runSync } from './sync/run.ts';

const USAGE = `Usage: npm run sync -- [options]

Downloads FDA's current 510(k) and classification files, verifies them, and rebuilds and publishes the snapshot
when any of them changed. Exits 1 when the sync failed (the served snapshot is then left as it was).

  --base-url URL     where the files are (default ${FDA_BASE_URL}; env SYNC_BASE_URL)
  --file NAME        a file to fetch, repeatable, in build precedence order
                     (default ${FDA_FILES.join(' ')}; env SYNC_FILES, comma-separated)
  --dir DIR          the sync's folder: sources/, state.json (default ${SYNC_DEFAULTS.dir})
  --out DIR          the published snapshot link (default ${SYNC_DEFAULTS.out})
  --concurrency N    downloads at once (default ${SYNC_DEFAULTS.concurrency})
  --timeout MS       per attempt, whole body included (default ${SYNC_DEFAULTS.timeoutMs})
  --retries N        retries after the first attempt (default ${SYNC_DEFAULTS.retries})
  --min-row-ratio R  share of the last good sync's rows each file must keep (default ${SYNC_DEFAULTS.minRowRatio})
  --force            rebuild even if nothing changed
  --quiet            print only the closing line`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'base-url': { type: 'string' },
      file: { type: 'string', multiple: true },
      dir: { type: 'string' },
      out: { type: 'string' },
      concurrency: { type: 'string' },
      timeout: { type: 'string' },
      retries: { type: 'string' },
      'min-row-ratio': { type: 'string' },
      force: { type: 'boolean', default: false },
      quiet: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const num = (v: string | undefined) => (v === undefined ? undefined : Number(v));
  const envFiles = process.env.SYNC_FILES?.split(',').map((s) => s.trim()).filter(Boolean);
  const result = await runSync({
    baseUrl: values['base-url'] ?? process.env.SYNC_BASE_URL ?? undefined,
    files: values.file ?? (envFiles?.length ? envFiles : undefined),
    dir: values.dir,
    out: values.out,
    concurrency: num(values.concurrency),
    timeoutMs: num(values.timeout),
    retries: num(values.retries),
    minRowRatio: num(values['min-row-ratio']),
    force: values.force,
    log: values.quiet ? undefined : (line) => console.error(line),
  });
  reportSyncOutcome(result);
}

main().catch((err: unknown) => {
  console.error(`sync failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
