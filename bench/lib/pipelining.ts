import { connect, type Socket } from 'node:net';
import { sampleMemory } from './procs.ts';

/**
 * The pipelining attack: `connections` clients each send their share of `totalBytes` of pipelined catalog requests
 * (500 entries a page, the largest answer there is) and never read an answer. Meanwhile a well-behaved client asks
 * for meta now and then. Measured: the server's peak resident memory, and the slowest of those meta answers.
 */
export type PipeliningFigures = {
  connections: number;
  bytesSent: number;
  requestsSent: number;
  seconds: number;
  peakRssBytes: number;
  metaAnswers: number;
  metaMaxMs: number;
  metaFailures: number;
};

export async function pipeliningAttack(
  url: string,
  pid: number,
  options: { connections?: number; totalBytes?: number; seconds?: number } = {},
): Promise<PipeliningFigures> {
  const connections = options.connections ?? 30;
  const totalBytes = options.totalBytes ?? 1_700_000;
  const seconds = options.seconds ?? 8;
  const { hostname, port } = new URL(url);
  const body = JSON.stringify({ version: 1, operation: 'device-510k.catalog', input: { kind: 'clearance', limit: 500, cursor: null } });
  const one = `POST /v1/query HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  const perConnection = Math.max(1, Math.floor(totalBytes / connections / Buffer.byteLength(one)));
  const memory = sampleMemory(pid, 50);
  const sockets: Socket[] = [];
  try {
    for (let i = 0; i < connections; i++) {
      const socket = connect(Number(port), hostname);
      socket.on('error', () => {});
      socket.pause(); // never read
      socket.write(one.repeat(perConnection));
      sockets.push(socket);
    }
    const meta = JSON.stringify({ version: 1, operation: 'device-510k.meta', input: {} });
    const ends = Date.now() + seconds * 1000;
    let metaAnswers = 0;
    let metaFailures = 0;
    let metaMaxMs = 0;
    while (Date.now() < ends) {
      const started = performance.now();
      try {
        const res = await fetch(`${url}/v1/query`, { method: 'POST', body: meta, headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(10_000) });
        await res.arrayBuffer();
        if (res.status === 200) metaAnswers++;
        else metaFailures++;
      } catch {
        metaFailures++;
      }
      metaMaxMs = Math.max(metaMaxMs, performance.now() - started);
      await new Promise((r) => setTimeout(r, 100));
    }
    return {
      connections,
      bytesSent: perConnection * connections * Buffer.byteLength(one),
      requestsSent: perConnection * connections,
      seconds,
      peakRssBytes: memory.stop(),
      metaAnswers,
      metaMaxMs,
      metaFailures,
    };
  } finally {
    memory.stop();
    for (const s of sockets) s.destroy();
  }
}
