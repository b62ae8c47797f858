import { mkdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { getWithRetry, HttpError, sleep as realSleep } from '../io/http.ts';
import { acquireLock } from '../io/lock.ts';
import { decisionPredicates } from './decision.ts';
import { summaryFromBytes } from './read.ts';
import { parseCsv } from '../lineage/csv.ts';
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
export const EXTRACTOR_VERSION = 2;

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
/** FDA's decision summary of a device (laboratory devices have one): kept as decision/<id>.pdf when fetched. */
const DecisionEntry = z.strictObject({
  status: z.enum(['fetched', 'missing', 'failed']),
  at: z.string(),
  url: z.string(),
  attempts: z.number().int().min(1),
  reason: z.string().nullable(),
  /** The numbers of its field "Predicate 510(k) Number(s)"; null when it has no such field (or was not read). */
  predicates: z.array(z.string()).nullable(),
  extractor: z.number().int().nullable(),
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
  decision: DecisionEntry.optional(),
});
export const SummaryState = z.strictObject({ version: z.literal(1), devices: z.record(z.string(), DeviceEntry) });
export type SummaryState = z.infer<typeof SummaryState>;
type DeviceEntry = z.infer<typeof DeviceEntry>;
type DecisionEntry = z.infer<typeof DecisionEntry>;

export type SummaryOptions = {
  /** The sync's folder: summaries go to `summaries/` (state.json, pdf/), edges to `predicates/summary/`. */
  dir: string;
  /** The devices to fetch, in order; those already fetched or missing are skipped. */
  devices: readonly string[];
  /** Devices whose decision summary is asked for too (laboratory devices: FDA publishes one for them). */
  decisions?: ReadonlySet<string>;
  /**
   * An edge folder (with its report) read before: it stands for the devices whose summary this fetch has not read
   * (the bundled reading of OCR'd summaries), so one folder of source `summary` covers both.
   */
  base?: string;
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
  decision: join(dir, 'summaries', 'decision'),
  edges: join(dir, 'predicates', 'summary'),
});

/** Where FDA keeps a device's decision summary (for a De Novo, the summary itself). */
export const decisionPath = (id: string): string | null => (/^K\d{6}$/.test(id) ? `cdrh_docs/reviews/${id}.pdf` : null);

