import { basename, dirname, join, resolve } from 'node:path';
import { syncDirName, type SyncFileState } from '../../src/contract/sync.ts';
import type { BuildOptions, BuildResult } from '../snapshot/build.ts';

/** FDA's downloads: the 510(k) files by decision years and the product classification file, each a zip. */
export const FDA_BASE_URL = 'https://www.accessdata.fda.gov/premarket/ftparea/';
export const FDA_FILES = ['pmn7680.zip', 'pmn8185.zip', 'pmn8690.zip', 'pmn9195.zip', 'pmn96cur.zip', 'foiclass.zip'] as const;

export type SyncOptions = {
  /** Where the files are downloaded from; a file's URL is its name resolved against this. */
  baseUrl: string;
  /** File names in build precedence order (a later file overrides an earlier one). */
  files: readonly string[];
  /**
   * The sync's folder: `sources/` (the last verified files), `state.json`, and a lock. Default: beside the snapshot
   * link `out`, named by syncDirName (`.sync` for the default link `snapshot`, `.sync-<name>` for another).
   */
  dir: string;
  /** The published snapshot link, as for `npm run build -- --out`. */
  out: string;
  /** Downloads at once. */
  concurrency: number;
  /** Per attempt, for the answer and its whole body. */
  timeoutMs: number;
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Share of the last good sync's rows a file must keep. */
  minRowRatio: number;
  /** Rebuild even when every source is unchanged. */
  force: boolean;
  /** Also write a Pagefind index into the snapshot (see BuildOptions.pagefind). */
  pagefind: boolean;
  /**
   * The most bytes one download may be (as sent and once decoded). Null: per file, DOWNLOAD_FACTOR times the last
   * good sync's size but at least DOWNLOAD_FLOOR_BYTES, or DOWNLOAD_FIRST_BYTES for a file with no good sync yet.
   */
  maxDownloadBytes: number | null;
  /**
   * The most bytes one zip entry the build reads may inflate to. Null: per file, ENTRY_FACTOR times what the last
   * good sync's entries inflated to but at least ENTRY_FLOOR_BYTES, or ENTRY_FIRST_BYTES with no good sync yet.
   */
  maxEntryBytes: number | null;
  /**
   * Edge folders, or folders holding them, the build reads (build/lineage/read.ts): the bundled data/fda/predicates
   * (510k.fyi's list, the bundled reading of summaries). A folder of source `summary` stands, with `summaries`, for
   * the devices whose summary the sync has not read.
   */
  edges: readonly string[];
  /** The 510(k) summaries of recent clearances, fetched, kept and read before each build; null: none fetched. */
  summaries: SummarySync | null;
  /** Seams for tests and embedding. */
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  now?: () => Date;
  build?: (options: BuildOptions) => Promise<Pick<BuildResult, 'dir' | 'manifest'>>;
  log?: (line: string) => void;
};

/** How the sync fetches summaries (build/predicates/fetch.ts); timeouts and retries are the sync's own. */
export type SummarySync = {
  /** Where FDA's documents are (`cdrh_docs/pdfYY/…`, `cdrh_docs/reviews/…` below it). */
  baseUrl: string;
  /** Clearances decided within this many days of the newest one are fetched. */
  days: number;
  /** At most this many downloads a night (null: all); the rest wait for the next night or the backfill. */
  limit: number | null;
  /** At least this long between the starts of two requests. */
  intervalMs: number;
  /** The most bytes one document may be, as sent and once decoded. */
  maxBytes: number;
};

export const SUMMARY_SYNC_DEFAULTS = { days: 90, limit: 2000, intervalMs: 1000, maxBytes: 32 * 1024 * 1024 } as const;

const MiB = 1024 * 1024;

/** The download limits when none is given: generous against growth, far below what would exhaust a small machine. */
export const DOWNLOAD_LIMITS = {
  downloadFactor: 4,
  downloadFloorBytes: 64 * MiB,
  downloadFirstBytes: 512 * MiB,
  entryFactor: 4,
  entryFloorBytes: 256 * MiB,
  entryFirstBytes: 1024 * MiB,
} as const;

export const SYNC_DEFAULTS = {
  baseUrl: FDA_BASE_URL,
  files: FDA_FILES,
  out: 'snapshot',
  concurrency: 3,
  timeoutMs: 120_000,
  retries: 4,
  baseDelayMs: 1_000,
  maxDelayMs: 30_000,
  minRowRatio: 0.9,
  force: false,
  pagefind: false,
  maxDownloadBytes: null,
  maxEntryBytes: null,
  edges: [],
  summaries: null,
} satisfies Partial<SyncOptions>;

