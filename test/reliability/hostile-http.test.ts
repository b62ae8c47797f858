import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorBody, LAYOUT, Manifest, type FileEntry } from '../../src/contract/index.ts';
import { DEFAULT_PIPELINE_DEPTH, DEFAULT_PIPELINE_MAX_WAITING, DEFAULT_PUBLIC_DIR, stallCheckMs } from '../../src/server/config.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { until } from '../helpers/until.ts';
import { allRecords, envelope, startServer, type Running } from '../server/helpers.ts';
import { SEED, byteByByte, figure, mib, postWithin, rawExchange, seeded, startServerProcess, type RawExchange } from './helpers.ts';

/**
 * Clients that misbehave on purpose: too slow, too big, too many, or asking for files outside the served folders.
 * The server runs with short limits (1 s for headers, 2 s for a whole request) so that the slow cases end quickly;
 * the defaults are longer but work the same way.
 */
let server: Running;
let port: number;
let snapshotPath: string;
let kNumbers: string[];

const META = JSON.stringify(envelope('device-510k.meta', {}));
/** The whole-request limit the server runs with here. */
const REQUEST_TIMEOUT_MS = 2000;

beforeAll(async () => {
  snapshotPath = await buildFixtureSnapshot();
  server = await startServer({ snapshotPath, publicDir: DEFAULT_PUBLIC_DIR, headersTimeoutMs: 1000, requestTimeoutMs: REQUEST_TIMEOUT_MS });
  port = Number(new URL(server.url).port);
  kNumbers = (await allRecords(snapshotPath)).map((r) => r.kNumber);
});
afterAll(async () => {
  await server?.close();
});

const postRequest = (body: string, extra = '') =>
  `POST /v1/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}Connection: close\r\n\r\n${body}`;

/** Sends ordinary requests one after another until `done()` says stop; every answer must be a 200. */
async function steadyClient(done: () => boolean): Promise<{ sent: number; failed: string[] }> {
  let sent = 0;
  const failed: string[] = [];
  while (!done()) {
    sent++;
    try {
      const res = await postWithin(server.url, META, undefined, 5000);
      if (res.status !== 200) failed.push(`status ${res.status}`);
    } catch (err) {
      failed.push((err as Error).message);
    }
  }
  return { sent, failed };
}

