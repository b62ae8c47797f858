import { FACET_FIELDS } from '../../src/contract/operations.ts';
import { join } from 'node:path';
import { LineChild, mainThreadTimes, memoryOf, startTsx } from './procs.ts';
import type { MetaFigures } from './meta-child.ts';

/**
 * Hostile searches (issue: bounded under hostile input), shared by bench/hostile-search.ts, bench/slice-probe.ts and
 * the hostile section of `npm run bench`: the cases, and one case run against a server with `meta` asked meanwhile.
 */

const letters = 'abcdefghijklmnopqrstuvwxyz0123456789';
const prefixes: string[] = [...letters];
for (const a of letters.slice(1)) for (const b of letters) if (prefixes.length < 346) prefixes.push(a + b);
const twoLetter = prefixes.filter((p) => p.length === 2);

/** Every field the search counts (the contract's list, so a field added there is counted here too), at size null. */
export const EVERY_FACET = FACET_FIELDS.map((field) => ({ field, size: null }));

export type Input = Record<string, unknown>;
export const searchInput = (query: string, extra: Input = {}): Input => ({ query, applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10, ...extra });
const PHRASE_WORDS = ['catheter', 'system', 'pump', 'stent', 'lead', 'monitor', 'implant', 'guide'];
const PHRASE_TAILS = ['kit', 'set', 'tray', 'system', 'wire', 'unit'];

export const PREFIX_346 = '346-prefix OR (2,036 chars)';
export const FACETS_16 = '16 concurrent, every facet size null';

/**
 * A case: the requests sent at once (each on its own connection), searches posted to /v1/query (`requests`) or GETs of
 * openFDA's paths (`gets`). Cases differ per round so no answer is cached.
 */
export type HostileCase = { name: string; requests?: (round: number) => Input[]; gets?: (round: number) => string[] };

export const HOSTILE_SEARCH_CASES: HostileCase[] = [
  { name: PREFIX_346, requests: (r) => [searchInput(prefixes.join(' OR '), { pageSize: 10 + r })] },
  { name: '32 two-letter prefixes OR', requests: (r) => [searchInput(twoLetter.slice(r, r + 32).join(' OR '))] },
  { name: '400 exclusions', requests: (r) => [searchInput(Array.from({ length: 400 }, (_, i) => `-${twoLetter[(i + r) % twoLetter.length]}`).join(' ').slice(0, 2048))] },
  {
    name: 'OR of 16 phrases',
    requests: (r) => [searchInput(Array.from({ length: 16 }, (_, i) => `"${PHRASE_WORDS[(i + r) % PHRASE_WORDS.length]} ${PHRASE_TAILS[i % PHRASE_TAILS.length]}"`).join(' OR '))],
  },
  {
    name: FACETS_16,
    requests: (r) => Array.from({ length: 16 }, (_, i) => searchInput('', { facets: EVERY_FACET, page: 1 + i + 16 * r })),
  },
];

/**
 * The openFDA path's hostile requests (GETs of /device/510k.json), each a case of one request; a round's requests differ
 * by a parameter that changes no work (`limit` of a count, a word's spelling) so that no answer is kept from the last.
 */
const BANG_4090 = '!'.repeat(4090);
const NOT_680 = 'NOT '.repeat(680);
const bare256 = (r: number) => twoLetter.slice(r, r + 256).map((p) => `${p}*`).join(' ');
export const HOSTILE_OPENFDA_CASES: (HostileCase & { gets: (round: number) => string[] })[] = [
  { name: 'openFDA _exists_:k_number&count=k_number', gets: (r) => [`/device/510k.json?search=_exists_:k_number&count=k_number&limit=${1 + r}`] },
  { name: 'openFDA count=k_number&limit=100000000', gets: (r) => [`/device/510k.json?count=k_number&limit=${100_000_000 + r}`] },
  { name: 'openFDA NOT k_number:K000001&count=k_number.exact', gets: (r) => [`/device/510k.json?search=${encodeURIComponent(`NOT k_number:K00000${1 + r}`)}&count=k_number.exact`] },
  { name: 'openFDA 4,090 ! before a word', gets: (r) => [`/device/510k.json?search=${encodeURIComponent(`${BANG_4090}${['valve', 'stent', 'pump'][r % 3]}`)}`] },
  { name: 'openFDA NOT x 680 before a word', gets: (r) => [`/device/510k.json?search=${encodeURIComponent(`${NOT_680}${['valve', 'stent', 'pump'][r % 3]}`)}`] },
  { name: 'openFDA sort applicant.exact:desc skip=997000', gets: (r) => [`/device/510k.json?sort=applicant.exact:desc&skip=${997_000 - r}&limit=1`] },
  { name: 'openFDA 256 bare prefixes', gets: (r) => [`/device/510k.json?search=${encodeURIComponent(bare256(r))}`] },
  { name: 'openFDA count=device_name&limit=100000000', gets: (r) => [`/device/510k.json?count=device_name&limit=${100_000_000 + r}`] },
  { name: 'openFDA NOT k_number:K000001&count=applicant.exact', gets: (r) => [`/device/510k.json?search=${encodeURIComponent(`NOT k_number:K00000${1 + r}`)}&count=applicant.exact&limit=100000000`] },
  { name: 'openFDA _exists_:k_number&count=decision_date', gets: (r) => [`/device/510k.json?search=${encodeURIComponent(`_exists_:k_number AND NOT k_number:K00000${1 + r}`)}&count=decision_date`] },
];

