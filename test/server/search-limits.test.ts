import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { ask, expectError, expectOk, startServer, type Running } from './helpers.ts';

/**
 * A search or export over a query limit is refused at once with `invalid_input` naming the limit, through the real
 * server; a query just under the limits is answered.
 */
let server: Running;

beforeAll(async () => {
  server = await startServer({ snapshotPath: await buildFixtureSnapshot() });
}, 120_000);
afterAll(() => server?.close());

const letters = 'abcdefghijklmnopqrstuvwxyz0123456789';
const prefixes: string[] = [...letters];
for (const a of letters.slice(1)) for (const b of letters) if (prefixes.length < 346) prefixes.push(a + b);
const search = (query: string) => ({ query, applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10 });

describe('search under the query limits', () => {
  it('refuses the 346-prefix OR query with invalid_input naming the limit and the value', async () => {
    const query = prefixes.join(' OR ');
    expect(query.length).toBe(2036);
    const body = expectError(await ask(server.url, 'device-510k.search', search(query)), 400, 'invalid_input', 'device-510k.search');
    expect(body.error.message).toBe('input.query has 346 OR branches; at most 32 are allowed.');
    expect(body.error.details).toEqual([{ path: 'input.query', message: 'has 346 OR branches; at most 32 are allowed' }]);
  });

  it('refuses it in an export too', async () => {
    const res = await fetch(`${server.url}/v1/export?format=csv&query=${encodeURIComponent(prefixes.join(' OR '))}`);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error).toMatchObject({ code: 'invalid_input' });
    expect(body.error.message).toContain('has 346 OR branches; at most 32 are allowed');
  });

  it('answers 32 OR branches, and meta meanwhile', async () => {
    const [answer, meta] = await Promise.all([
      ask(server.url, 'device-510k.search', search(prefixes.slice(0, 32).join(' OR '))),
      ask(server.url, 'device-510k.meta', {}),
    ]);
    expect(expectOk(answer, 'device-510k.search').page.total).toBeGreaterThan(0);
    expectOk(meta, 'device-510k.meta');
  });
});
