/**
 * An MCP tool call against the same question asked of POST /v1/query, on the server as `npm start` runs it, over one
 * or more snapshots: throughput and p99 of each side under the same load, in alternating rounds, and their ratios
 * (targets: the tool call's throughput at least 0.8x, its p99 within 1.25x). Three kinds of question, each drawn
 * from the snapshot's own records: a search (search_clearances), a record (get_clearance), and counts by product
 * code over a search (count_by). The snapshots are only read.
 *
 *   npx tsx bench/mcp.ts --snapshot DIR [--snapshot DIR]... [--seconds 5] [--rounds 3] [--connections 8] [--against DIR]
 *                        [--out FILE]
 *
 * Beside each side's requests a second and p99, the server's main thread's time on a core per request (Linux's
 * schedstat), which moves far less than throughput when other work shares the machine. With `--against`, another
 * checkout's server (its own bundle, the same snapshot) is measured in the same alternating rounds: an A/B of the
 * ratios in one run.
 *
 * A script, not a test: it prints figures and asserts nothing about time.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCommandLine } from '../src/cli/args.ts';
import { Manifest, type SearchInput } from '../src/contract/index.ts';
import { findGenerator, runLoad, type LoadRequest, type LoadResult } from './lib/load.ts';
import { makeQueries, sampleRecords } from './lib/queries.ts';
import { mainThreadTimes } from './lib/procs.ts';
import { startServer, type RunningServer } from './lib/server.ts';
import { median, ms, rps } from './lib/stats.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const USAGE = `Usage: npx tsx bench/mcp.ts --snapshot DIR [--snapshot DIR]... [options]

An MCP tool call (POST /mcp) against the same question asked of POST /v1/query, on the server as npm start runs
it: requests a second and p99 of each, in alternating rounds, and the ratios (targets: throughput at least 0.8x,
p99 within 1.25x), for a search, a record and counts by product code.

  --snapshot DIR     a snapshot to read, repeatable (snapshot)
  --seconds N        seconds of load per round and side (5)
  --rounds N         rounds per kind, alternating the sides; the median is kept (3)
  --connections N    connections of the load generator (8)
  --generator NAME   wrk, autocannon or auto (auto: wrk when installed)
  --against DIR      another checkout of the project, measured the same in the same rounds (an A/B)
  --out FILE         also write every figure as JSON`;

const values = parseCommandLine('mcp-bench', USAGE, {
  snapshot: { type: 'string', multiple: true, default: ['snapshot'] },
  seconds: { type: 'string', default: '5' },
  rounds: { type: 'string', default: '3' },
  connections: { type: 'string', default: '8' },
  generator: { type: 'string', default: 'auto' },
  against: { type: 'string' },
  out: { type: 'string' },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const connections = Number(values.connections);

const MCP_HEADERS = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
const queryRequest = (operation: string, input: unknown): LoadRequest => ({ method: 'POST', path: '/v1/query', body: JSON.stringify({ version: 1, operation, input }) });
const toolRequest = (name: string, args: Record<string, unknown>): LoadRequest => ({
  method: 'POST',
  path: '/mcp',
  body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  headers: MCP_HEADERS,
});

/** A search's members as a tool's arguments: the ones the envelope sets, without its nulls. */
function argsOf(input: SearchInput): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) if (v !== null && v !== undefined) out[k] = v;
  return out;
}

type Pair = { query: LoadRequest[]; tool: LoadRequest[] };

