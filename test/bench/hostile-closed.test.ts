import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSearchCase, searchInput, type HostileCase } from '../../bench/lib/hostile-search.ts';

/**
 * A hostile case whose connections the server closes gets a row that says so, and the bench goes on: a server that
 * answers `meta` and closes every search's connection without an answer, or only some of them.
 */
let server: Server;
let url: string;
let searches = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (body.includes('device-510k.meta')) {
        res.setHeader('content-type', 'application/json');
        res.end('{"version":1,"operation":"device-510k.meta","data":{}}');
        return;
      }
      // Every other search answered, the rest closed with no answer.
      if (searches++ % 2 === 0 || body.includes('"closeAll"')) req.socket.destroy();
      else {
        res.setHeader('content-type', 'application/json');
        res.end('{"page":{"total":7}}');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('a hostile case whose connections are closed', () => {
  it('is reported as closed, with its time, and returns', async () => {
    const c: HostileCase = { name: 'closed', requests: () => [searchInput('closeAll')] };
    const row = await runSearchCase(url, c, 0);
    expect(row.answered).toMatch(/^closed \(/);
    expect(row.refused).toBe(true);
    expect(row.unanswered).toBe(1);
    expect(row.ms).toBeGreaterThan(0);
    expect(row.metaFailed).toBe(0);
  });

  it('counts each outcome of a case of many requests', async () => {
    searches = 0;
    const c: HostileCase = { name: 'some closed', requests: () => Array.from({ length: 4 }, (_, i) => searchInput(`q${i}`)) };
    const row = await runSearchCase(url, c, 0);
    expect(row.unanswered).toBe(2);
    expect(row.answered.split('; ').sort()).toEqual(['2/4 × 200, 7 matches', expect.stringMatching(/^2\/4 × closed \(/)].sort());
  });

  it('is reported as refused when nothing listens', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const row = await runSearchCase(`http://127.0.0.1:${port}`, { name: 'refused', requests: () => [searchInput('x')] }, 0);
    expect(row.answered).toBe('refused (ECONNREFUSED)');
    expect(row.unanswered).toBe(1);
  });
});