/** The sync's folder for a snapshot link when none is given: beside the link (see syncDirName). */
export function defaultSyncDir(out: string): string {
  const link = resolve(out);
  return join(dirname(link), syncDirName(basename(link)));
}

/** A file's limits: the ones given, else derived from what the last good sync of that file saw. */
export function limitsFor(o: Pick<SyncOptions, 'maxDownloadBytes' | 'maxEntryBytes'>, previous: SyncFileState | undefined): FileLimits {
  const L = DOWNLOAD_LIMITS;
  const download =
    o.maxDownloadBytes !== null
      ? { bytes: o.maxDownloadBytes, name: '--max-download-bytes' }
      : previous
        ? { bytes: Math.max(L.downloadFloorBytes, L.downloadFactor * previous.bytes), name: `default: ${L.downloadFactor} times the last good sync's ${previous.bytes.toLocaleString('en-US')} bytes, at least ${L.downloadFloorBytes / MiB} MiB; see --max-download-bytes` }
        : { bytes: L.downloadFirstBytes, name: `default for a file with no good sync yet; see --max-download-bytes` };
  const entry =
    o.maxEntryBytes !== null
      ? { bytes: o.maxEntryBytes, name: '--max-entry-bytes' }
      : previous?.entryBytes !== undefined
        ? { bytes: Math.max(L.entryFloorBytes, L.entryFactor * previous.entryBytes), name: `default: ${L.entryFactor} times the last good sync's ${previous.entryBytes.toLocaleString('en-US')} bytes, at least ${L.entryFloorBytes / MiB} MiB; see --max-entry-bytes` }
        : { bytes: L.entryFirstBytes, name: `default with no size from a good sync yet; see --max-entry-bytes` };
  return { download, entry };
}

export type FileLimits = { download: { bytes: number; name: string }; entry: { bytes: number; name: string } };

/** Fills defaults once, up front, and fails on a bad value before any request is made. */
export function resolveSyncOptions(given: Partial<SyncOptions>): SyncOptions {
  const filled = { ...SYNC_DEFAULTS, ...definedOnly(given) };
  const o: SyncOptions = { ...filled, dir: filled.dir ?? defaultSyncDir(filled.out) };
  let base: URL;
  try {
    base = new URL(o.baseUrl);
  } catch {
    throw new Error(`Expected \`baseUrl\` to be an absolute URL, got "${o.baseUrl}"`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new Error(`Expected \`baseUrl\` to be http or https, got ${base.protocol}`);
  if (o.files.length === 0) throw new Error('Expected `files` to name at least one file');
  for (const f of o.files) {
    if (!/^[\w.-]+\.(zip|txt)$/i.test(f)) throw new Error(`Expected each of \`files\` to be a plain .zip or .txt name, got "${f}"`);
  }
  if (new Set(o.files).size !== o.files.length) throw new Error('Expected `files` to name each file once');
  positiveInt('concurrency', o.concurrency);
  positiveInt('timeoutMs', o.timeoutMs);
  if (!Number.isInteger(o.retries) || o.retries < 0) throw new Error(`Expected \`retries\` to be an integer from 0 and up, got ${o.retries}`);
  if (!(o.baseDelayMs >= 0) || !(o.maxDelayMs >= o.baseDelayMs)) throw new Error('Expected `baseDelayMs` >= 0 and `maxDelayMs` >= `baseDelayMs`');
  if (o.maxDownloadBytes !== null) positiveInt('maxDownloadBytes', o.maxDownloadBytes);
  if (o.maxEntryBytes !== null) positiveInt('maxEntryBytes', o.maxEntryBytes);
  if (o.summaries) {
    try {
      new URL(o.summaries.baseUrl);
    } catch {
      throw new Error(`Expected \`summaries.baseUrl\` to be an absolute URL, got "${o.summaries.baseUrl}"`);
    }
    positiveInt('summaries.days', o.summaries.days);
    if (o.summaries.limit !== null) positiveInt('summaries.limit', o.summaries.limit);
    positiveInt('summaries.maxBytes', o.summaries.maxBytes);
    if (!(o.summaries.intervalMs >= 0)) throw new Error(`Expected \`summaries.intervalMs\` to be 0 or more, got ${o.summaries.intervalMs}`);
  }
  if (!(o.minRowRatio >= 0 && o.minRowRatio <= 1)) throw new Error(`Expected \`minRowRatio\` to be from 0 to 1, got ${o.minRowRatio}`);
  return { ...o, baseUrl: base.href.endsWith('/') ? base.href : `${base.href}/` };
}

function positiveInt(name: string, value: number): void {
  if (!Number.isInteger(value) || value < 1) throw new Error(`Expected \`${name}\` to be an integer from 1 and up, got ${value}`);
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
