import { Agent, createServer, request } from 'node:http';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseCommandLine } from '../src/cli/args.ts';
import { silentLogger } from '../src/server/log.ts';
import { createApp } from '../src/server/app.ts';
import { sourceStateOf } from '../src/api/source-state.ts';
import { answerOpenFda } from '../src/openfda/answer.ts';
import { openSnapshotDirectory } from '../src/node/index.ts';
import { joinBytes } from '../src/utils/join-bytes.ts';

const HELP = `Usage: npx tsx bench/openfda.ts --snapshot DIR [--seconds N] [--rounds N] [--connections N] [--mode M] [--only TEXT] [--encoding E]

openFDA-style requests (/device/510k.json) side by side with the same questions asked through POST /v1/query,
against one snapshot, on an in-process server on 127.0.0.1 (port 0).

  --snapshot DIR      the snapshot directory (its manifest.json inside), required
  --seconds N         seconds of load per request kind and round (default 5, at most 60)
  --rounds N          rounds per pair, the two sides taking turns; each figure is the median (default 3, at most 9)
  --connections N     requests in flight at once (default 8, at most 64)
  --mode M            repeated: one URL asked again and again, answer cache on (the default size), as before;
                      distinct: each request a different question of the same kind, answer cache off on both sides
                      (every answer is computed); both: the two, one after the other (default both)
  --only TEXT         run only the questions whose name contains TEXT
  --encoding E        the Accept-Encoding sent: identity (default), gzip or br
  --fast-lane on|off  whether /v1/query is answered on its fast lane below Node's HTTP layer (default on, as
                      deployed); off puts both sides on Node's HTTP layer, to separate its cost from the answers'
  --floor             also load a bare node:http server that sends fixed bytes as many as the openFDA side's answer
                      (same client, same connections): the most any server on Node's HTTP layer could do with
                      answers of that size, to tell the cost of the bytes from the cost of the code
  --help              this text

Each side asks on connections of its own (as deployed, /v1/query is then answered on its fast lane).

Prints, per pair and mode: requests a second, p99 latency and the mean answer's bytes of each side, their ratios
(openFDA's req/s over /v1/query's; /v1/query's p99 over openFDA's: above 1 is openFDA ahead) and whether the target
(both ratios at least 0.8) is met; then the time of a count of every product code over every record (in process, no
HTTP), best and median of 20 runs, against its target (under 50 ms).`;

const values = parseCommandLine('openfda', HELP, {
  snapshot: { type: 'string' },
  seconds: { type: 'string' },
  rounds: { type: 'string' },
  connections: { type: 'string' },
  mode: { type: 'string' },
  only: { type: 'string' },
  encoding: { type: 'string' },
  'fast-lane': { type: 'string' },
  floor: { type: 'boolean', default: false },
});
if (!values.snapshot) {
  console.error('openfda: --snapshot DIR is required (see --help)');
  process.exit(2);
}
const seconds = Math.min(60, Math.max(1, Number(values.seconds ?? 5)));
const rounds = Math.min(9, Math.max(1, Math.floor(Number(values.rounds ?? 3))));
const connections = Math.min(64, Math.max(1, Number(values.connections ?? 8)));
const mode = values.mode ?? 'both';
if (!['repeated', 'distinct', 'both'].includes(mode)) {
  console.error(`Expected \`--mode\` to be repeated, distinct or both, got "${mode}"`);
  process.exit(1);
}
const fastLane = (values['fast-lane'] ?? 'on') === 'on';
if (!['on', 'off'].includes(values['fast-lane'] ?? 'on')) {
  console.error(`Expected \`--fast-lane\` to be on or off, got "${values['fast-lane']}"`);
  process.exit(1);
}
const encoding = values.encoding ?? 'identity';
if (!['identity', 'gzip', 'br'].includes(encoding)) {
  console.error(`Expected \`--encoding\` to be identity, gzip or br, got "${encoding}"`);
  process.exit(1);
}

