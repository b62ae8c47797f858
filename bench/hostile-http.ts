/**
 * Pipelining clients with large bodies that never read an answer: `--connections` clients (100 and 300 by default)
 * each send `--requests` pipelined POST /v1/query requests with bodies of `--body-bytes` (36 of 64 KiB), against our
 * server as `npm start` runs it, with the fast lane and with FAST_LANE=off. Meanwhile a newcomer asks for meta on a
 * fresh connection every 100 ms. Printed for each: the server's RSS before the attack and its peak during it, and the
 * newcomer's slowest meta answer.
 *
 *   npx tsx bench/hostile-http.ts --snapshot DIR [--connections 100,300] [--modes lane,off] [--seconds 8]
 *
 * A script, not a test: it prints figures and asserts nothing.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseCommandLine } from '../src/cli/args.ts';
import { paddedQueryRequest, pipeliningAttack } from './lib/pipelining.ts';
import { memoryProbe, peakSample } from './lib/memory-probe.ts';
import { memoryOf } from './lib/procs.ts';
import { startServer } from './lib/server.ts';

const USAGE = `Usage: npx tsx bench/hostile-http.ts --snapshot DIR [options]

Pipelining clients with large bodies that never read their answers, against the server with and without the fast
lane: the server's RSS before and at its peak, and the slowest meta answer to a newcomer meanwhile.

  --snapshot DIR       the snapshot the server serves (required)
  --connections LIST   numbers of attacking connections, comma-separated (100,300)
  --requests N         pipelined requests each connection sends (36)
  --body-bytes N       bytes of each request's body (65536, the body limit)
  --modes LIST         lane (the fast lane on), off (FAST_LANE=off), comma-separated (lane,off)
  --seconds N          seconds each attack lasts (8)
  --buffer-bytes N     the server's PIPELINE_BUFFER_BYTES (its default when not given)
  --operation NAME     catalog (a page of 500 entries, the largest answer) or meta (the smallest) (catalog)
  --root DIR           the checkout whose server is started (this one), for a figure of another commit
  --memory             also print what the server's memory was made of at its peak (Node's heap, external
                       memory, ArrayBuffers), sampled by a module preloaded into the server for the bench
  --live-every MS      with --memory: a full collection every MS milliseconds, and the most ArrayBuffers and heap
                       that survived one (extra work for the server: its RSS figure is then not the one to quote)`;

const values = parseCommandLine('hostile-http', USAGE, {
  snapshot: { type: 'string' },
  connections: { type: 'string', default: '100,300' },
  requests: { type: 'string', default: '36' },
  'body-bytes': { type: 'string', default: '65536' },
  modes: { type: 'string', default: 'lane,off' },
  seconds: { type: 'string', default: '8' },
  'buffer-bytes': { type: 'string' },
  root: { type: 'string' },
  operation: { type: 'string', default: 'catalog' },
  memory: { type: 'boolean', default: false },
  'live-every': { type: 'string', default: '0' },
});
if (!values.snapshot) {
  console.error('hostile-http: --snapshot is required (see --help)');
  process.exit(2);
}
const wholeNumber = (name: string, raw: string, least: number): number => {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < least) {
    console.error(`hostile-http: --${name} must be a whole number from ${least} and up, got "${raw}" (see --help)`);
    process.exit(2);
  }
  return n;
};
const snapshot = resolve(values.snapshot);
const counts = values.connections.split(',').map((c) => wholeNumber('connections', c.trim(), 1));
const requests = wholeNumber('requests', values.requests, 1);
const bodyBytes = wholeNumber('body-bytes', values['body-bytes'], 64);
const seconds = wholeNumber('seconds', values.seconds, 1);
const liveEveryMs = wholeNumber('live-every', values['live-every'], 0);
const modes = values.modes.split(',').map((m) => m.trim());
if (values.operation !== 'catalog' && values.operation !== 'meta') {
  console.error(`hostile-http: --operation takes catalog or meta, got "${values.operation}" (see --help)`);
  process.exit(2);
}
for (const m of modes) {
  if (m !== 'lane' && m !== 'off') {
    console.error(`hostile-http: --modes takes lane and off, got "${m}" (see --help)`);
    process.exit(2);
  }
}

const request = paddedQueryRequest(bodyBytes, values.operation);
const mib = (b: number) => `${(b / 1048576).toFixed(0)} MiB`;
const tmp = await mkdtemp(join(tmpdir(), 'device-510k-hostile-http-'));
const root = resolve(values.root ?? process.cwd());

console.log(`${root}, snapshot ${snapshot}: ${requests} pipelined ${values.operation} requests a connection, bodies of ${bodyBytes} bytes, never read; ${seconds} s each`);
for (const connections of counts) {
  for (const mode of modes) {
    const env: Record<string, string> = { FAST_LANE: mode === 'lane' ? 'on' : 'off' };
    if (values['buffer-bytes']) env.PIPELINE_BUFFER_BYTES = values['buffer-bytes'];
    const serverTmp = await mkdtemp(join(tmp, 'server-'));
    const probe = values.memory ? memoryProbe(serverTmp, 50, liveEveryMs) : null;
    const server = await startServer(root, snapshot, serverTmp, env, probe?.nodeArgs ?? []);
    try {
      // The newcomer's meta on a quiet server first, for the figure under attack to be read against.
      const quiet = await pipeliningAttack(server.url, server.pid, { connections: 0, seconds: 1, request, perConnection: 1, freshMeta: true });
      const before = memoryOf(server.pid)?.rss ?? Number.NaN;
      const attackStarted = Date.now();
      const f = await pipeliningAttack(server.url, server.pid, { connections, seconds, request, perConnection: requests, freshMeta: true });
      console.log(
        `${String(connections).padStart(4)} connections, ${mode === 'lane' ? 'fast lane    ' : 'FAST_LANE=off'}: RSS ${mib(before)} before, ${mib(f.peakRssBytes)} peak` +
          ` (${mib(f.bytesSent)} sent); meta on a fresh connection: slowest ${f.metaMaxMs.toFixed(0)} ms, ${f.metaAnswers} answered, ${f.metaFailures} failed` +
          ` (quiet: slowest ${quiet.metaMaxMs.toFixed(0)} ms of ${quiet.metaAnswers})`,
      );
      const samples = probe?.samples().filter((s) => s.at >= attackStarted) ?? [];
      const peak = peakSample(samples);
      if (peak) {
        console.log(
          `      at the peak Node counted: RSS ${mib(peak.rss)}, heap ${mib(peak.heapUsed)} used of ${mib(peak.heapTotal)},` +
            ` external ${mib(peak.external)} (ArrayBuffers ${mib(peak.arrayBuffers)}), the rest ${mib(peak.rss - peak.heapTotal - peak.external)};` +
            ` waiting in ${peak.sockets} sockets' streams ${mib(peak.socketWritable)}`,
        );
        const most = (k: 'socketWritable' | 'kernelTcp') => Math.max(...samples.map((s) => s[k]).filter((v) => Number.isFinite(v)));
        console.log(`      during the attack, at most: waiting in sockets' streams ${mib(most('socketWritable'))}, in the kernel's TCP buffers (the machine's) ${mib(most('kernelTcp'))}`);
        const live = samples.filter((s) => s.liveArrayBuffers !== undefined);
        if (live.length > 0) {
          const most = (k: 'liveArrayBuffers' | 'liveHeapUsed') => Math.max(...live.map((s) => s[k]!));
          console.log(`      alive after a full collection, at most: ArrayBuffers ${mib(most('liveArrayBuffers'))}, heap ${mib(most('liveHeapUsed'))} (${live.length} collections)`);
        }
      }
    } finally {
      await server.stop();
    }
  }
}