async function questions(dir: string): Promise<Record<string, Pair>> {
  const records = await sampleRecords(dir, 200);
  const searches = makeQueries(records, 200, 510).map((q) => q.input);
  const ids = records.filter((_, i) => i % Math.max(1, Math.floor(records.length / 200)) === 0).slice(0, 200).map((r) => r.kNumber);
  const COUNT = 10;
  return {
    search: {
      query: searches.map((input) => queryRequest('device-510k.search', input)),
      tool: searches.map((input) => toolRequest('search_clearances', argsOf(input))),
    },
    record: {
      query: ids.map((id) => queryRequest('device-510k.detail', { id })),
      tool: ids.map((id) => toolRequest('get_clearance', { id })),
    },
    // count_by asks for one value more than it shows (to say whether more follow): the same request is asked here.
    counts: {
      query: searches.map((s) => queryRequest('device-510k.search', { ...s, page: 1, pageSize: 1, facets: [{ field: 'productCode', size: COUNT + 1, order: 'count' }] })),
      tool: searches.map((s) => {
        const { page: _page, pageSize: _pageSize, ...filters } = argsOf(s);
        return toolRequest('count_by', { ...filters, field: 'productCode', size: COUNT });
      }),
    },
  };
}

/** Asks each request once, `connections` at a time, and fails on an answer that is not a 200. */
async function askEach(url: string, requests: readonly LoadRequest[], connections: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < requests.length) {
      const r = requests[next++]!;
      const response = await fetch(`${url}${r.path}`, { method: r.method, headers: { 'content-type': 'application/json', 'accept-encoding': 'identity', ...r.headers }, body: r.body ?? null });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`${r.path} answered ${response.status} to ${r.body}`);
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
}

/** A round's load, and the server's main thread's microseconds on a core per request in it (NaN where unknown). */
type Round = LoadResult & { cpuUsPerRequest: number };
type Side = { rps: number; p99Ms: number; p50Ms: number; cpuUsPerRequest: number; failures: number; rounds: Round[] };
type KindResult = { query: Side; tool: Side; throughputRatio: number; p99Ratio: number; cpuRatio: number; met: boolean };

const side = (results: Round[]): Side => ({
  rps: median(results.map((r) => r.rps)),
  p99Ms: median(results.map((r) => r.p99Ms)),
  p50Ms: median(results.map((r) => r.p50Ms)),
  cpuUsPerRequest: median(results.map((r) => r.cpuUsPerRequest)),
  failures: results.reduce((n, r) => n + r.failures, 0),
  rounds: results,
});

/** One round of load on `server`, with its main thread's time on a core over it. */
async function timedRound(server: RunningServer, requests: readonly LoadRequest[], tag: string): Promise<Round> {
  const before = mainThreadTimes(server.pid);
  const result = await runLoad(generator, server.url, requests, { connections, seconds, tmp, tag });
  const after = mainThreadTimes(server.pid);
  const cpuUsPerRequest = before && after && result.requests > 0 ? ((after.runMs - before.runMs) * 1000) / result.requests : Number.NaN;
  return { ...result, cpuUsPerRequest };
}

const checkouts = [{ label: 'this checkout', root: ROOT }, ...(values.against ? [{ label: resolve(values.against), root: resolve(values.against) }] : [])];

