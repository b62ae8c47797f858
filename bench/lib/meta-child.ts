/**
 * A newcomer asking for `meta`, one request after another, in a process of its own: its figures are then the
 * server's, not delayed by the measuring process's own work (decoding and parsing the large answers of the case it
 * runs meanwhile). Answers the parent's lines (LineChild):
 *   {"cmd":"start","url":URL,"pid":PID} → starts asking (at once)
 *   {"cmd":"stop"}                      → stops, and the figures of the requests asked since the start
 *
 *   node --import tsx bench/lib/meta-child.ts
 */
import { mainThreadTimes, serveLines } from './procs.ts';

/** `failed`: metas that got no answer (their connection closed or refused); the others' times are in `metas`. */
export type MetaFigures = { metas: number[]; failed: number; slowest: { ms: number; runMs: number; waitMs: number }; metaRunMax: number };

const META = JSON.stringify({ version: 1, operation: 'device-510k.meta', input: {} });
let stopping = false;
let running: Promise<MetaFigures> | null = null;

async function ask(url: string, pid: number): Promise<MetaFigures> {
  const metas: number[] = [];
  let failed = 0;
  let slowest = { ms: -1, runMs: Number.NaN, waitMs: Number.NaN };
  let metaRunMax = Number.NaN;
  const started = performance.now();
  // Bounded: at most 2,000 requests, and none past 120 s.
  while (!stopping && metas.length + failed < 2000 && performance.now() - started < 120_000) {
    const before = mainThreadTimes(pid);
    const t = performance.now();
    try {
      const res = await fetch(`${url}/v1/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: META, signal: AbortSignal.timeout(120_000) });
      await res.arrayBuffer();
    } catch {
      // Closed, refused or timed out: counted, and the next one asked.
      failed++;
      continue;
    }
    const ms = performance.now() - t;
    const after = mainThreadTimes(pid);
    metas.push(ms);
    const runMs = before && after ? after.runMs - before.runMs : Number.NaN;
    if (Number.isFinite(runMs) && !(metaRunMax >= runMs)) metaRunMax = runMs;
    if (ms > slowest.ms) slowest = { ms, runMs, waitMs: before && after ? after.waitMs - before.waitMs : Number.NaN };
  }
  return { metas, failed, slowest, metaRunMax };
}

serveLines(async (message) => {
  const m = message as { cmd: 'start'; url: string; pid: number } | { cmd: 'stop' };
  if (m.cmd === 'start') {
    stopping = false;
    running = ask(m.url, m.pid);
    return { ok: true };
  }
  stopping = true;
  const figures = await running;
  running = null;
  return figures;
});
