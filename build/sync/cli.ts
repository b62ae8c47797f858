import { DOWNLOAD_LIMITS, FDA_BASE_URL, FDA_FILES, SYNC_DEFAULTS, type SyncOptions } from './config.ts';

/** The sync's command-line options: `npm run sync` and `npm run build -- --fetch` take exactly these. */
export const SYNC_ARGS = {
  'base-url': { type: 'string' },
  file: { type: 'string', multiple: true },
  dir: { type: 'string' },
  out: { type: 'string' },
  concurrency: { type: 'string' },
  timeout: { type: 'string' },
  retries: { type: 'string' },
  'min-row-ratio': { type: 'string' },
  'max-download-bytes': { type: 'string' },
  'max-entry-bytes': { type: 'string' },
  force: { type: 'boolean' },
  pagefind: { type: 'boolean' },
  quiet: { type: 'boolean' },
} as const;

/** The lines of usage text for SYNC_ARGS, with the defaults taken from SYNC_DEFAULTS. */
export const SYNC_USAGE = `  --base-url URL     where the files are (default ${FDA_BASE_URL}; env SYNC_BASE_URL)
  --file NAME        a file to fetch, repeatable, in build precedence order
                     (default ${FDA_FILES.join(' ')}; env SYNC_FILES, comma-separated)
  --dir DIR          the sync's folder: sources/, state.json (default: beside the --out link,
                     .sync for a link named snapshot, .sync-NAME for a link named NAME)
  --out DIR          the published snapshot link (default ${SYNC_DEFAULTS.out})
  --concurrency N    downloads at once (default ${SYNC_DEFAULTS.concurrency})
  --timeout MS       per attempt, whole body included (default ${SYNC_DEFAULTS.timeoutMs})
  --retries N        retries after the first attempt (default ${SYNC_DEFAULTS.retries})
  --min-row-ratio R  share of the last good sync's rows each file must keep (default ${SYNC_DEFAULTS.minRowRatio})
  --max-download-bytes N
                     the most one download may be, as sent or decoded (default: ${DOWNLOAD_LIMITS.downloadFactor} times the
                     file's size at the last good sync, at least ${DOWNLOAD_LIMITS.downloadFloorBytes / 2 ** 20} MiB; ${DOWNLOAD_LIMITS.downloadFirstBytes / 2 ** 20} MiB before one)
  --max-entry-bytes N
                     the most one zip entry the build reads may inflate to (default: ${DOWNLOAD_LIMITS.entryFactor} times
                     its size at the last good sync, at least ${DOWNLOAD_LIMITS.entryFloorBytes / 2 ** 20} MiB; ${DOWNLOAD_LIMITS.entryFirstBytes / 2 ** 20} MiB before one)
  --force            rebuild even if nothing changed
  --pagefind         also write a Pagefind index (pagefind/) for pages that search with Pagefind;
                     off by default: the page searches the snapshot's own chunked index
  --quiet            print only the closing line`;

type SyncArgValues = {
  'base-url'?: string;
  file?: string[];
  dir?: string;
  out?: string;
  concurrency?: string;
  timeout?: string;
  retries?: string;
  'min-row-ratio'?: string;
  'max-download-bytes'?: string;
  'max-entry-bytes'?: string;
  force?: boolean;
  pagefind?: boolean;
  quiet?: boolean;
};

/** The sync's options from its command line and environment (SYNC_BASE_URL, SYNC_FILES); options win. */
export function syncOptionsFrom(values: SyncArgValues, env: NodeJS.ProcessEnv = process.env): Partial<SyncOptions> {
  const num = (v: string | undefined) => (v === undefined ? undefined : Number(v));
  const envFiles = env.SYNC_FILES?.split(',').map((s) => s.trim()).filter(Boolean);
  return {
    baseUrl: values['base-url'] ?? (env.SYNC_BASE_URL || undefined),
    files: values.file ?? (envFiles?.length ? envFiles : undefined),
    dir: values.dir,
    out: values.out,
    concurrency: num(values.concurrency),
    timeoutMs: num(values.timeout),
    retries: num(values.retries),
    minRowRatio: num(values['min-row-ratio']),
    maxDownloadBytes: num(values['max-download-bytes']),
    maxEntryBytes: num(values['max-entry-bytes']),
    force: values.force,
    pagefind: values.pagefind,
    log: values.quiet ? undefined : (line) => console.error(line),
  };
}