describe('slow clients', () => {
  it('headers or a body sent a byte at a time are cut off with 408, and other clients are served meanwhile', async () => {
    const slowHeaders = `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ${'a'.repeat(300)}\r\n\r\n`;
    const body = JSON.stringify(envelope('device-510k.search', { query: 'catheter '.repeat(30), applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 5 }));
    const slowBodyHead = `POST /v1/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    let open = 0;
    const slow = (pieces: string[]) => {
      open++;
      // 25 ms a byte: a complete request would take over 7 seconds, far beyond the limits.
      return rawExchange(port, pieces, { gapMs: 25, giveUpMs: 20_000 }).finally(() => open--);
    };
    const clients: Promise<RawExchange>[] = [];
    for (let i = 0; i < 10; i++) {
      clients.push(slow(byteByByte(slowHeaders)));
      clients.push(slow([slowBodyHead, ...byteByByte(body)]));
    }
    const steady = steadyClient(() => open === 0);
    const results = await Promise.all(clients);
    const { sent, failed } = await steady;
    figure('slow clients cut off (408)', results.filter((r) => r.status === 408).length);
    figure('ordinary requests answered while they trickled', sent);
    for (const r of results) expect({ status: r.status, closedByServer: r.closedByServer }).toEqual({ status: 408, closedByServer: true });
    expect(failed).toEqual([]);
    expect(sent).toBeGreaterThan(0);
  }, 30_000);

  it('a client that asks for big answers and never reads them is cut off once nothing moves', async () => {
    const connections = () => new Promise<number>((resolve, reject) => server.app.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
    const baseline = await connections();
    const body = JSON.stringify(envelope('device-510k.catalog', { kind: 'clearance', limit: 500, cursor: null }));
    const one = `POST /v1/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    let closed = false;
    let closedAt = 0;
    let openedAt = 0;
    server.app.server.once('connection', (socket: import('node:net').Socket) => {
      openedAt = Date.now();
      socket.once('close', () => (closedAt = Date.now()));
    });
    const reader = connect(port, '127.0.0.1', () => {
      // Thirty pipelined requests (under the 36 a connection may have in flight and waiting) for about 200 KB each,
      // and not one byte read: more than the kernel's buffers hold, so the answers stop moving.
      reader.pause();
      reader.write(one.repeat(30));
    });
    reader.on('error', () => {});
    reader.on('close', () => (closed = true));
    try {
      await vi.waitFor(async () => expect(await connections()).toBe(baseline + 1), { timeout: 5000, interval: 20 });
      // The server gives up on the connection by itself (the limit here is 2 s without progress). Waited for as long as
      // the test may run: how soon is a figure, printed, since a loaded machine stretches every timer.
      await vi.waitFor(async () => expect(await connections()).toBe(baseline), { timeout: 25_000, interval: 100 });
      await vi.waitFor(() => expect(closedAt).toBeGreaterThan(0), { timeout: 5000, interval: 20 });
      figure('a client that never reads its answers: closed after (ms, limit 2,000)', closedAt - openedAt);
      expect((await postWithin(server.url, META)).status).toBe(200);
    } finally {
      reader.destroy();
    }
    expect(closed || reader.destroyed).toBe(true);
  }, 30_000);

  it('a client that stops reading snapshot files is cut off by the server within the limit', async () => {
    // Node skips a socket's first timeout while a write is pending; the server must not inherit that doubling. Timed
    // by the server socket's own timer, not by a clock: every expiry of it, also the one Node skips, adds the period
    // that expired, and the periods up to the close must come within the limit (plus one check, for the answers still
    // moving when the first one began). A single timeout of the limit, as before, comes to twice the limit.
    const limit = REQUEST_TIMEOUT_MS;
    let expired = 0;
    /** The answers' bytes queued on the server when its timer last expired: a stalled reader's, not an idle connection's. */
    let queued = 0;
    let closed = false;
    const watch = (socket: Socket) => {
      // Node makes the socket's timer from this method, bound, each time the timeout is set (on handing the
      // connection to its parser, and again at each check); it refreshes that timer when it skips an expiry.
      const timed = socket as Socket & { _onTimeout(): void };
      const onTimeout = timed._onTimeout;
      timed._onTimeout = function (this: Socket) {
        expired += this.timeout ?? 0;
        queued = this.writableLength;
        onTimeout.call(this);
      };
      socket.once('close', () => (closed = true));
    };
    server.app.server.once('connection', watch);
    const manifest = Manifest.parse(JSON.parse(await readFile(join(snapshotPath, LAYOUT.manifest), 'utf8')));
    const biggest = [...manifest.files].sort((a, b) => b.bytes - a.bytes)[0] as FileEntry;
    // As many as the server takes pipelined on one connection (more close it at once, which is another test), and
    // more than the kernel's socket buffers hold, so that the answers stay queued on the server.
    const times = DEFAULT_PIPELINE_DEPTH + DEFAULT_PIPELINE_MAX_WAITING;
    expect(times * biggest.bytes).toBeGreaterThan(4 * 2 ** 20);
    const reader = connect(port, '127.0.0.1', () => {
      reader.pause();
      reader.write(`GET /snapshot/${biggest.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: identity\r\n\r\n`.repeat(times));
    });
    reader.on('error', () => {});
    try {
      // The client never closes it (only after the test, below): the server does.
      await until(() => closed, 'the server to close the connection', 30_000);
      figure("a client that stops reading snapshot files: closed after (ms of the socket's timer, limit 2,000)", expired);
      expect(queued).toBeGreaterThan(0);
      expect(expired).toBeLessThanOrEqual(limit + stallCheckMs(limit));
      expect((await postWithin(server.url, META)).status).toBe(200);
    } finally {
      reader.destroy();
    }
  }, 40_000);

  it('a client that stops mid-body and goes away leaves nothing behind', async () => {
    const body = META;
    const cut = await rawExchange(port, [`POST /v1/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length + 10}\r\n\r\n${body}`], {
      giveUpMs: 200,
    });
    // The server is still waiting for ten bytes when the client gives up; nothing has been answered.
    expect(cut.status).toBeNull();
    const res = await postWithin(server.url, META);
    expect(res.status).toBe(200);
  });
});

