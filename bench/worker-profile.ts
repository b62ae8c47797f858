/**
 * Where a cold Worker's first requests spend their time: starts workerd over a snapshot in static assets, profiles
 * every isolate workerd runs (ours, and Miniflare's assets workers) with V8's sampling profiler through workerd's
 * inspector while it answers its first meta, detail and search, and prints each isolate's functions with the most
 * self time for each request.
 *
 *   npx tsx bench/worker-profile.ts --snapshot DIR [--assets DIR] [--top 15]
 *
 * A script, not a test: it prints figures and asserts nothing.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { prepareAssets } from '../build/worker/assets.ts';
import { startWorker } from '../build/worker/local.ts';
import { parseCommandLine } from '../src/cli/args.ts';
import { sampleRecords } from './lib/queries.ts';
import { freePort } from './lib/procs.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const USAGE = `Usage: npx tsx bench/worker-profile.ts --snapshot DIR [--assets DIR] [--top N]

  --snapshot DIR   the snapshot (only read)
  --assets DIR     an assets folder prepareAssets already filled from it (kept); default: a fresh temporary copy
  --top N          functions listed per isolate and request (15)`;
const values = parseCommandLine('worker-profile', USAGE, {
  snapshot: { type: 'string', default: 'snapshot' },
  assets: { type: 'string' },
  top: { type: 'string', default: '15' },
});
const dir = resolve(values.snapshot);
const top = Number(values.top);

type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number };
type Profile = { nodes: Node[]; startTime: number; endTime: number; samples?: number[]; timeDeltas?: number[] };

async function session(url: string) {
  const { WebSocket } = await import('ws');
  const socket = new WebSocket(url);
  await new Promise<void>((ok, fail) => (socket.once('open', () => ok()), socket.once('error', fail)));
  let next = 1;
  const waiting = new Map<number, (v: unknown) => void>();
  socket.on('message', (data: Buffer) => {
    const m = JSON.parse(data.toString('utf8')) as { id?: number; result?: unknown; error?: unknown };
    if (m.id !== undefined) waiting.get(m.id)?.(m.result ?? m.error), waiting.delete(m.id);
  });
  return {
    send: (method: string, params: object = {}) =>
      new Promise<unknown>((ok) => {
        const id = next++;
        waiting.set(id, ok);
        socket.send(JSON.stringify({ id, method, params }));
      }),
    close: () => socket.close(),
  };
}

function report(name: string, profile: Profile): void {
  const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  let total = 0;
  for (let i = 0; i < samples.length; i++) {
    const n = byNode.get(samples[i]!)!;
    const us = deltas[i + 1] ?? 0;
    const f = n.callFrame;
    if (f.functionName === '(idle)' || f.functionName === '(program)') continue;
    const key = `${f.functionName || '(anonymous)'} ${f.url.split('/').pop()}:${f.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + us);
    total += us;
  }
  if (total < 1000) return;
  console.log(`  ${name}: ${(total / 1000).toFixed(0)} ms of JavaScript`);
  for (const [key, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`    ${(us / 1000).toFixed(1).padStart(8)} ms  ${key}`);
}

const tmp = await mkdtemp(join(tmpdir(), 'device-510k-worker-profile-'));
try {
  const assetsDir = values.assets ? resolve(values.assets) : join(tmp, 'assets');
  if (!values.assets || !existsSync(assetsDir)) await prepareAssets({ snapshotPath: dir, publicDir: join(ROOT, 'public'), out: assetsDir });
  const records = await sampleRecords(dir, 10);
  const inspectorPort = await freePort();
  const t0 = performance.now();
  const worker = await startWorker({ storage: 'assets', assetsDir, assetsReady: true, inspectorPort });
  console.log(`listening after ${(performance.now() - t0).toFixed(0)} ms (load ${loadavg()[0]!.toFixed(1)})`);
  try {
    const list = (await (await fetch(`http://localhost:${inspectorPort}/json/list`)).json()) as { id: string; webSocketDebuggerUrl?: string }[];
    const sessions = await Promise.all(list.filter((t) => t.webSocketDebuggerUrl).map(async (t) => ({ id: t.id, s: await session(t.webSocketDebuggerUrl!) })));
    const body = (operation: string, input: unknown) => JSON.stringify({ version: 1, operation: `device-510k.${operation}`, input });
    const steps = [
      ['meta', body('meta', {})],
      ['detail', body('detail', { id: records[0]!.kNumber })],
      ['search', body('search', { query: 'catheter', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10 })],
      ['search pump', body('search', { query: 'pump', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10 })],
    ] as const;
    for (const [name, text] of steps) {
      for (const { s } of sessions) {
        await s.send('Profiler.enable');
        await s.send('Profiler.setSamplingInterval', { interval: 200 });
        await s.send('Profiler.start');
      }
      const t = performance.now();
      const res = await fetch(`${worker.url}/v1/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text });
      await res.arrayBuffer();
      console.log(`first ${name}: ${res.status} in ${(performance.now() - t).toFixed(0)} ms (load ${loadavg()[0]!.toFixed(1)})`);
      for (const { id, s } of sessions) {
        const { profile } = (await s.send('Profiler.stop')) as { profile: Profile };
        if (profile) report(id, profile);
      }
    }
    for (const { s } of sessions) s.close();
  } finally {
    await worker.close();
  }
} finally {
  await rm(tmp, { recursive: true, force: true });
}
