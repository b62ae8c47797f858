import { createServer, get, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countingProxy, listen } from '../../bench/lib/counting-proxy.ts';

/**
 * The page bench's counting proxy: a run counts only the answers to its own page's requests. An answer still owed to
 * the page of the run before (waiting for the paced link, or still upstream, when that browser closed) is dropped,
 * never delivered into the next run and never counted there.
 */
const held: ServerResponse[] = [];
const BODY = 'x'.repeat(10_000);
let upstream: Awaited<ReturnType<typeof listen>>;
let proxy: Awaited<ReturnType<typeof countingProxy>>;

beforeAll(async () => {
  upstream = await listen(
    createServer((req, res) => {
      if (req.url === '/held') return void held.push(res);
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end(BODY);
    }),
  );
  proxy = await countingProxy(upstream.port);
});
afterAll(async () => {
  for (const res of held) res.destroy();
  await proxy?.close();
  await upstream?.close();
});

/** Asks the proxy for `path`; settles with the status and bytes, or with the error when the proxy drops it. */
const ask = (path: string) =>
  new Promise<{ status: number; bytes: number } | Error>((resolve) => {
    get(`${proxy.url}${path.slice(1)}`, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.byteLength));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
      res.on('error', resolve);
    }).on('error', resolve);
  });

const until = async (what: string, ok: () => boolean) => {
  const deadline = Date.now() + 10_000;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
};

describe('countingProxy', () => {
  it('counts every answer of a run, with its headers, when nothing is left from a run before', async () => {
    proxy.startRun(null);
    const got = await ask('/a');
    expect(got).toEqual({ status: 200, bytes: BODY.length });
    expect(proxy.sent.map((d) => d.url)).toEqual(['/a']);
    expect(proxy.sent[0]!.bytes).toBeGreaterThan(BODY.length);
    expect(proxy.stale).toEqual([]);
  });

  it('drops an answer still waiting for the link when the next run starts, and counts only the new run', async () => {
    // A link so slow that the answer would arrive in minutes: it is still owed when the next run starts.
    proxy.startRun({ bytesPerMs: 0.1, rttMs: 0 });
    const old = ask('/waiting');
    await until('the answer to wait for the link', () => proxy.owed === 1);
    proxy.startRun(null);
    expect(proxy.owed).toBe(0);
    expect(await old).toBeInstanceOf(Error);
    expect(await ask('/b')).toEqual({ status: 200, bytes: BODY.length });
    expect(proxy.sent.map((d) => d.url)).toEqual(['/b']);
    expect(proxy.stale.map((d) => d.url)).toEqual(['/waiting']);
  });

  it('drops an answer that comes from upstream after the next run started', async () => {
    proxy.startRun(null);
    const old = ask('/held');
    await until('the request to reach the upstream server', () => held.length === 1);
    proxy.startRun(null);
    const fresh = await ask('/c');
    held.shift()!.writeHead(200, { 'Content-Type': 'text/plain' }).end(BODY);
    expect(await old).toBeInstanceOf(Error);
    await until('the late answer to be listed', () => proxy.stale.length === 1);
    expect(fresh).toEqual({ status: 200, bytes: BODY.length });
    expect(proxy.sent.map((d) => d.url)).toEqual(['/c']);
    expect(proxy.stale.map((d) => d.url)).toEqual(['/held']);
  });
});