describe('oversized requests', () => {
  it.each([
    ['one 20 KiB header', `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`],
    ['3,000 small headers', `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n${Array.from({ length: 3000 }, (_, i) => `X-H${i}: v\r\n`).join('')}\r\n`],
    ['a 20 KiB path', `GET /snapshot/${'a/'.repeat(10 * 1024)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`],
    ['a 20 KiB cookie on a query', postRequest(META, `Cookie: ${'c=1; '.repeat(4096)}\r\n`)],
  ])('%s: 431 and the connection closed', async (_name, request) => {
    const res = await rawExchange(port, [request]);
    expect(res.status).toBe(431);
    expect(res.closedByServer).toBe(true);
    expect((await postWithin(server.url, META)).status).toBe(200);
  });

  it('a 1 MiB body: 413 with the canonical body, read no further', async () => {
    const big = JSON.stringify(envelope('device-510k.search', { query: 'x'.repeat(1 << 20) }));
    const res = await rawExchange(port, [postRequest(big)]);
    expect(res.status).toBe(413);
    const json = res.text.slice(res.text.indexOf('\r\n\r\n') + 4);
    expect(ErrorBody.parse(JSON.parse(json)).error.code).toBe('request_too_large');
  });

  it('Expect: 100-continue with a declared body over the limit: 413 at once, no 100 Continue', async () => {
    const res = await rawExchange(port, [`POST /v1/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 99999999\r\nExpect: 100-continue\r\n\r\n`], { giveUpMs: 2000 });
    expect(res.text.startsWith('HTTP/1.1 413')).toBe(true);
    expect(res.text).not.toContain('100 Continue');
    // A body within the limit is invited, then answered.
    const small = await rawExchange(port, [`POST /v1/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${META.length}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`, META], { gapMs: 100 });
    expect(small.text.startsWith('HTTP/1.1 100 Continue')).toBe(true);
    expect(small.text).toContain('HTTP/1.1 200');
  });

  it('garbage instead of HTTP gets a plain 400, and the server goes on', async () => {
    for (const garbage of ['\x00\x01\x02\r\n\r\n', 'HELLO\r\n\r\n', 'GET / HTTP/9.9\r\n\r\n', 'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n', 'GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n']) {
      const res = await rawExchange(port, [garbage]);
      expect({ garbage, status: res.status }).toEqual({ garbage, status: 400 });
    }
    expect((await postWithin(server.url, META)).status).toBe(200);
  });
});

