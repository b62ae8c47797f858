import { cp, rename, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { LAYOUT, type OperationName } from '../../src/contract/index.ts';
import { HealthBody } from '../../src/api/openapi.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { VALID_INPUT, allRecords, ask, expectError, expectOk, rawRequest, startServer, type Running } from './helpers.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/**
 * Health that tells the truth: a snapshot whose files go away is no longer served (503 everywhere, /healthz 503 with
 * the reason) until a valid one is there again; a refused snapshot repaired in place is taken on SIGHUP and on the
 * poll, without its manifest being touched.
 */

/** A copy of the fixture snapshot in a folder of its own, and a `snapshot` link to it. */
async function linkedCopy(): Promise<{ link: string; dir: string }> {
  const root = await testTempDir('device-510k-health-');
  const dir = join(root, 'snapshot-builds', 'one');
  await cp(await buildFixtureSnapshot(), dir, { recursive: true, dereference: true });
  const link = join(root, 'snapshot');
  await symlink(dir, link, 'dir');
  return { link, dir };
}

const someKNumber = async () => (await allRecords(await buildFixtureSnapshot()))[0]?.kNumber as string;

async function health(server: Running): Promise<{ status: number; body: ReturnType<typeof HealthBody.parse> }> {
  const res = await fetch(`${server.url}/healthz`);
  return { status: res.status, body: HealthBody.parse(await res.json()) };
}

const LOOKUPS: OperationName[] = ['device-510k.detail', 'device-510k.classification', 'device-510k.search', 'device-510k.catalog', 'device-510k.meta'];

async function expectUnavailableEverywhere(server: Running): Promise<void> {
  for (const op of LOOKUPS) expectError(await ask(server.url, op, VALID_INPUT[op]), 503, 'source_unavailable', op);
  const file = await rawRequest(server.url, { path: `/snapshot/${LAYOUT.meta}` });
  expect(file.status).toBe(503);
  const h = await health(server);
  expect(h.status).toBe(503);
  expect(h.body.status).toBe('unavailable');
  expect(h.body.sourceState.availability).toBe('unavailable');
}

describe('a snapshot whose folder is deleted while it serves', () => {
  it('answers 503 source_unavailable everywhere (never 500), healthz says why, and a new publish is taken', async () => {
    const { link, dir } = await linkedCopy();
    const server = await startServer({ snapshotPath: link, pollMs: 100 });
    try {
      expectOk(await ask(server.url, 'device-510k.detail', { id: await someKNumber() }), 'device-510k.detail');
      await rm(dir, { recursive: true, force: true });
      // The first request that needs a file finds it gone: 503, not a bug.
      expectError(await ask(server.url, 'device-510k.classification', { productCode: 'LWP' }), 503, 'source_unavailable', 'device-510k.classification');
      await vi.waitFor(async () => expect((await health(server)).status).toBe(503), { timeout: 5000, interval: 50 });
      await expectUnavailableEverywhere(server);
      // The folder may still be half there when the poll looks: its manifest is then missing.
      expect((await health(server)).body.reason).toMatch(/gone|does not exist|is missing/);
      expect(server.logger.errors.filter((e) => e.message === 'internal error')).toEqual([]);

      // Published again (here: the same content put back): served again without a restart.
      await cp(await buildFixtureSnapshot(), dir, { recursive: true, dereference: true });
      await vi.waitFor(async () => expect((await health(server)).status).toBe(200), { timeout: 10_000, interval: 100 });
      expectOk(await ask(server.url, 'device-510k.detail', { id: await someKNumber() }), 'device-510k.detail');
      expect((await health(server)).body.reason).toBeUndefined();
    } finally {
      await server.close();
    }
  });

  it('is noticed by the poll alone, with no request to fail first', async () => {
    const { link, dir } = await linkedCopy();
    const server = await startServer({ snapshotPath: link, pollMs: 100 });
    try {
      expect((await health(server)).status).toBe(200);
      await rm(dir, { recursive: true, force: true });
      await vi.waitFor(async () => expect((await health(server)).status).toBe(503), { timeout: 5000, interval: 50 });
      expect(server.logger.errors.some((e) => e.message.startsWith('snapshot dropped') || e.message.startsWith('snapshot refused'))).toBe(true);
    } finally {
      await server.close();
    }
  });
});

describe('a listed file that vanishes', () => {
  it('drops the snapshot once a request finds it gone; healthz names the file', async () => {
    const { link, dir } = await linkedCopy();
    const server = await startServer({ snapshotPath: link, pollMs: 0 });
    try {
      await rm(join(dir, 'product-codes', 'L.json'));
      expectError(await ask(server.url, 'device-510k.classification', { productCode: 'LWP' }), 503, 'source_unavailable', 'device-510k.classification');
      await vi.waitFor(async () => expect((await health(server)).status).toBe(503), { timeout: 5000, interval: 50 });
      expect((await health(server)).body.reason).toContain('product-codes/L.json: missing');
      await expectUnavailableEverywhere(server);
    } finally {
      await server.close();
    }
  });
});

describe('a refused snapshot repaired in place', () => {
  it('is taken on SIGHUP (reload) although its manifest did not change', async () => {
    const { link, dir } = await linkedCopy();
    await rename(join(dir, LAYOUT.meta), join(dir, 'meta.aside'));
    const server = await startServer({ snapshotPath: link, pollMs: 0 });
    try {
      expect(server.app.snapshots.current).toBeNull();
      const h = await health(server);
      expect(h.status).toBe(503);
      expect(h.body.reason).toContain('meta.json: missing');
      expect(await server.app.reload()).toBe('refused');
      await rename(join(dir, 'meta.aside'), join(dir, LAYOUT.meta));
      expect(await server.app.reload()).toBe('switched');
      expect((await health(server)).status).toBe(200);
      expectOk(await ask(server.url, 'device-510k.meta', {}), 'device-510k.meta');
    } finally {
      await server.close();
    }
  });

  it('is taken by the poll too, and the refusal is logged once meanwhile', async () => {
    const { link, dir } = await linkedCopy();
    await rename(join(dir, LAYOUT.meta), join(dir, 'meta.aside'));
    const server = await startServer({ snapshotPath: link, pollMs: 50 });
    try {
      expect((await health(server)).status).toBe(503);
      // Opened again and refused again, however often: still one line in the log.
      for (let i = 0; i < 3; i++) expect(await server.app.reload()).toBe('refused');
      expect(server.logger.errors.filter((e) => e.message.startsWith('snapshot refused'))).toHaveLength(1);
      await rename(join(dir, 'meta.aside'), join(dir, LAYOUT.meta));
      await vi.waitFor(async () => expect((await health(server)).status).toBe(200), { timeout: 10_000, interval: 100 });
    } finally {
      await server.close();
    }
  }, 20_000);
});
