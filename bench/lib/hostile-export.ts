import { connect, type Socket } from 'node:net';
import { mainThreadTimes, memoryOf, sampleMemory } from './procs.ts';
import type { RunningServer } from './server.ts';

/**
 * Exports whose clients read the answer's first bytes and then never read again (bench/hostile-export.ts and the
 * hostile section of `npm run bench`): `count` of them held open for `holdMs` while `meta` is asked every 100 ms.
 */
export type NeverReadingFigures = {
  clients: number;
  holdMs: number;
  /** How many exports got each status: 200, 503, "no answer yet", "closed". */
  statuses: Record<string, number>;
  stillOpen: number;
  rssBeforeBytes: number;
  peakRssBytes: number;
  /** meta on the quiet server just before, then during the round. */
  quietMetaP50Ms: number;
  metaP50Ms: number;
  metaP95Ms: number;
  metaMaxMs: number;
  metaCount: number;
  /**
   * From the scheduler's counts of the server's main thread (Linux; NaN elsewhere): while the slowest meta was out,
   * the milliseconds it ran (the server's own work) and waited for a core (other work on the machine); and the most it
   * ran while any one meta was out.
   */
  slowestMetaRunMs: number;
  slowestMetaWaitMs: number;
  metaRunMaxMs: number;
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

/** POST meta, its latency in milliseconds. */
export async function metaLatency(url: string): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`${url}/v1/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ version: 1, operation: 'device-510k.meta', input: {} }),
    signal: AbortSignal.timeout(60_000),
  });
  await res.arrayBuffer();
  return performance.now() - t0;
}

/** An export whose client reads the status line and then never reads again. Resolves with the status. */
function neverReading(url: string, format: string): { socket: Socket; status: Promise<number> } {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  const status = new Promise<number>((resolve) => {
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(chunk.toString('latin1'))?.[1] ?? 0));
    });
    socket.once('error', () => resolve(-1));
    socket.once('close', () => resolve(-1));
  });
  socket.write(`GET /v1/export?format=${format} HTTP/1.1\r\nHost: bench\r\nAccept-Encoding: identity\r\n\r\n`);
  return { socket, status };
}

export async function neverReadingExports(server: RunningServer, count: number, holdMs: number): Promise<NeverReadingFigures> {
  // Let the server settle back after what ran before.
  await sleep(1000);
  const before = memoryOf(server.pid)?.rss ?? Number.NaN;
  const quiet: number[] = [];
  for (let i = 0; i < 5; i++) quiet.push(await metaLatency(server.url));
  const memory = sampleMemory(server.pid, 50);
  const clients = Array.from({ length: count }, (_, i) => neverReading(server.url, i % 2 ? 'csv' : 'ndjson'));
  const latencies: number[] = [];
  let slowest = { ms: -1, runMs: Number.NaN, waitMs: Number.NaN };
  let runMax = Number.NaN;
  try {
    const ends = Date.now() + holdMs;
    while (Date.now() < ends) {
      const t0 = mainThreadTimes(server.pid);
      const ms = await metaLatency(server.url);
      const t1 = mainThreadTimes(server.pid);
      latencies.push(ms);
      const runMs = t0 && t1 ? t1.runMs - t0.runMs : Number.NaN;
      if (Number.isFinite(runMs) && !(runMax >= runMs)) runMax = runMs;
      if (ms > slowest.ms) slowest = { ms, runMs, waitMs: t0 && t1 ? t1.waitMs - t0.waitMs : Number.NaN };
      await sleep(100);
    }
    const statuses = await Promise.all(clients.map((c) => Promise.race([c.status, sleep(1000).then(() => 0)])));
    const peak = memory.stop();
    const stillOpen = clients.filter((c) => !c.socket.destroyed && !c.socket.readableEnded).length;
    latencies.sort((a, b) => a - b);
    const tally: Record<string, number> = {};
    for (const s of statuses) {
      const key = s === 0 ? 'no answer yet' : s === -1 ? 'closed' : String(s);
      tally[key] = (tally[key] ?? 0) + 1;
    }
    return {
      clients: count,
      holdMs,
      statuses: tally,
      stillOpen,
      rssBeforeBytes: before,
      peakRssBytes: peak,
      quietMetaP50Ms: quantile(quiet.sort((a, b) => a - b), 0.5),
      metaP50Ms: quantile(latencies, 0.5),
      metaP95Ms: quantile(latencies, 0.95),
      metaMaxMs: latencies.at(-1) ?? Number.NaN,
      metaCount: latencies.length,
      slowestMetaRunMs: slowest.runMs,
      slowestMetaWaitMs: slowest.waitMs,
      metaRunMaxMs: runMax,
    };
  } finally {
    memory.stop();
    for (const c of clients) c.socket.destroy();
  }
}
