import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { prepareAssets } from '../../build/worker/assets.ts';
import { bundleWorker } from '../../build/worker/bundle.ts';
import { startWorker, type WorkerTarget } from '../../build/worker/local.ts';
import type { LoadRequest } from './load.ts';
import { checkTarget, type LookupTarget } from './lookups.ts';
import { measureSides, type LoadSettings, type SideFigures } from './measure-lookups.ts';
import { startNginx, type Nginx } from './nginx.ts';
import { freePort, memoryOf, sampleMemory } from './procs.ts';
import { percentile } from './stats.ts';
import { BENCH_CURSOR_SECRET, startServer, type RunningServer } from './server.ts';

/**
 * The API as a Cloudflare Worker under workerd, side by side with the Node server and nginx in the same rounds:
 * detail, meta and catalog (nginx serving the same precomputed files) and search (Node only: nginx has none).
 *
 * workerd runs as `npm run worker` runs it: Miniflare from node_modules (no account, no network), the snapshot and
 * the page in the Worker's static assets (the ASSETS binding; wrangler.toml's `[assets]`), copied once before the
 * start so that the start is timed apart from the copy. Memory is the workerd process's resident set (Miniflare's
 * entry Worker and the assets server included) and, through workerd's V8 inspector, our isolate's own: its V8 heap
 * and its ArrayBuffers (Runtime.getHeapUsage, after a full collection), what the platform's 128 MB an isolate bounds.
 */
/** The isolate's V8 heap (used, of total) and its ArrayBuffers' backing stores, from Runtime.getHeapUsage. */
export type IsolateMemory = {
  usedBytes: number;
  totalBytes: number;
  arrayBufferBytes: number;
  /** The same read before the collection: what the isolate held with its garbage. */
  uncollected: { usedBytes: number; arrayBufferBytes: number };
};

/** Latency of requests sent one at a time on one connection (what one request costs, with no queue in front of it). */
export type OneAtATime = { requests: number; p50Ms: number; p99Ms: number };

export type WorkerSideFigures = {
  name: string;
  worker: SideFigures;
  node: SideFigures;
  nginx: SideFigures | null;
  oneAtATime: { worker: OneAtATime; node: OneAtATime };
};

export type WorkerFigures = {
  storage: 'assets';
  bundle: { bytes: number; gzipBytes: number };
  /** Milliseconds from starting workerd (assets already in place) to its listening, its first meta answer, its first search answer. */
  start: { listeningMs: number; firstAnswerMs: number; firstSearchMs: number };
  memory: {
    /** The workerd process once it listens, before any request. */
    idleRssBytes: number;
    afterFirstAnswerRssBytes: number;
    afterFirstSearchRssBytes: number;
    /** The highest resident memory sampled while the load rounds ran. */
    underLoadRssBytes: number;
    /** The isolate's memory after the first search and after the load; null when the inspector is out of reach. */
    heapAfterFirstSearch: IsolateMemory | null;
    heapAfterLoad: IsolateMemory | null;
  };
  sides: WorkerSideFigures[];
};

/** What the size's measurement already prepared: the lookups (nginx's counterparts with them) and the search queries. */
export type WorkerSectionInput = {
  root: string;
  snapshotPath: string;
  snapshotDir: string;
  targets: readonly LookupTarget[];
  searchRequests: readonly LoadRequest[];
  settings: LoadSettings;
  nginxBinary: string | null;
  tmp: string;
  label: string;
  log: (line: string) => void;
};

const MEASURED = new Set(['detail', 'meta', 'catalog']);
const ONE_AT_A_TIME = 100;

/**
 * `n` of the requests, one after another. Under load an isolate interleaves its concurrent requests, so with 50
 * connections every search of a round can finish after the round ends; this is the cost of one.
 */