describe('many connections', () => {
  it('300 connections opened at once all get their answer', async () => {
    const rng = seeded(SEED);
    const kinds = [
      { request: 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n', status: 200 },
      { request: 'GET /snapshot/manifest.json HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n', status: 200 },
      { request: 'GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n', status: 404 },
      { request: postRequest(META), status: 200 },
      { request: postRequest(JSON.stringify(envelope('device-510k.detail', { id: 'K000001' }))), status: 404 },
      { request: postRequest('{"version":'), status: 400 },
    ];
    const plan = Array.from({ length: 300 }, () => {
      const useDetail = rng.next() < 0.3;
      if (useDetail) return { request: postRequest(JSON.stringify(envelope('device-510k.detail', { id: rng.pick(kNumbers) }))), status: 200 };
      return rng.pick(kinds);
    });
    const results = await Promise.all(plan.map((p) => rawExchange(port, [p.request], { giveUpMs: 20_000 })));
    figure('parallel connections answered', results.filter((r, i) => r.status === plan[i]?.status).length);
    expect(results.map((r) => r.status)).toEqual(plan.map((p) => p.status));
  }, 30_000);
});

describe('paths outside the served folders', () => {
  const targets = [
    '/snapshot/../package.json',
    '/snapshot/..%2Fpackage.json',
    '/snapshot/%2e%2e%2f%2e%2e%2fpackage.json',
    '/snapshot/records/..%5c..%5cpackage.json',
    '/snapshot/records\\..\\..\\package.json',
    '/snapshot/%252e%252e%252fpackage.json',
    '/snapshot/manifest.json%00.txt',
    '/snapshot/%E0%A4%A',
    '/snapshot/.',
    '/snapshot/',
    '/snapshot',
    '/snapshot/records/index.json/..',
    '/snapshot//proc/self/environ',
    '/snapshot/..%00/package.json',
    '/..%2f..%2f..%2fetc%2fpasswd',
    '/%2e%2e/%2e%2e/etc/passwd',
    '//etc/passwd',
    '/js/../../package.json',
    '/js/..%2f..%2fpackage.json',
    '/.git/config',
    '/../.env',
    '/node_modules/zod/package.json',
    '/src/main.ts',
    '/index.html%00',
    `/${'..%2f'.repeat(50)}etc/passwd`,
  ];

  it.each(targets)('GET %s: a clean 404 (or 400) that reveals nothing', async (target) => {
    const res = await rawExchange(port, [`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`]);
    expect([400, 404]).toContain(res.status);
    const body = res.text.slice(res.text.indexOf('\r\n\r\n') + 4);
    if (body !== '') expect(ErrorBody.parse(JSON.parse(body)).error.code).toBe('not_found');
    expect(res.text).not.toMatch(/devDependencies|root:x?:0|\[core\]|SNAPSHOT_PATH|import /);
  });

  it.each([
    ['an absolute-form target', 'GET http://evil.example/../../package.json HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n'],
    ['an asterisk target', 'OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'],
    ['CONNECT', 'CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\nConnection: close\r\n\r\n'],
    ['TRACE', 'TRACE /snapshot/manifest.json HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'],
    ['DELETE on a snapshot file', 'DELETE /snapshot/manifest.json HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'],
    ['PUT on the page', 'PUT /index.html HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi'],
  ])('%s: an error answer, nothing served or changed', async (_name, request) => {
    const res = await rawExchange(port, [request]);
    expect(res.status === null ? 'closed' : res.status).toSatisfy((s: unknown) => s === 'closed' || (typeof s === 'number' && s >= 400 && s < 500));
    expect(res.text).not.toMatch(/devDependencies|"snapshotId"/);
    expect((await postWithin(server.url, META)).status).toBe(200);
  });
});

describe('memory', () => {
  it("the server's heap stays bounded over a long run of mixed, failing and abandoned requests", async () => {
    // The server in its own process, so that the figure is the server's alone; a small shard cache, so the run
    // evicts and re-reads shards instead of settling into a full cache.
    const s = await startServerProcess({ snapshotPath, shardCacheSize: 16, headersTimeoutMs: 1000, requestTimeoutMs: 2000 });
    const rng = seeded(SEED + 1);
    const bodies = [
      () => JSON.stringify(envelope('device-510k.detail', { id: rng.pick(kNumbers) })),
      () => JSON.stringify(envelope('device-510k.catalog', { kind: rng.pick(['clearance', 'product-code'] as const), limit: 100, cursor: null })),
      () => JSON.stringify(envelope('device-510k.search', { query: rng.pick(['pacemaker', 'catheter', 'lead', '']), applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1 + rng.int(3), pageSize: 50 })),
      () => JSON.stringify(envelope('device-510k.top-product-codes', { limit: 100 })),
      () => '{"version":1,"operation":"device-510k.detail","input":{"id":"../../etc"}}',
      () => '{"broken',
    ];
    let requests = 0;
    let abandoned = 0;
    const failures: string[] = [];
    const round = async (n: number) => {
      const worker = async () => {
        for (let i = 0; i < n; i++) {
          requests++;
          if (i % 10 === 0) {
            // A client that sends a query and leaves as soon as the answer starts.
            abandoned++;
            await new Promise<void>((resolve) => {
              const sock = connect(s.port, '127.0.0.1', () => sock.write(postRequest((bodies[1] as () => string)())));
              sock.on('data', () => sock.destroy());
              sock.on('close', () => resolve());
              sock.on('error', () => {});
            });
            continue;
          }
          const res = await postWithin(s.url, rng.pick(bodies)(), { 'content-type': 'application/json', 'accept-encoding': rng.pick(['br', 'gzip', 'identity']) }).catch(
            (e: Error) => ({ status: 0, text: e.message }),
          );
          if (res.status === 0 || res.status >= 500) failures.push(`${res.status} ${res.text.slice(0, 100)}`);
        }
      };
      await Promise.all(Array.from({ length: 8 }, worker));
    };
    try {
      await round(20);
      const warm = await s.memory();
      const after: { heapUsed: number; rss: number }[] = [];
      for (let r = 0; r < 5; r++) {
        await round(25);
        after.push(await s.memory());
      }
      const growth = Math.max(...after.map((m) => m.heapUsed)) - warm.heapUsed;
      figure('memory run: requests', requests);
      figure('memory run: abandoned mid-answer', abandoned);
      figure('memory run: server heap after warm-up', mib(warm.heapUsed));
      figure('memory run: server heap after each round', after.map((m) => mib(m.heapUsed)).join(', '));
      figure('memory run: server rss after warm-up / at the end', `${mib(warm.rss)} / ${mib(after[after.length - 1]?.rss ?? 0)}`);
      expect(failures).toEqual([]);
      // 1,000 requests after warm-up: a leak of 4 KiB a request (one kept answer or buffer) would pass 4 MiB.
      expect(growth).toBeLessThan(4 * 2 ** 20);
    } finally {
      await s.close();
    }
  }, 60_000);
});
