import type { BuildOptions, BuildResult } from '../pipeline.ts';

/** FDA's downloads: the 510(k) files by decision years and the product classification file, each a zip. */
export const FDA_BASE_URL = 'https://www.accessdata.fda.gov/premarket/ftparea/';
export const FDA_FILES = ['pmn7680.zip', 'pmn8185.zip', 'pmn8690.zip', 'pmn9195.zip', 'pmn96cur.zip', 'foiclass.zip'] as const;

export type SyncOptions = {
  /** Where the files are downloaded from; a file's URL is its name resolved against this. */
  baseUrl: string;
  /** File names in build precedence order (a later file overrides an earlier one). */
  files: readonly string[];
  /** The sync's folder: `sources/` (the last verified files), `state.json`, and a lock. */
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
  /** Seams for tests and embedding. */
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  now?: () => Date;
  build?: (options: BuildOptions) => Promise<Pick<BuildResult, 'dir' | 'manifest'>>;
  log?: (line: string) => void;
};

export const SYNC_DEFAULTS = {
  baseUrl: FDA_BASE_URL,
  files: FDA_FILES,
  dir: '.sync',
  out: 'snapshot',
  concurrency: 3,
  timeoutMs: 120_000,
  retries: 4,
  baseDelayMs: 1_000,
  maxDelayMs: 30_000,
  minRowRatio: 0.9,
  force: false,
} satisfies Partial<SyncOptions>;

/** Fills defaults once, up front, and fails on a bad value before any request is made. */
export function resolveSyncOptions(given: Partial<SyncOptions>): SyncOptions {
  const o: SyncOptions = { ...SYNC_DEFAULTS, ...definedOnly(given) };
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
  if (!(o.minRowRatio >= 0 && o.minRowRatio <= 1)) throw new Error(`Expected \`minRowRatio\` to be from 0 to 1, got ${o.minRowRatio}`);
  return { ...o, baseUrl: base.href.endsWith('/') ? base.href : `${base.href}/` };
}

function positiveInt(name: string, value: number): void {
  if (!Number.isInteger(value) || value < 1) throw new Error(`Expected \`${name}\` to be an integer from 1 and up, got ${value}`);
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