type Req = { method: 'GET' | 'POST'; path: string; body?: string };
const search = (input: Record<string, unknown>): Req => ({
  method: 'POST',
  path: '/v1/query',
  body: JSON.stringify({ version: 1, operation: 'device-510k.search', input: { query: '', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10, ...input } }),
});

/** One question of a kind, both ways; `v` picks the variant (a product code, a word, a year). */
type Pair = { name: string; make: (v: Variant) => { openfda: Req; v1: Req } };
type Variant = { code: string; word: string; year: number };

const PAIRS: Pair[] = [
  {
    name: 'search: one product code, 10 records',
    make: ({ code }) => ({
      openfda: { method: 'GET', path: `/device/510k.json?search=product_code:${code}&limit=10` },
      v1: search({ query: `code:${code}` }),
    }),
  },
  {
    name: 'search: a word and a date range, 10 records',
    make: ({ word, year }) => ({
      openfda: { method: 'GET', path: `/device/510k.json?search=device_name:${word}+AND+decision_date:[${year}0101+TO+${year + 10}1231]&limit=10` },
      v1: search({ query: `device:${word} decided:${year}..${year + 10}` }),
    }),
  },
  {
    name: 'count: product codes of a word (keyword field)',
    make: ({ word }) => ({
      openfda: { method: 'GET', path: `/device/510k.json?search=device_name:${word}&count=product_code&limit=100` },
      v1: search({ query: `device:${word}`, pageSize: 1, facets: [{ field: 'productCode', size: 100 }] }),
    }),
  },
  {
    name: 'count: decision dates of a word, by day both ways',
    make: ({ word }) => ({
      openfda: { method: 'GET', path: `/device/510k.json?search=device_name:${word}&count=decision_date` },
      v1: search({ query: `device:${word}`, pageSize: 1, facets: [{ field: 'decisionDate', size: null, order: 'value' }] }),
    }),
  },
];

/** The repeated URL of each kind (the questions measured before distinct ones were added). */
const REPEATED: Variant = { code: 'DQY', word: 'catheter', year: 2010 };
const WORDS = ['catheter', 'system', 'valve', 'stent', 'implant', 'monitor', 'pump', 'needle', 'wire', 'screw', 'lens', 'syringe',
  'glove', 'guide', 'sensor', 'laser', 'dental', 'surgical', 'infusion', 'ultrasound', 'plate', 'tube', 'test', 'assay', 'mask',
  'bone', 'knee', 'hip', 'spinal', 'blood', 'oxygen', 'electrode', 'balloon', 'suture', 'contact', 'hearing', 'bed', 'wheelchair'];
const YEARS = [1980, 1985, 1990, 1995, 2000, 2005, 2010, 2015];