const { generator, note } = await findGenerator(values.generator as 'wrk' | 'autocannon' | 'auto', ROOT);
if (note) console.error(note);
const tmp = await mkdtemp(join(tmpdir(), 'device-510k-mcp-bench-'));
const loadAtStart = loadavg();
const report: { snapshot: string; records: number; checkout: string; kinds: Record<string, KindResult> }[] = [];
try {
  for (const snapshot of values.snapshot) {
    const dir = resolve(snapshot);
    const manifest = Manifest.parse(JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')));
    const label = `${manifest.counts.records.toLocaleString('en-US')} records`;
    const pairs = await questions(dir);
    const servers: RunningServer[] = [];
    const kinds: Record<string, KindResult>[] = checkouts.map(() => ({}));
    try {
      for (const checkout of checkouts) servers.push(await startServer(checkout.root, dir, tmp));
      for (const [kind, pair] of Object.entries(pairs)) {
        // A warm-up of each side: every question asked once (the search index's sections read, and each side's
        // answers kept as the question asked again finds them), then a short load, before anything is timed. A warm-up
        // of a few seconds alone leaves questions unasked on a loaded machine, and the rounds then time first answers.
        for (const server of servers) {
          for (const which of ['query', 'tool'] as const) {
            await askEach(server.url, pair[which], connections);
            await runLoad(generator, server.url, pair[which], { connections, seconds: 2, tmp, tag: `warm-${kind}-${which}` });
          }
        }
        const results = servers.map((): Record<'query' | 'tool', Round[]> => ({ query: [], tool: [] }));
        for (let round = 0; round < rounds; round++) {
          // Alternating which side goes first, so neither always runs on the warmer machine.
          const order = round % 2 === 0 ? (['query', 'tool'] as const) : (['tool', 'query'] as const);
          for (const [i, server] of servers.entries()) {
            for (const which of order) results[i]![which].push(await timedRound(server, pair[which], `${kind}-${which}-${round}-${i}`));
          }
        }
        for (const [i, checkout] of checkouts.entries()) {
          const q = side(results[i]!.query);
          const t = side(results[i]!.tool);
          const throughputRatio = t.rps / q.rps;
          const p99Ratio = t.p99Ms / q.p99Ms;
          const cpuRatio = t.cpuUsPerRequest / q.cpuUsPerRequest;
          kinds[i]![kind] = { query: q, tool: t, throughputRatio, p99Ratio, cpuRatio, met: throughputRatio >= 0.8 && p99Ratio <= 1.25 };
          const who = checkouts.length > 1 ? ` (${checkout.label})` : '';
          console.error(`${label} ${kind}${who}: /v1/query ${rps(q.rps)} req/s p99 ${ms(q.p99Ms)}; tool ${rps(t.rps)} req/s p99 ${ms(t.p99Ms)}`);
        }
      }
    } finally {
      for (const server of servers) await server.stop();
    }
    for (const [i, checkout] of checkouts.entries()) report.push({ snapshot: dir, records: manifest.counts.records, checkout: checkout.label, kinds: kinds[i]! });
  }
} finally {
  await rm(tmp, { recursive: true, force: true });
}

console.log(`\nMCP tool call vs /v1/query: ${generator.name}, ${connections} connections, ${rounds} rounds of ${seconds} s a side (median).`);
console.log(`Load average ${loadAtStart.map((x) => x.toFixed(2)).join(' ')} at the start, ${loadavg().map((x) => x.toFixed(2)).join(' ')} at the end.\n`);
const cpu = (us: number) => (Number.isFinite(us) ? `${us.toFixed(0)} us` : 'n/a');
const byCheckout = checkouts.length > 1;
console.log(`${byCheckout ? '| checkout ' : ''}| records | question | /v1/query req/s | tool req/s | throughput (target >= 0.8x) | /v1/query p99 | tool p99 | p99 (target <= 1.25x) | CPU a request, /v1/query / tool | CPU, tool / query | failures |`);
console.log(`${byCheckout ? '|---' : ''}|---|---|---|---|---|---|---|---|---|---|---|`);
for (const size of report) {
  for (const [kind, k] of Object.entries(size.kinds)) {
    console.log(
      `${byCheckout ? `| ${size.checkout} ` : ''}| ${size.records.toLocaleString('en-US')} | ${kind} | ${rps(k.query.rps)} | ${rps(k.tool.rps)} | ${k.throughputRatio.toFixed(2)}x ${k.throughputRatio >= 0.8 ? 'met' : 'missed'} | ${ms(k.query.p99Ms)} | ${ms(k.tool.p99Ms)} | ${k.p99Ratio.toFixed(2)}x ${k.p99Ratio <= 1.25 ? 'met' : 'missed'} | ${cpu(k.query.cpuUsPerRequest)} / ${cpu(k.tool.cpuUsPerRequest)} | ${Number.isFinite(k.cpuRatio) ? `${k.cpuRatio.toFixed(2)}x` : 'n/a'} | ${k.query.failures + k.tool.failures} |`,
    );
  }
}
if (values.out) await writeFile(values.out, `${JSON.stringify({ generator: generator.name, connections, seconds, rounds, loadAtStart, loadAtEnd: loadavg(), sizes: report }, null, 2)}\n`);
