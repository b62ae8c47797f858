/**
 * Profiles the real server under load: starts `src/main.ts` with `node --cpu-prof` over a snapshot, drives one kind of
 * request with the benchmark's load generator, stops the server (SIGTERM, so the profile is written), and prints the
 * functions with the most self time, grouped by source file. Read it before changing the request path for speed.
 *
 *   npx tsx bench/profile.ts --snapshot DIR [--operation detail|detail-hot|classification|meta|catalog|search]
 *                            [--get PATH] [--mcp] [--seconds 10] [--connections 50] [--top 25] [--out DIR]
 *
 * A script, not a test: it prints figures and asserts nothing.
 */
import { closeSync, openSync } from 'node:fs';
import { readdir, readFile, mkdir } from 'node:fs/promises';
import { join, resolve, dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCommandLine, usageFailure } from '../src/cli/args.ts';
import { findGenerator, runLoad, type LoadRequest } from './lib/load.ts';
import { lookupTargets, type LookupOperation } from './lib/lookups.ts';
import { stop } from './lib/procs.ts';
import { makeQueries, sampleRecords } from './lib/queries.ts';
import { BENCH_CURSOR_SECRET, startSourceServer } from './lib/server.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const KINDS = ['detail', 'detail-hot', 'classification', 'meta', 'catalog', 'search'] as const;
type Kind = (typeof KINDS)[number];

const USAGE = `Usage: npx tsx bench/profile.ts --snapshot DIR [options]

  --snapshot DIR     the snapshot to serve (a link or a directory)
  --operation NAME   ${KINDS.join(', ')} (detail)
  --get PATH         instead of an operation, GET this one path and query string (an openFDA-style URL:
                     '/device/510k.json?search=product_code:DQY&limit=10')
  --mcp              the same questions as MCP tool calls (POST /mcp): detail as get_clearance, classification
                     as get_classification, search as search_clearances
  --seconds N        seconds of load (10)
  --connections N    connections of the load generator (50)
  --top N            functions to list (25)
  --out DIR          where the .cpuprofile goes (bench/out/profile)`;

const values = parseCommandLine('profile', USAGE, {
  snapshot: { type: 'string' },
  operation: { type: 'string', default: 'detail' },
  get: { type: 'string' },
  mcp: { type: 'boolean', default: false },
  seconds: { type: 'string', default: '10' },
  connections: { type: 'string', default: '50' },
  top: { type: 'string', default: '25' },
  out: { type: 'string', default: join(ROOT, 'bench/out/profile') },
});
const kind = values.operation as Kind;
if (!values.snapshot) usageFailure('profile', new Error('Expected `--snapshot` to name the snapshot to serve'));
if (!KINDS.includes(kind)) usageFailure('profile', new Error(`Expected \`--operation\` to be one of ${KINDS.join(', ')}, got "${values.operation}"`));
const snapshot = resolve(values.snapshot);
const outDir = resolve(values.out);
await mkdir(outDir, { recursive: true });

async function requestsFor(k: Kind): Promise<LoadRequest[]> {
  if (k === 'search') {
    const records = await sampleRecords(snapshot, 2000);
    return makeQueries(records, 400, 510).map((q) => ({
      method: 'POST',
      path: '/v1/query',
      body: JSON.stringify({ version: 1, operation: 'device-510k.search', input: q.input }),
    }));
  }
  const name: LookupOperation | 'detail, hot' = k === 'detail-hot' ? 'detail, hot' : k;
  const target = (await lookupTargets(snapshot, 20_000)).find((t) => t.name === name);
  if (!target) throw new Error(`no requests for ${k}`);
  return target.ours;
}

if (values.get !== undefined && !values.get.startsWith('/')) usageFailure('profile', new Error(`Expected \`--get\` to be a path starting with /, got "${values.get}"`));
const TOOLS: Partial<Record<string, string>> = { 'device-510k.detail': 'get_clearance', 'device-510k.classification': 'get_classification', 'device-510k.search': 'search_clearances' };

