import { mkdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { getWithRetry, HttpError, sleep as realSleep } from '../io/http.ts';
import { acquireLock } from '../io/lock.ts';
import { summaryFromBytes } from './read.ts';
import { judge, writeAtomic, writeEdgeFolder, type ReportRow } from './run.ts';

/**
 * Fetching 510(k) summaries from FDA and keeping them: each PDF is fetched once, kept in the sync's folder with what
 * the extractor read from it, and a missing one (404, 410) is recorded and not asked for again, so that neither a
 * rebuild nor the next night fetches anything twice. A run writes its state after every device: killed at any point,
 * the next run goes on from there.
 */

/** FDA's summaries: `cdrh_docs/pdfYY/KYYNNNN.pdf` by the number's year digits, older ones in `cdrh_docs/pdf/`. */
export const FDA_SUMMARY_BASE_URL = 'https://www.accessdata.fda.gov/';

/** Bumped when the extractor's rules change: every kept PDF is read again (never fetched again). */
export const EXTRACTOR_VERSION = 1;

/** The path of a device's summary below the origin; null for a number FDA files no summary under. */
export function summaryPath(id: string): string | null {
  const k = /^K(\d{2})\d{4}$/.exec(id);
  if (k) {
    const yy = Number(k[1]);
    // 2002 to 2009 are pdf2 … pdf9, 2010 on pdf10 …; the numbers of 1976-2001 are all in pdf/.
    if (yy >= 2 && yy <= 9) return `cdrh_docs/pdf${yy}/${id}.pdf`;
    if (yy >= 10 && yy < 76) return `cdrh_docs/pdf${k[1]}/${id}.pdf`;
    return `cdrh_docs/pdf/${id}.pdf`;
  }
  if (/^DEN\d{6}$/.test(id)) return `cdrh_docs/reviews/${id}.pdf`;
  return null;
}

const Extracted = z.strictObject({
  extractor: z.number().int(),
  status: z.enum(['read', 'no-text', 'unreadable', 'missing']),
  predicates: z.array(z.string()),
  reason: z.string(),
});
const DeviceEntry = z.strictObject({
  /** fetched: kept as pdf/<id>.pdf; missing: the origin has none (not asked again); failed: asked again next run. */
  status: z.enum(['fetched', 'missing', 'failed']),
  at: z.string(),
  url: z.string(),
  attempts: z.number().int().min(1),
  bytes: z.number().int().nullable(),
  sha256: z.string().nullable(),
  reason: z.string().nullable(),
  read: Extracted.nullable(),
});
export const SummaryState = z.strictObject({ version: z.literal(1), devices: z.record(z.string(), DeviceEntry) });
export type SummaryState = z.infer<typeof SummaryState>;
type DeviceEntry = z.infer<typeof DeviceEntry>;

export type SummaryOptions = {
  /** The sync's folder: summaries go to `summaries/` (state.json, pdf/), edges to `predicates/summary/`. */
  dir: string;
  /** The devices to fetch, in order; those already fetched or missing are skipped. */
  devices: readonly string[];
  baseUrl: string;
  /** At least this long between the starts of two requests: the politeness owed to FDA's server. */
  intervalMs: number;
  /** At most this many downloads in this run (null: all). */
  limit: number | null;
  /** A device whose download failed this many runs is reported and no longer asked for. */
  maxAttempts: number;
  timeoutMs: number;
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** The most bytes one summary may be, as sent and once decoded. */
  maxBytes: number;
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  now?: () => Date;
  log?: (line: string) => void;
};

export const SUMMARY_DEFAULTS = {
  baseUrl: FDA_SUMMARY_BASE_URL,
  intervalMs: 1000,
  limit: null,
  maxAttempts: 3,
  timeoutMs: 60_000,
  retries: 2,
  baseDelayMs: 2000,
  maxDelayMs: 30_000,
  maxBytes: 32 * 1024 * 1024,
} as const;

export type SummaryRun = { fetched: number; missing: number; failed: number; skipped: number; reread: number; edges: number; devices: number };

export const summaryPaths = (dir: string) => ({
  root: join(dir, 'summaries'),
  pdf: join(dir, 'summaries', 'pdf'),
  state: join(dir, 'summaries', 'state.json'),
  lock: join(dir, 'summaries', 'lock'),
  edges: join(dir, 'predicates', 'summary'),
});

async function readState(path: string, log: (line: string) => void): Promise<SummaryState> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, devices: {} };
    throw err;
  }
  try {
    return SummaryState.parse(JSON.parse(text));
  } catch (err) {
    // The PDFs are kept: starting over re-reads the ones on disk by their names before fetching anything.
    log(`${path} could not be read (${(err as Error).message.split('\n')[0]}); starting over`);
    return { version: 1, devices: {} };
  }
}

const writeState = (path: string, state: SummaryState) => writeAtomic(path, `${JSON.stringify(SummaryState.parse(state))}\n`);

