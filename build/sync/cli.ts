import { defaultSources } from '../sources/default.ts';
import { DOWNLOAD_LIMITS, FDA_BASE_URL, FDA_FILES, SUMMARY_SYNC_DEFAULTS, SYNC_DEFAULTS, type SyncOptions } from './config.ts';

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
  'summaries-base-url': { type: 'string' },
  'summary-days': { type: 'string' },
  'summary-limit': { type: 'string' },
  'summary-rate': { type: 'string' },
  'skip-summaries': { type: 'boolean' },
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
  --quiet            print only the closing line
  --summaries-base-url URL
                     where FDA's 510(k) summaries and decision summaries are (cdrh_docs/… below it;
                     default: the root of --base-url's host; env PREDICATES_BASE_URL)
  --summary-days N   fetch the summaries of clearances decided within N days of the newest
                     (default ${SUMMARY_SYNC_DEFAULTS.days}); each is fetched once and kept in DIR/summaries/
  --summary-limit N  at most N summary downloads a night (default ${SUMMARY_SYNC_DEFAULTS.limit})
  --summary-rate N   summary requests per second at most (default ${1000 / SUMMARY_SYNC_DEFAULTS.intervalMs})
  --skip-summaries   fetch no summaries; the build reads the edge folders as they are`;

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
  'summaries-base-url'?: string;
  'summary-days'?: string;
  'summary-limit'?: string;
  'summary-rate'?: string;
  'skip-summaries'?: boolean;
};

/**
 * The sync's options from its command line and environment (SYNC_BASE_URL, SYNC_FILES, PREDICATES_BASE_URL); options
 * win. The build reads the bundled edge folders (data/fda/predicates) besides the summaries the sync fetches.
 */
export async function syncOptionsFrom(values: SyncArgValues, env: NodeJS.ProcessEnv = process.env): Promise<Partial<SyncOptions>> {
  const num = (v: string | undefined) => (v === undefined ? undefined : Number(v));
  const envFiles = env.SYNC_FILES?.split(',').map((s) => s.trim()).filter(Boolean);
  const baseUrl = values['base-url'] ?? (env.SYNC_BASE_URL || undefined);
  const rate = num(values['summary-rate']);
  return {
    baseUrl,
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
    edges: (await defaultSources()).edges,
    summaries: values['skip-summaries']
      ? null
      : {
          // FDA keeps the files (premarket/ftparea/) and the documents (cdrh_docs/) on one host; so does a mirror.
          baseUrl: values['summaries-base-url'] ?? (env.PREDICATES_BASE_URL || new URL('/', baseUrl ?? FDA_BASE_URL).href),
          days: num(values['summary-days']) ?? SUMMARY_SYNC_DEFAULTS.days,
          limit: num(values['summary-limit']) ?? SUMMARY_SYNC_DEFAULTS.limit,
          intervalMs: rate === undefined ? SUMMARY_SYNC_DEFAULTS.intervalMs : 1000 / rate,
          maxBytes: SUMMARY_SYNC_DEFAULTS.maxBytes,
        },
    log: values.quiet ? undefined : (line) => console.error(line),
  };
}