/** A /v1/query request as the tool call that asks the same question (the envelope's nulls left out, as a model would). */
function asToolCall(request: LoadRequest): LoadRequest {
  const { operation, input } = JSON.parse(request.body ?? '{}') as { operation: string; input: Record<string, unknown> };
  const name = TOOLS[operation];
  if (!name) usageFailure('profile', new Error(`Expected \`--operation\` with --mcp to be detail, detail-hot, classification or search, got "${kind}"`));
  const args = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== null && v !== undefined));
  return {
    method: 'POST',
    path: '/mcp',
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
  };
}

const asked: LoadRequest[] = values.get !== undefined ? [{ method: 'GET', path: values.get }] : await requestsFor(kind);
const requests = values.mcp ? asked.map(asToolCall) : asked;
const before = new Set(await readdir(outDir));
// The request log goes to a file, as in a deployment and in the benchmark.
const log = openSync(join(outDir, 'server.log'), 'w');
const { url, child } = await startSourceServer(ROOT, {
  nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${outDir}`],
  env: { SNAPSHOT_PATH: snapshot, SYNC_STATE_PATH: join(outDir, 'no-sync-state.json'), CURSOR_SECRET: BENCH_CURSOR_SECRET, NODE_ENV: 'production' },
  stdio: ['ignore', log, 'inherit'],
}).finally(() => closeSync(log));
const { generator } = await findGenerator('auto', ROOT);
const seconds = Number(values.seconds);
const result = await runLoad(generator, url, requests, { connections: Number(values.connections), seconds, tmp: outDir, tag: `profile-${kind}` });
await stop(child, 20_000);
console.log(`${values.get ?? kind}${values.mcp ? ' as tool calls' : ''}: ${Math.round(result.rps)} req/s, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms, ${result.failures} failures (${generator.name}, ${requests.length} distinct requests)`);

const written = (await readdir(outDir)).filter((f) => f.endsWith('.cpuprofile') && !before.has(f));
if (written.length === 0) throw new Error('the server wrote no profile');
type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number };
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[] };
// tsx runs its module loader on a thread of its own, which writes a profile too: keep the busiest thread's.
const busy = (p: Profile) => {
  const idle = new Set(p.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
  return p.samples.filter((id) => !idle.has(id)).length;
};
let file = '';
let profile: Profile = { nodes: [], samples: [], timeDeltas: [] };
for (const name of written) {
  const candidate = JSON.parse(await readFile(join(outDir, name), 'utf8')) as Profile;
  if (busy(candidate) >= busy(profile)) [file, profile] = [join(outDir, name), candidate];
}
const total = profile.samples.length;
const byFunction = new Map<string, number>();
const byFile = new Map<string, number>();
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
for (const id of profile.samples) {
  const n = nodes.get(id);
  if (!n) continue;
  const raw = n.callFrame.url;
  const where = !raw ? '(native)' : raw.startsWith('file:') ? relative(ROOT, fileURLToPath(raw)) : raw.startsWith('/') ? relative(ROOT, raw) : raw;
  const fn = `${n.callFrame.functionName || '(anonymous)'} ${where}:${n.callFrame.lineNumber + 1}`;
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + 1);
  const group = where.startsWith('node_modules/') ? where.split('/').slice(0, where.startsWith('node_modules/@') ? 3 : 2).join('/') : where.startsWith('node:') ? 'node: internals' : where;
  byFile.set(group, (byFile.get(group) ?? 0) + 1);
}
const pct = (n: number) => `${((100 * n) / total).toFixed(1).padStart(5)}%`;
const top = Number(values.top);
console.log(`\nself time by function (${total} samples; ${file}):`);
for (const [fn, n] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(n)}  ${fn}`);
console.log('\nself time by file:');
for (const [f, n] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(n)}  ${f}`);