async function oneAtATime(url: string, requests: readonly LoadRequest[], n: number): Promise<OneAtATime> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = requests[Math.floor((i * requests.length) / n) % requests.length]!;
    const t = performance.now();
    const res = await fetch(`${url}${r.path}`, {
      method: r.method,
      ...(r.body === undefined ? {} : { body: r.body, headers: { 'content-type': 'application/json' } }),
      signal: AbortSignal.timeout(60_000),
    });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${r.method} ${r.path} answered ${res.status}`);
    times.push(performance.now() - t);
  }
  return { requests: n, p50Ms: percentile(times, 50), p99Ms: percentile(times, 99) };
}

/** The workerd process Miniflare started for us: a child of this process named workerd. */
export async function workerdPid(): Promise<number> {
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    const [, comm, rest] = /^\d+ \((.*?)\) (.*)$/.exec(stat.trim()) ?? [];
    if (comm?.startsWith('workerd') && Number(rest?.split(' ')[1]) === process.pid) return Number(name);
  }
  throw new Error('no workerd child process');
}

export type Cdp = { send: (method: string, params?: object, timeoutMs?: number) => Promise<unknown>; close: () => void };

/** A Chrome DevTools Protocol session with the isolate of our Worker, through workerd's inspector. */
export async function inspect(port: number): Promise<Cdp> {
  const list = (await (await fetch(`http://localhost:${port}/json/list`, { signal: AbortSignal.timeout(5000) })).json()) as { id?: string; title?: string; webSocketDebuggerUrl?: string }[];
  // Miniflare's own Workers are core:entry, assets:*, cache:* and so on; the user's Worker, unnamed, is core:user:.
  const ours = list.find((t) => t.webSocketDebuggerUrl && t.id?.startsWith('core:user:'));
  if (!ours?.webSocketDebuggerUrl) throw new Error(`no inspectable Worker among ${JSON.stringify(list.map((t) => t.title ?? t.id))}`);
  const { WebSocket } = await import('ws');
  const socket = new WebSocket(ours.webSocketDebuggerUrl);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  let next = 1;
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  socket.on('message', (data: Buffer) => {
    const message = JSON.parse(data.toString('utf8')) as { id?: number; result?: unknown; error?: { message: string } };
    const w = message.id === undefined ? undefined : waiting.get(message.id);
    if (!w) return;
    waiting.delete(message.id!);
    if (message.error) w.reject(new Error(message.error.message));
    else w.resolve(message.result);
  });
  return {
    send: (method, params = {}, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        const id = next++;
        waiting.set(id, { resolve, reject });
        socket.send(JSON.stringify({ id, method, params }));
        setTimeout(() => waiting.has(id) && (waiting.delete(id), reject(new Error(`${method}: no answer from the inspector`))), timeoutMs);
      }),
    close: () => socket.close(),
  };
}

/**
 * The isolate's memory, after a full collection (forced by a heap snapshot), and as it was just before it: V8's heap
 * (used, of total) and the backing stores of its ArrayBuffers (the snapshot's bytes and the search index live there, outside the heap). Null, with the
 * reason logged, when it cannot be read.
 */
export async function heapOf(port: number, log: (line: string) => void): Promise<IsolateMemory | null> {
  let cdp: Cdp | null = null;
  try {
    cdp = await inspect(port);
    const before = (await cdp.send('Runtime.getHeapUsage')) as { usedSize: number; backingStorageSize?: number };
    // workerd's inspector never answers HeapProfiler.collectGarbage (V8 posts the collection as a task the isolate
    // does not run), so that figure held garbage; a heap snapshot collects garbage first, in place. Its chunks are
    // events, not kept. Twice, a moment apart: ArrayBuffers whose wrappers the first collection freed are released
    // after it.
    for (let i = 0; i < 2; i++) {
      await cdp.send('HeapProfiler.takeHeapSnapshot', { reportProgress: false }, 120_000);
      await new Promise((r) => setTimeout(r, 500));
    }
    const usage = (await cdp.send('Runtime.getHeapUsage')) as { usedSize: number; totalSize: number; backingStorageSize?: number };
    return {
      usedBytes: usage.usedSize,
      totalBytes: usage.totalSize,
      arrayBufferBytes: usage.backingStorageSize ?? Number.NaN,
      uncollected: { usedBytes: before.usedSize, arrayBufferBytes: before.backingStorageSize ?? Number.NaN },
    };
  } catch (err) {
    log(`the isolate's heap could not be read: ${(err as Error).message}`);
    return null;
  } finally {
    cdp?.close();
  }
}

const query = (operation: string, input: unknown) => ({ version: 1, operation: `device-510k.${operation}`, input });

