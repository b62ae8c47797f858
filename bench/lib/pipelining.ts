import { connect, type Socket } from 'node:net';
import { sampleMemory } from './procs.ts';

/**
 * The pipelining attack: `connections` clients each send their share of `totalBytes` of pipelined catalog requests
 * (500 entries a page, the largest answer there is) and never read an answer. Meanwhile a well-behaved client asks
 * for meta now and then. Measured: the server's peak resident memory, and the slowest of those meta answers.
 *
 * `request` and `perConnection` replace the catalog request and the share: each client then sends that request
 * `perConnection` times (one buffer shared by every client, so that the attacker's own memory stays small).
 * `freshMeta` asks for meta on a new connection each time, as a newcomer would, instead of a kept one.
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
  options: { connections?: number; totalBytes?: number; seconds?: number; request?: string; perConnection?: number; freshMeta?: boolean } = {},
): Promise<PipeliningFigures> {
  const connections = options.connections ?? 30;
  const totalBytes = options.totalBytes ?? 1_700_000;
  const seconds = options.seconds ?? 8;
  const { hostname, port } = new URL(url);
  const body = JSON.stringify({ version: 1, operation: 'device-510k.catalog', input: { kind: 'clearance', limit: 500, cursor: null } });
  const one =
    options.request ?? `POST /v1/query HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  const perConnection = options.perConnection ?? Math.max(1, Math.floor(totalBytes / connections / Buffer.byteLength(one)));
  const burst = Buffer.from(one.repeat(perConnection), 'latin1');
  const memory = sampleMemory(pid, 50);
  const sockets: Socket[] = [];
  try {
    for (let i = 0; i < connections; i++) {
      const socket = connect(Number(port), hostname);
      socket.on('error', () => {});
      socket.pause(); // never read
      socket.write(burst);
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
        const status = options.freshMeta ? await metaOnNewConnection(hostname, Number(port), meta) : await metaOnFetch(url, meta);
        if (status === 200) metaAnswers++;
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

async function metaOnFetch(url: string, meta: string): Promise<number> {
  const res = await fetch(`${url}/v1/query`, { method: 'POST', body: meta, headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(10_000) });
  await res.arrayBuffer();
  return res.status;
}

/** One meta request on a connection of its own, closed by the server after the answer; its status, or a throw. */
function metaOnNewConnection(host: string, port: number, meta: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const socket = connect(port, host);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('meta did not answer within 10 s'));
    }, 10_000);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(Buffer.concat(chunks).toString('latin1'))?.[1] ?? 0);
      if (status > 0) resolve(status);
      else reject(new Error('meta: no answer'));
    });
    socket.write(`POST /v1/query HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(meta)}\r\nConnection: close\r\n\r\n${meta}`);
  });
}

/**
 * One pipelined request whose body is padded with spaces (which JSON ignores) to `bodyBytes`: every such request is
 * one the fast lane answers. The catalog page of 500 entries, the largest answer, fills what the kernel buffers for a
 * client that does not read, so the requests after it wait on the server: the case the pipelining bounds are for.
 */
export function paddedQueryRequest(bodyBytes: number, operation: 'catalog' | 'meta' = 'catalog'): string {
  const query =
    operation === 'meta'
      ? { version: 1, operation: 'device-510k.meta', input: {} }
      : { version: 1, operation: 'device-510k.catalog', input: { kind: 'clearance', limit: 500, cursor: null } };
  const json = JSON.stringify(query);
  const body = json + ' '.repeat(Math.max(0, bodyBytes - json.length));
  return `POST /v1/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}