async function readDecision(file: string, id: string): Promise<string[] | null> {
  const read = await summaryFromBytes(await readFile(file), 'pdf');
  return read.status === 'read' ? decisionPredicates(read.text, id) : null;
}

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
  await mkdir(paths.decision, { recursive: true });
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
      const d = entry.decision;
      if (d?.status === 'fetched' && d.extractor !== EXTRACTOR_VERSION) {
        d.predicates = await readDecision(join(paths.decision, `${id}.pdf`), id).catch(() => null);
        d.extractor = EXTRACTOR_VERSION;
      }
    }

    let lastStart = -Infinity;
    let downloads = 0;
    const due = (e: { status: string; attempts: number } | undefined) => !e || (e.status === 'failed' && e.attempts < o.maxAttempts);
    /** One polite, bounded download to `file`; 404 and 410 are `missing`, anything else that fails is `failed`. */
    const download = async (id: string, url: string, file: string): Promise<{ ok: true; bytes: number; sha256: string } | { ok: false; missing: boolean; reason: string }> => {
      const pause = lastStart + o.intervalMs - Date.now();
      if (pause > 0) await wait(pause);
      lastStart = Date.now();
      downloads++;
      const part = `${file}.part`;
      try {
        const res = await getWithRetry(url, {}, { ...o, onRetry: ({ attempt, delayMs, reason }) => log(`${id}: ${reason}; retry ${attempt} of ${o.retries} in ${delayMs} ms`) }, {
          file: part,
          limit: { bytes: o.maxBytes, name: '--max-summary-bytes' },
        });
        if (res.status !== 200) throw new Error(`HTTP ${res.status} to an unconditional request`);
        await rename(part, file);
        return { ok: true, bytes: res.bytes, sha256: res.sha256 };
      } catch (err) {
        await rm(part, { force: true });
        const status = statusOf(err);
        const missing = status === 404 || status === 410;
        return { ok: false, missing, reason: missing ? `FDA has no document at ${url} (HTTP ${status})` : `${url}: ${(err as Error).message}` };
      }
    };

    for (const id of o.devices) {
      const prior = state.devices[id];
      const path = summaryPath(id);
      const dPath = o.decisions?.has(id) ? decisionPath(id) : null;
      const wantSummary = path !== null && due(prior);
      const wantDecision = dPath !== null && due(prior?.decision);
      if (!wantSummary && !wantDecision) {
        run.skipped++;
        continue;
      }
      if (o.limit !== null && downloads >= o.limit) break;
      let entry: DeviceEntry | undefined = prior;
      if (wantSummary) {
        const url = new URL(path, o.baseUrl).href;
        const attempts = (prior?.attempts ?? 0) + 1;
        const at = now().toISOString();
        const file = join(paths.pdf, `${id}.pdf`);
        const got = await download(id, url, file);
        if (got.ok) {
          entry = { status: 'fetched', at, url, attempts, bytes: got.bytes, sha256: got.sha256, reason: null, read: await extractKept(file, id), decision: prior?.decision };
          run.fetched++;
          log(`${id}: ${got.bytes.toLocaleString('en-US')} bytes, ${entry.read?.status}, ${entry.read?.predicates.join(' ') || 'no predicate'}`);
        } else {
          entry = { status: got.missing ? 'missing' : 'failed', at, url, attempts, bytes: null, sha256: null, reason: got.reason.replace(/^FDA has no document/, 'FDA has no summary'), read: null, decision: prior?.decision };
          if (got.missing) run.missing++;
          else run.failed++;
          log(`${id}: ${entry.reason}`);
        }
        state.devices[id] = entry;
        await writeState(paths.state, state);
      }
      if (wantDecision && entry && (o.limit === null || downloads < o.limit)) {
        const url = new URL(dPath, o.baseUrl).href;
        const attempts = (entry.decision?.attempts ?? 0) + 1;
        const at = now().toISOString();
        const file = join(paths.decision, `${id}.pdf`);
        const got = await download(id, url, file);
        const decision: DecisionEntry = got.ok
          ? { status: 'fetched', at, url, attempts, reason: null, predicates: await readDecision(file, id).catch(() => null), extractor: EXTRACTOR_VERSION }
          : { status: got.missing ? 'missing' : 'failed', at, url, attempts, reason: got.reason, predicates: null, extractor: null };
        if (decision.predicates) log(`${id}: decision summary names ${decision.predicates.join(' ')}`);
        entry.decision = decision;
        await writeState(paths.state, state);
      }
    }
    await writeState(paths.state, state);

    const rows = mergeBase(reportRows(state), o.base ? await readBase(o.base) : []);
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
      // FDA's decision summary states the predicate in a field of its own: where it does, it is the authority.
      const decided = e.decision?.predicates;
      if (decided && decided.length > 0) return { device, status: 'read', predicates: decided, reason: `FDA's decision summary, field "Predicate 510(k) Number(s)": ${decided.join(' ')}` };
      if (e.status === 'fetched' && e.read) return { device, status: e.read.status, predicates: e.read.predicates, reason: e.read.reason };
      if (e.status === 'missing') return { device, status: 'missing', predicates: [], reason: e.reason ?? 'FDA has no summary' };
      return { device, status: 'missing', predicates: [], reason: `not downloaded after ${e.attempts} attempt(s): ${e.reason ?? ''}` };
    })
    .sort((a, b) => a.device.localeCompare(b.device));
}

/** The rows of an edge folder's report (device,status,predicates,reason). */
async function readBase(folder: string): Promise<ReportRow[]> {
  const path = join(folder, 'report.csv');
  const rows = parseCsv(await readFile(path, 'utf8'), path);
  const header = rows.shift();
  if (header?.join(',') !== 'device,status,predicates,reason') throw new Error(`${path}: the first line must be "device,status,predicates,reason"`);
  return rows.map(([device = '', status = '', predicates = '', reason = '']) => ({
    device,
    status: status as ReportRow['status'],
    predicates: predicates.split(' ').filter(Boolean),
    reason,
  }));
}

/** A device's own reading wins; the base stands for devices this fetch has not read (absent, missing, failed). */
export function mergeBase(own: readonly ReportRow[], base: readonly ReportRow[]): ReportRow[] {
  const out = new Map(own.map((r) => [r.device, r]));
  for (const r of base) {
    const mine = out.get(r.device);
    if (!mine || (mine.status !== 'read' && r.status === 'read')) out.set(r.device, r);
  }
  return [...out.values()].sort((a, b) => a.device.localeCompare(b.device));
}