/** What one request got: a status (0 when no answer came: the connection was closed or refused, or it timed out). */
type Outcome = { status: number; code: string | null; total: number | null };

/**
 * A request that got no answer, as its row says it: `closed (other side closed)`, `refused (ECONNREFUSED)`,
 * `timed out`. A case goes on to the next whatever its requests got.
 */
export function noAnswer(err: unknown): Outcome {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return { status: 0, code: 'timed out', total: null };
  const cause = e?.cause;
  const why = cause?.message || cause?.code || e?.message || String(err);
  return { status: 0, code: cause?.code === 'ECONNREFUSED' ? `refused (${cause.code})` : `closed (${why})`, total: null };
}

async function post(url: string, operation: string, input: Input): Promise<Outcome> {
  try {
    const res = await fetch(`${url}/v1/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ version: 1, operation, input }),
      signal: AbortSignal.timeout(120_000),
    });
    const body = (await res.json()) as { error?: { code: string }; page?: { total: number } };
    return { status: res.status, code: body.error?.code ?? null, total: body.page?.total ?? null };
  } catch (err) {
    return noAnswer(err);
  }
}

/** A GET of an openFDA path: its status, error code, and total (of a search) or terms (of a count). */
async function getOpenFda(url: string, path: string): Promise<Outcome> {
  try {
    const res = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(120_000) });
    const body = (await res.json()) as { error?: { code: string }; meta?: { results?: { total: number }; total_terms?: number } };
    return { status: res.status, code: body.error?.code ?? null, total: body.meta?.total_terms ?? body.meta?.results?.total ?? null };
  } catch (err) {
    return noAnswer(err);
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

/**
 * One round of a case: `ms` until every request was answered or refused; `meta*` over the metas asked meanwhile. With
 * the server's pid (Linux): while the slowest meta was waiting, how long the server's main thread ran (its own work:
 * what a slice bounds) and how long it waited for a core (the machine's other work); and the most it ran during any
 * one meta. NaN without.
 */
export type HostileSearchRow = {
  name: string;
  answered: string;
  refused: boolean;
  ms: number;
  metaMax: number;
  metaMedian: number;
  metaCount: number;
  /** metas that got no answer (their connection closed or refused); absent in rows written before it was counted. */
  metaFailed?: number;
  /** The case's requests that got no answer (closed, refused, timed out). */
  unanswered?: number;
  slowestMetaRunMs: number;
  slowestMetaWaitMs: number;
  metaRunMax: number;
  /** The server's largest RSS sampled (every 50 ms) while the case ran; NaN without its pid. */
  rssMaxBytes: number;
};

/** Warms the index and the per-index tables, as a server that has been answering would have them. */
export async function warmSearch(url: string): Promise<void> {
  await post(url, 'device-510k.search', searchInput('catheter', { facets: EVERY_FACET }));
  await post(url, 'device-510k.search', searchInput('"balloon catheter" OR stent -foley'));
}

/** The process that asks `meta` during a case (meta-child.ts), for `runSearchCase`; stop its `child` when done. */
export const startMetaChild = (): LineChild => new LineChild(startTsx(join(import.meta.dirname, 'meta-child.ts'), [], { stdio: ['pipe', 'pipe', 'inherit'] }), 'meta child');

export async function runSearchCase(url: string, c: HostileCase, round: number, pid?: number, metaChild?: LineChild): Promise<HostileSearchRow> {
  if (metaChild) await metaChild.request({ cmd: 'start', url, pid: pid ?? 0 }, 10_000);
  const started = performance.now();
  let done = false;
  let rssMax = Number.NaN;
  const sample = () => {
    const rss = pid === undefined ? undefined : memoryOf(pid)?.rss;
    if (rss !== undefined && !(rssMax >= rss)) rssMax = rss;
  };
  const sampler = setInterval(sample, 50);
  sample();
  const asked = c.gets ? c.gets(round).map((path) => getOpenFda(url, path)) : c.requests!(round).map((input) => post(url, 'device-510k.search', input));
  const work = Promise.all(asked).finally(() => {
    done = true;
    sample();
    clearInterval(sampler);
  });
  if (metaChild) {
    const answers = await work;
    const ms = performance.now() - started;
    const f = await metaChild.request<MetaFigures>({ cmd: 'stop' }, 130_000);
    // NaN comes back as null through JSON.
    const n = (x: number | null) => x ?? Number.NaN;
    return row(c, answers, ms, f.metas, { ms: f.slowest.ms, runMs: n(f.slowest.runMs), waitMs: n(f.slowest.waitMs) }, n(f.metaRunMax), rssMax, f.failed ?? 0);
  }
  // meta, one after another while the case runs (bounded: at most 2,000, and none past 120 s).
  const metas: number[] = [];
  let failed = 0;
  let slowest = { ms: -1, runMs: Number.NaN, waitMs: Number.NaN };
  let metaRunMax = Number.NaN;
  while (!done && metas.length + failed < 2000 && performance.now() - started < 120_000) {
    const before = pid === undefined ? null : mainThreadTimes(pid);
    const t = performance.now();
    if ((await post(url, 'device-510k.meta', {})).status === 0) {
      failed++;
      continue;
    }
    const ms = performance.now() - t;
    const after = pid === undefined ? null : mainThreadTimes(pid);
    metas.push(ms);
    const runMs = before && after ? after.runMs - before.runMs : Number.NaN;
    if (Number.isFinite(runMs) && !(metaRunMax >= runMs)) metaRunMax = runMs;
    if (ms > slowest.ms) slowest = { ms, runMs, waitMs: before && after ? after.waitMs - before.waitMs : Number.NaN };
  }
  const answers = await work;
  const ms = performance.now() - started;
  return row(c, answers, ms, metas, slowest, metaRunMax, rssMax, failed);
}

/** What one request got, as the row says it: `200, 1,000 matches`, `400 invalid_input`, `closed (…)`. */
const said = (a: Outcome): string => (a.status === 200 ? `200, ${a.total === null ? '?' : a.total.toLocaleString('en-US')} matches` : a.status === 0 ? a.code! : `${a.status} ${a.code}`);

function row(
  c: HostileCase,
  answers: Outcome[],
  ms: number,
  metas: number[],
  slowest: { ms: number; runMs: number; waitMs: number },
  metaRunMax: number,
  rssMaxBytes: number,
  metaFailed: number,
): HostileSearchRow {
  const first = answers[0]!;
  // Each different outcome with how many requests got it, the first request's first: `16/16 × 400 invalid_input`,
  // `12/16 × closed (other side closed); 4/16 × 200, 1,000,000 matches`.
  const groups = new Map<string, number>();
  for (const a of answers) groups.set(said(a), (groups.get(said(a)) ?? 0) + 1);
  const answered = answers.length > 1 ? [...groups].map(([what, n]) => `${n}/${answers.length} × ${what}`).join('; ') : said(first);
  return {
    name: c.name,
    answered,
    refused: first.status !== 200,
    unanswered: answers.filter((a) => a.status === 0).length,
    ms,
    metaMax: metas.length ? Math.max(...metas) : 0,
    metaMedian: metas.length ? median(metas) : 0,
    metaCount: metas.length,
    metaFailed,
    slowestMetaRunMs: slowest.runMs,
    slowestMetaWaitMs: slowest.waitMs,
    metaRunMax,
    rssMaxBytes,
  };
}

/** `rounds` rounds of the case; the median round by time. */
export async function medianRound(url: string, c: HostileCase, rounds: number, pid?: number, metaChild?: LineChild): Promise<HostileSearchRow> {
  const runs: HostileSearchRow[] = [];
  for (let r = 0; r < rounds; r++) runs.push(await runSearchCase(url, c, r, pid, metaChild));
  runs.sort((a, b) => a.ms - b.ms);
  return runs[Math.floor((runs.length - 1) / 2)]!;
}