async function answer(url: string, body: unknown): Promise<void> {
  const res = await fetch(`${url}/v1/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(120_000) });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`the Worker answered ${res.status}: ${text.slice(0, 300)}`);
}

export async function measureWorker(input: WorkerSectionInput): Promise<WorkerFigures> {
  const { settings, log, label } = input;
  const bundle = await bundleWorker();
  const assetsDir = join(await mkdtemp(join(input.tmp, 'worker-assets-')), 'assets');
  log(`${label}: Worker: copying the snapshot into its static assets`);
  await prepareAssets({ snapshotPath: input.snapshotPath, publicDir: join(input.root, 'public'), out: assetsDir });

  let worker: WorkerTarget | null = null;
  let node: RunningServer | null = null;
  let nginx: Nginx | null = null;
  try {
    const inspectorPort = await freePort();
    const t0 = performance.now();
    worker = await startWorker({ storage: 'assets', assetsDir, assetsReady: true, inspectorPort, vars: { CURSOR_SECRET: BENCH_CURSOR_SECRET } });
    const listeningMs = performance.now() - t0;
    const pid = await workerdPid();
    const idleRssBytes = memoryOf(pid)?.rss ?? Number.NaN;
    await answer(worker.url, query('meta', {}));
    const firstAnswerMs = performance.now() - t0;
    const afterFirstAnswerRssBytes = memoryOf(pid)?.rss ?? Number.NaN;
    const firstSearch = input.searchRequests[0];
    if (firstSearch?.body) await answer(worker.url, JSON.parse(firstSearch.body));
    const firstSearchMs = performance.now() - t0;
    const afterFirstSearchRssBytes = memoryOf(pid)?.rss ?? Number.NaN;
    const heapAfterFirstSearch = await heapOf(inspectorPort, log);
    log(`${label}: Worker listening after ${Math.round(listeningMs)} ms, first answer after ${Math.round(firstAnswerMs)} ms, first search after ${Math.round(firstSearchMs)} ms`);

    node = await startServer(input.root, input.snapshotPath, input.tmp);
    if (input.nginxBinary) nginx = await startNginx(input.nginxBinary, input.tmp, input.snapshotDir, 'meta.json');
    const lookups = input.targets.filter((t) => MEASURED.has(t.name));
    for (const t of lookups) {
      await checkTarget(worker.url, t.ours, `${label} ${t.name} (Worker)`);
      await checkTarget(node.url, t.ours, `${label} ${t.name} (Node)`);
    }
    await checkTarget(worker.url, input.searchRequests.slice(0, 5), `${label} search (Worker)`);

    const memory = sampleMemory(pid);
    const sides: WorkerSideFigures[] = [];
    const kinds: { name: string; requests: readonly LoadRequest[]; nginx: readonly LoadRequest[] | null }[] = [
      ...lookups.map((t) => ({ name: t.name, requests: t.ours, nginx: t.nginx })),
      { name: 'search', requests: input.searchRequests, nginx: null },
    ];
    for (const k of kinds) {
      log(`${label}: Worker, Node${k.nginx && nginx ? ' and nginx' : ''}: ${k.name}, ${k.requests.length.toLocaleString('en-US')} distinct requests`);
      const tag = k.name.replace(/\W+/g, '-');
      const list = [
        { url: worker.url, requests: k.requests, tag: `worker-${tag}` },
        { url: node.url, requests: k.requests, tag: `node-${tag}` },
        ...(k.nginx && nginx ? [{ url: nginx.url, requests: k.nginx, tag: `nginx-${tag}` }] : []),
      ];
      const [w, n, x] = await measureSides(list, settings);
      const one = { worker: await oneAtATime(worker.url, k.requests, ONE_AT_A_TIME), node: await oneAtATime(node.url, k.requests, ONE_AT_A_TIME) };
      sides.push({ name: k.name, worker: w!, node: n!, nginx: x ?? null, oneAtATime: one });
    }
    const underLoadRssBytes = memory.stop();
    const heapAfterLoad = await heapOf(inspectorPort, log);
    return {
      storage: 'assets',
      bundle: { bytes: bundle.bytes, gzipBytes: bundle.gzipBytes },
      start: { listeningMs, firstAnswerMs, firstSearchMs },
      memory: { idleRssBytes, afterFirstAnswerRssBytes, afterFirstSearchRssBytes, underLoadRssBytes, heapAfterFirstSearch, heapAfterLoad },
      sides,
    };
  } finally {
    await nginx?.stop();
    await node?.stop();
    await worker?.close();
    await rm(assetsDir, { recursive: true, force: true });
  }
}