async function extractKept(file: string, id: string): Promise<z.infer<typeof Extracted>> {
  const row = judge(id, await summaryFromBytes(await readFile(file), 'pdf'));
  return { extractor: EXTRACTOR_VERSION, status: row.status, predicates: row.predicates, reason: row.reason };
}

/** The status of an HTTP error message (`HTTP 404 Not Found`), or null for a network failure or a limit. */
const statusOf = (err: unknown) => (err instanceof HttpError ? Number(/^HTTP (\d{3})/.exec(err.message)?.[1] ?? NaN) || null : null);

export async function fetchSummaries(given: Partial<SummaryOptions> & { dir: string; devices: readonly string[] }): Promise<SummaryRun> {
  const o: SummaryOptions = { ...SUMMARY_DEFAULTS, ...given };
  const now = o.now ?? (() => new Date());
  const log = o.log ?? (() => {});
  const wait = o.sleep ?? realSleep;
  const paths = summaryPaths(o.dir);
  await mkdir(paths.pdf, { recursive: true });
  const release = await acquireLock(paths.lock, 'summary fetch');
  try {
    const state = await readState(paths.state, log);
    const run: SummaryRun = { fetched: 0, missing: 0, failed: 0, skipped: 0, reread: 0, edges: 0, devices: 0 };

    // What is kept is read again when the rules changed (or the state was lost), never fetched again.
    for (const [id, entry] of Object.entries(state.devices)) {
      if (entry.status === 'fetched' && entry.read?.extractor !== EXTRACTOR_VERSION) {
        entry.read = await extractKept(join(paths.pdf, `${id}.pdf`), id).catch((err: Error) => ({
          extractor: EXTRACTOR_VERSION,
          status: 'missing' as const,
          predicates: [],
          reason: `the kept PDF could not be read: ${err.message}`,
        }));
        run.reread++;
      }
    }

    let lastStart = -Infinity;
    let downloads = 0;
    for (const id of o.devices) {
      const prior = state.devices[id];
      if (prior && (prior.status !== 'failed' || prior.attempts >= o.maxAttempts)) {
        run.skipped++;
        continue;
      }
      const path = summaryPath(id);
      if (!path) {
        run.skipped++;
        continue;
      }
      if (o.limit !== null && downloads >= o.limit) break;
      downloads++;
      const url = new URL(path, o.baseUrl).href;
      const pause = lastStart + o.intervalMs - Date.now();
      if (pause > 0) await wait(pause);
      lastStart = Date.now();
      const part = join(paths.pdf, `${id}.pdf.part`);
      const attempts = (prior?.attempts ?? 0) + 1;
      const at = now().toISOString();
      let entry: DeviceEntry;
      try {
        const res = await getWithRetry(url, {}, { ...o, onRetry: ({ attempt, delayMs, reason }) => log(`${id}: ${reason}; retry ${attempt} of ${o.retries} in ${delayMs} ms`) }, {
          file: part,
          limit: { bytes: o.maxBytes, name: '--max-summary-bytes' },
        });
        if (res.status !== 200) throw new Error(`HTTP ${res.status} to an unconditional request`);
        const file = join(paths.pdf, `${id}.pdf`);
        await rename(part, file);
        entry = { status: 'fetched', at, url, attempts, bytes: res.bytes, sha256: res.sha256, reason: null, read: await extractKept(file, id) };
        run.fetched++;
        log(`${id}: ${res.bytes.toLocaleString('en-US')} bytes, ${entry.read?.status}, ${entry.read?.predicates.join(' ') || 'no predicate'}`);
      } catch (err) {
        await rm(part, { force: true });
        const status = statusOf(err);
        const reason = `${url}: ${(err as Error).message}`;
        if (status === 404 || status === 410) {
          entry = { status: 'missing', at, url, attempts, bytes: null, sha256: null, reason: `FDA has no summary at ${url} (HTTP ${status})`, read: null };
          run.missing++;
        } else {
          entry = { status: 'failed', at, url, attempts, bytes: null, sha256: null, reason, read: null };
          run.failed++;
        }
        log(`${id}: ${entry.reason}`);
      }
      state.devices[id] = entry;
      await writeState(paths.state, state);
    }
    await writeState(paths.state, state);

    const rows = reportRows(state);
    await writeEdgeFolder(paths.edges, rows);
    run.edges = rows.reduce((n, r) => n + r.predicates.length, 0);
    run.devices = rows.length;
    return run;
  } finally {
    await release();
  }
}

/** The report of every device the state knows: what was read from its PDF, or why there is none. */
export function reportRows(state: SummaryState): ReportRow[] {
  return Object.entries(state.devices)
    .map(([device, e]): ReportRow => {
      if (e.status === 'fetched' && e.read) return { device, status: e.read.status, predicates: e.read.predicates, reason: e.read.reason };
      if (e.status === 'missing') return { device, status: 'missing', predicates: [], reason: e.reason ?? 'FDA has no summary' };
      return { device, status: 'missing', predicates: [], reason: `not downloaded after ${e.attempts} attempt(s): ${e.reason ?? ''}` };
    })
    .sort((a, b) => a.device.localeCompare(b.device));
}
