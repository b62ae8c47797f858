import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What a server process's memory is made of, as Node counts it: a module preloaded into the server (`--import`) that
 * appends `process.memoryUsage()` to a file every `everyMs`, read back by the bench. Nothing is added to the server
 * itself and no endpoint is opened: the probe exists only in the process a bench starts with it.
 */
export type MemorySample = {
  at: number;
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  /** Bytes written to the process's sockets that wait in their streams, not yet taken by the kernel; and the sockets. */
  socketWritable: number;
  sockets: number;
  /** The kernel's TCP buffers, every socket of the machine (/proc/net/sockstat), in bytes: NaN where not Linux. */
  kernelTcp: number;
  /** With `collectEveryMs`: ArrayBuffers and the heap still alive right after a full collection (else absent). */
  liveArrayBuffers?: number;
  liveHeapUsed?: number;
};

export type MemoryProbe = {
  /** Node options that load the probe into the server. */
  nodeArgs: string[];
  /** The samples written so far. */
  samples(): MemorySample[];
};

/**
 * `collectEveryMs` (0: never) runs a full collection that often and records what survived it, to tell the memory
 * in use from garbage not collected yet; it changes what it measures (the collections are extra work), so it is for
 * reading the make-up of memory, not for the figure of RSS.
 */
export function memoryProbe(dir: string, everyMs = 50, collectEveryMs = 0): MemoryProbe {
  const out = join(dir, 'memory-samples.ndjson');
  const script = join(dir, 'memory-probe.mjs');
  writeFileSync(out, '');
  writeFileSync(
    script,
    `import { appendFileSync, readFileSync } from 'node:fs';
import { Socket } from 'node:net';
const kernelTcp = () => {
  try {
    return Number(/TCP:.* mem (\\d+)/.exec(readFileSync('/proc/net/sockstat', 'utf8'))[1]) * 4096;
  } catch {
    return NaN;
  }
};
const out = ${JSON.stringify(out)};
setInterval(() => {
  const m = process.memoryUsage();
  let socketWritable = 0;
  let sockets = 0;
  for (const h of process._getActiveHandles()) if (h instanceof Socket) { sockets++; socketWritable += h.writableLength; }
  appendFileSync(out, JSON.stringify({ at: Date.now(), rss: m.rss, heapTotal: m.heapTotal, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers, socketWritable, sockets, kernelTcp: kernelTcp() }) + '\\n');
}, ${everyMs}).unref();
if (${collectEveryMs} > 0) setInterval(() => {
  const before = process.memoryUsage();
  globalThis.gc();
  const m = process.memoryUsage();
  appendFileSync(out, JSON.stringify({ at: Date.now(), rss: before.rss, heapTotal: before.heapTotal, heapUsed: before.heapUsed, external: before.external, arrayBuffers: before.arrayBuffers, socketWritable: 0, sockets: 0, kernelTcp: NaN, liveArrayBuffers: m.arrayBuffers, liveHeapUsed: m.heapUsed }) + '\\n');
}, ${collectEveryMs}).unref();
`,
  );
  return {
    nodeArgs: [...(collectEveryMs > 0 ? ['--expose-gc'] : []), '--import', script],
    samples: () =>
      readFileSync(out, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as MemorySample),
  };
}

/** The sample with the highest RSS among those from `since` on, or null when there is none. */
export function peakSample(samples: readonly MemorySample[], since = 0): MemorySample | null {
  let peak: MemorySample | null = null;
  for (const s of samples) if (s.at >= since && (peak === null || s.rss > peak.rss)) peak = s;
  return peak;
}