/** One request on `agent`'s connections; resolves with its latency and the answer's length in bytes. */
function once(url: URL, r: Req, agent: Agent): Promise<{ ms: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(
      { host: url.hostname, port: url.port, method: r.method, path: r.path, headers: { ...(r.body && { 'content-type': 'application/json' }), 'accept-encoding': encoding }, agent },
      (res) => {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => (bytes += chunk.length));
        res.on('end', () => (res.statusCode === 200 ? resolve({ ms: performance.now() - started, bytes }) : reject(new Error(`${r.path}: ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    req.end(r.body);
  });
}

/**
 * Each side has connections of its own, as two kinds of clients would: the server hands a connection that sent a GET to
 * Node's HTTP layer for the rest of its life, so /v1/query asked on connections the openFDA side used first would lose
 * its fast lane (which serves it as deployed).
 */
const agents = {
  openfda: new Agent({ keepAlive: true, maxSockets: 64 }),
  v1: new Agent({ keepAlive: true, maxSockets: 64 }),
  floor: new Agent({ keepAlive: true, maxSockets: 64 }),
};

/** Load from `connections` clients, each request the next of `list` (in turn), for `seconds`. */
type Load = { rps: number; p99: number; n: number; bytes: number };

/** Each figure's median over the rounds (taken figure by figure). */
function medianOf(loads: readonly Load[]): Load {
  const mid = (f: (l: Load) => number) => loads.map(f).sort((x, y) => x - y)[Math.floor(loads.length / 2)]!;
  return { rps: mid((l) => l.rps), p99: mid((l) => l.p99), n: mid((l) => l.n), bytes: mid((l) => l.bytes) };
}

async function load(url: URL, list: readonly Req[], agent: Agent): Promise<Load> {
  // Fresh connections for each load: a kept-alive socket left idle while the other side ran may be closing on the
  // server's keep-alive timeout just as it is reused, which the client sees as a reset ("socket hang up").
  agent.destroy();
  for (let i = 0; i < Math.min(20, list.length); i++) await once(url, list[i]!, agent); // warm: index sections
  const latencies: number[] = [];
  let bytes = 0;
  let next = 0;
  const until = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until && latencies.length < 5_000_000) {
        const r = await once(url, list[next++ % list.length]!, agent);
        latencies.push(r.ms);
        bytes += r.bytes;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { rps: latencies.length / elapsed, p99: latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))]!, n: latencies.length, bytes: bytes / latencies.length };
}

/** Whether a request is answered 200 (a variant that matches nothing answers 404 on openFDA's side). */
function answers(url: URL, r: Req): Promise<boolean> {
  return once(url, r, agents.openfda).then(() => true, () => false);
}

const pairs = PAIRS.filter((p) => !values.only || p.name.includes(values.only));
console.log(`snapshot ${values.snapshot}; ${rounds} rounds of ${seconds} s per side, ${connections} in flight, Accept-Encoding ${encoding}, fast lane ${fastLane ? 'on' : 'off'}; load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
console.log('| question | mode | openFDA-style req/s | p99 ms | bytes | /v1/query req/s | p99 ms | bytes | req/s ratio | p99 ratio | target | bare server, same bytes: req/s, p99 ms |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
const floor = values.floor ? await bareServer() : null;
/** The target: throughput and p99 within 0.8x of /v1/query's (a ratio of at least 0.8, p99's taken as /v1/query's over openFDA's). */
const TARGET_RATIO = 0.8;
const verdicts: boolean[] = [];
for (const m of mode === 'both' ? ['repeated', 'distinct'] : [mode]) {
  // Distinct questions are measured with no answer cache on either side: each answer is computed.
  const app = await createApp({
    snapshotPath: values.snapshot,
    syncStatePath: null,
    publicDir: null,
    pollMs: 0,
    watch: false,
    logger: silentLogger,
    fastLane,
    ...(m === 'distinct' && { answerCacheBytes: 0 }),
  });
  const { url: base } = await app.listen(0, '127.0.0.1');
  const url = new URL(base);
  for (const pair of pairs) {
    let list: { openfda: Req; v1: Req }[] = [pair.make(REPEATED)];
    if (m === 'distinct') {
      const codes = await topCodes(url, 60);
      const variants: Variant[] = [];
      for (let i = 0; i < 240; i++) variants.push({ code: codes[i % codes.length]!, word: WORDS[i % WORDS.length]!, year: YEARS[i % YEARS.length]! });
      const seen = new Set<string>();
      list = [];
      for (const v of variants) {
        const q = pair.make(v);
        if (seen.has(q.openfda.path)) continue;
        seen.add(q.openfda.path);
        if (await answers(url, q.openfda)) list.push(q);
      }
    }
    // The two sides take turns, round by round, so that a change in the machine's load falls on both.
    const as: Load[] = [];
    const bs: Load[] = [];
    const fs: Load[] = [];
    for (let r = 0; r < rounds; r++) {
      as.push(await load(url, list.map((q) => q.openfda), agents.openfda));
      bs.push(await load(url, list.map((q) => q.v1), agents.v1));
      if (floor) fs.push(await load(floor.url, [{ method: 'GET', path: `/bytes/${Math.round(as[r]!.bytes)}` }], agents.floor));
    }
    const a = medianOf(as);
    const b = medianOf(bs);
    const f = fs.length > 0 ? medianOf(fs) : null;
    const rpsRatio = a.rps / b.rps;
    const p99Ratio = b.p99 / a.p99;
    const met = rpsRatio >= TARGET_RATIO && p99Ratio >= TARGET_RATIO;
    verdicts.push(met);
    const kind = m === 'distinct' ? `distinct (${list.length})` : 'repeated';
    console.log(
      `| ${pair.name} | ${kind} | ${a.rps.toFixed(0)} | ${a.p99.toFixed(2)} | ${a.bytes.toFixed(0)} | ${b.rps.toFixed(0)} | ${b.p99.toFixed(2)} | ${b.bytes.toFixed(0)} | ${rpsRatio.toFixed(2)} | ${p99Ratio.toFixed(2)} | ${met ? 'met' : 'MISSED'} | ${f ? `${f.rps.toFixed(0)}, ${f.p99.toFixed(2)}` : '-'} |`,
    );
  }
  await app.close({ graceMs: 1000 });
}
agents.openfda.destroy();
agents.v1.destroy();
agents.floor.destroy();
floor?.server.close();

/** A bare node:http server on 127.0.0.1 (port 0): GET /bytes/N answers N fixed bytes with the JSON headers. */
async function bareServer() {
  const bodies = new Map<number, Buffer>();
  const server = createServer((req, res) => {
    req.resume();
    const n = Math.min(16 * 1024 * 1024, Number(/^\/bytes\/(\d+)$/.exec(req.url ?? '')?.[1] ?? 0));
    let body = bodies.get(n);
    if (!body) bodies.set(n, (body = Buffer.alloc(n, 0x20)));
    res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Access-Control-Allow-Origin': '*', Vary: 'Accept-Encoding', 'Content-Length': n });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the bare server has no port');
  return { server, url: new URL(`http://127.0.0.1:${address.port}`) };
}

/** The product codes with the most records, from a count through the openFDA endpoint. */
async function topCodes(url: URL, n: number): Promise<string[]> {
  const res = await fetch(new URL(`/device/510k.json?count=product_code&limit=${n}`, url));
  const body = (await res.json()) as { results: { term: string }[] };
  return body.results.map((r) => r.term);
}

/** The target for a count of every product code over every record (the median of the runs). */
const COUNT_TARGET_MS = 50;
// A count of every product code over every record, in process: the planner, the count and the answer's bytes.
const snapshot = await openSnapshotDirectory(values.snapshot);
const deps = { now: () => new Date(), sourceState: (s: typeof snapshot | null, now: Date) => sourceStateOf({ manifest: s?.manifest ?? null, sync: null, now, maxAgeHours: 48 }) };
const countUrl = new URL('http://bench/device/510k.json?count=product_code&limit=100000');
const times: number[] = [];
let terms = 0;
for (let i = 0; i < 21 && !values.only; i++) {
  const t0 = performance.now();
  const a = await answerOpenFda(deps, snapshot, '510k', countUrl);
  const ms = performance.now() - t0;
  if (a.status !== 200) throw new Error(`count=product_code answered ${a.status}`);
  if (i === 0) terms = JSON.parse(new TextDecoder().decode(joinBytes(a.chunks))).meta.total_terms;
  else times.push(ms);
}
times.sort((a, b) => a - b);
console.log(`side by side: ${verdicts.filter(Boolean).length} of ${verdicts.length} within ${TARGET_RATIO}x of /v1/query (throughput and p99)`);
if (!values.only) {
  const median = times[10]!;
  console.log(
    `count=product_code over all ${snapshot.manifest.counts.records} records (${terms} codes): best ${times[0]!.toFixed(1)} ms, median ${median.toFixed(1)} ms (first run, loading sections, not counted); target under ${COUNT_TARGET_MS} ms: ${median < COUNT_TARGET_MS ? 'met' : 'MISSED'}`,
  );
}
snapshot.close();
