/**
 * Hostile searches against the real server (as `npm start` runs it) on one snapshot: how long each takes to be
 * answered or refused, and how long a `meta` request sent meanwhile waits (the server's other clients).
 *
 *   npx tsx bench/hostile-search.ts --snapshot DIR [--root CHECKOUT]
 *
 * A script, not a test: it prints figures and asserts nothing about time.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseCommandLine } from '../src/cli/args.ts';
import { startServer } from './lib/server.ts';

const USAGE = `Usage: npx tsx bench/hostile-search.ts --snapshot DIR [options]

Starts the server on the snapshot and sends hostile searches, one case at a time: the 346-prefix OR query, 32
two-letter prefixes ORed, 400 exclusions, an OR of 16 phrases, 16 concurrent searches counting every facet at
size null. For each: the time until it is answered or refused, its status, and the latency of meta requests sent
one after another meanwhile (their worst and median). Prints one table.

  --snapshot DIR        the snapshot to serve (required)
  --root DIR            the checkout whose server runs (this one); another checkout gives "before" figures
  --rounds N            times each case runs; the table shows the median round (3)`;

const values = parseCommandLine('hostile-search', USAGE, {
  snapshot: { type: 'string', default: '' },
  root: { type: 'string', default: resolve(import.meta.dirname, '..') },
  rounds: { type: 'string', default: '3' },
});
if (values.snapshot === '') {
  console.error(USAGE);
  process.exit(2);
}
const rounds = Math.max(1, Math.min(20, Number(values.rounds) || 3));

const letters = 'abcdefghijklmnopqrstuvwxyz0123456789';
const prefixes: string[] = [...letters];
for (const a of letters.slice(1)) for (const b of letters) if (prefixes.length < 346) prefixes.push(a + b);
const twoLetter = prefixes.filter((p) => p.length === 2);

const FACETS = [
  'productCode', 'applicant', 'decisionYear', 'receivedYear', 'advisoryCommittee', 'deviceClass', 'decisionCode',
  'submissionType', 'thirdParty', 'expeditedReview', 'statementOrSummary', 'countryCode', 'state',
].map((field) => ({ field, size: null }));

type Input = Record<string, unknown>;
const search = (query: string, extra: Input = {}): Input => ({ query, applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10, ...extra });
const PHRASE_WORDS = ['catheter', 'system', 'pump', 'stent', 'lead', 'monitor', 'implant', 'guide'];
const PHRASE_TAILS = ['kit', 'set', 'tray', 'system', 'wire', 'unit'];

/** Each case: the requests sent at once (each on its own connection). Cases differ per round so no answer is cached. */
const CASES: { name: string; requests: (round: number) => Input[] }[] = [
  { name: '346-prefix OR (2,036 chars)', requests: (r) => [search(prefixes.join(' OR '), { pageSize: 10 + r })] },
  { name: '32 two-letter prefixes OR', requests: (r) => [search(twoLetter.slice(r, r + 32).join(' OR '))] },
  { name: '400 exclusions', requests: (r) => [search(Array.from({ length: 400 }, (_, i) => `-${twoLetter[(i + r) % twoLetter.length]}`).join(' ').slice(0, 2048))] },
  {
    name: 'OR of 16 phrases',
    requests: (r) => [search(Array.from({ length: 16 }, (_, i) => `"${PHRASE_WORDS[(i + r) % PHRASE_WORDS.length]} ${PHRASE_TAILS[i % PHRASE_TAILS.length]}"`).join(' OR '))],
  },
  {
    name: '16 concurrent, every facet size null',
    requests: (r) => Array.from({ length: 16 }, (_, i) => search('', { facets: FACETS, page: 1 + i + 16 * r })),
  },
];

async function post(url: string, operation: string, input: Input): Promise<{ status: number; code: string | null; total: number | null }> {
  const res = await fetch(`${url}/v1/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ version: 1, operation, input }),
  });
  const body = (await res.json()) as { error?: { code: string }; page?: { total: number } };
  return { status: res.status, code: body.error?.code ?? null, total: body.page?.total ?? null };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

type Row = { name: string; answered: string; ms: number; metaMax: number; metaMedian: number; metaCount: number };

async function runCase(url: string, c: (typeof CASES)[number], round: number): Promise<Row> {
  const started = performance.now();
  let done = false;
  const work = Promise.all(c.requests(round).map((input) => post(url, 'device-510k.search', input))).finally(() => {
    done = true;
  });
  // meta, one after another while the case runs (bounded: at most 2,000, and none past 120 s).
  const metas: number[] = [];
  while (!done && metas.length < 2000 && performance.now() - started < 120_000) {
    const t = performance.now();
    await post(url, 'device-510k.meta', {});
    metas.push(performance.now() - t);
  }
  const answers = await work;
  const ms = performance.now() - started;
  const first = answers[0]!;
  const answered = first.status === 200 ? `200, ${first.total!.toLocaleString('en-US')} matches` : `${first.status} ${first.code}`;
  return { name: c.name, answered: answers.length > 1 ? `${answers.filter((a) => a.status === 200).length}/${answers.length} × ${answered}` : answered, ms, metaMax: metas.length ? Math.max(...metas) : 0, metaMedian: metas.length ? median(metas) : 0, metaCount: metas.length };
}

async function main(): Promise<void> {
  const tmp = await mkdtemp(join(tmpdir(), 'hostile-search-'));
  const server = await startServer(values.root, resolve(values.snapshot), tmp);
  try {
    console.log(`checkout   ${values.root}`);
    console.log(`snapshot   ${resolve(values.snapshot)}`);
    console.log(`machine    ${cpus().length} cores, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} (other work inflates wall-clock figures)`);
    // Warm the index and the per-index tables, as a server that has been answering would have them.
    await post(server.url, 'device-510k.search', search('catheter', { facets: FACETS }));
    await post(server.url, 'device-510k.search', search('"balloon catheter" OR stent -foley'));
    const rows: Row[] = [];
    for (const c of CASES) {
      const runs: Row[] = [];
      for (let r = 0; r < rounds; r++) runs.push(await runCase(server.url, c, r));
      runs.sort((a, b) => a.ms - b.ms);
      rows.push(runs[Math.floor((runs.length - 1) / 2)]!);
    }
    const pad = (s: string, n: number) => s.padEnd(n);
    const num = (x: number) => x.toFixed(0).padStart(8);
    console.log(`\n${pad('case', 38)}${pad('answer', 34)}${'ms'.padStart(8)}${'meta max'.padStart(10)}${'meta p50'.padStart(10)}${'metas'.padStart(7)}`);
    for (const r of rows) console.log(`${pad(r.name, 38)}${pad(r.answered, 34)}${num(r.ms)}${num(r.metaMax).padStart(10)}${num(r.metaMedian).padStart(10)}${String(r.metaCount).padStart(7)}`);
    console.log(`\n(median of ${rounds} rounds by time; ms is until every request of the case was answered or refused)`);
  } finally {
    await server.stop();
    await rm(tmp, { recursive: true, force: true });
  }
}

await main();
