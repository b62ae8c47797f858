import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { cp, mkdtemp, readFile, rename, symlink, truncate, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LAYOUT, ResponseSchemas, SNAPSHOT_SCHEMA_VERSION } from '../../src/contract/index.ts';
import { FIXTURE_EPOCH, FIXTURE_SOURCES, buildFixture } from '../helpers/fixture-snapshot.ts';
import { MainProcess } from '../helpers/main-process.ts';
import { ask, envelope, expectError, expectOk, startServer, type Running } from './helpers.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/**
 * Snapshot switching (a build publishing while the server runs), refusal of a broken snapshot, start-up with no
 * snapshot, and the real `npm start` process draining on SIGTERM.
 */
const REPO = fileURLToPath(new URL('../..', import.meta.url));
type Build = Awaited<ReturnType<typeof buildFixture>>;

/** Points the link at a directory the way publish does: a fresh link renamed over the old one. */
async function pointLink(link: string, target: string): Promise<void> {
  const tmp = join(dirname(link), `.${basename(link)}.tmp-${process.pid}`);
  await symlink(target, tmp, 'dir');
  await rename(tmp, link);
}

/**
 * Starts a POST whose body is held back until `finish()`: a request in flight for as long as the test wants. It asks
 * for `100 Continue` first, which the server sends as its handler takes the request (and the snapshot it will answer
 * from), so `reached` says when the request is in the server's hands.
 */
function heldRequest(url: string, body: string) {
  const { hostname, port } = new URL(url);
  let resolveAnswer: (v: { status: number; json: any }) => void;
  const answer = new Promise<{ status: number; json: any }>((r) => (resolveAnswer = r));
  const req = httpRequest(
    {
      hostname,
      port,
      method: 'POST',
      path: '/v1/query',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), expect: '100-continue' },
    },
    (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolveAnswer({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
    },
  );
  const reached = new Promise<void>((resolve, reject) => {
    req.once('continue', () => resolve());
    req.once('error', reject);
    req.once('response', () => reject(new Error('answered before its body was sent')));
  });
  req.flushHeaders();
  return {
    reached,
    answer,
    finish: () => req.end(body),
  };
}

describe('switching snapshots under load', () => {
  let a: Build;
  let out: string;
  let server: Running;

  beforeAll(async () => {
    out = join(await testTempDir('device-510k-switch-'), 'snapshot');
    a = await buildFixture({ out });
    server = await startServer({ snapshotPath: out, watch: true, pollMs: 200 });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('serves the new snapshot from the next request on; requests in flight finish on the old one; none fails', async () => {
    const held = heldRequest(server.url, JSON.stringify(envelope('device-510k.meta', {})));
    await held.reached;

    const answers: { status: number; revision: string; total: number | null }[] = [];
    let stop = false;
    const loop = async (n: number) => {
      while (!stop) {
        const which = n % 3;
        const res =
          which === 0
            ? await ask(server.url, 'device-510k.meta', {})
            : which === 1
              ? await ask(server.url, 'device-510k.catalog', { kind: 'clearance', limit: 20, cursor: null })
              : await ask(server.url, 'device-510k.top-product-codes', { limit: 5 });
        const op = which === 0 ? 'device-510k.meta' : which === 1 ? 'device-510k.catalog' : 'device-510k.top-product-codes';
        const parsed = ResponseSchemas[op].safeParse(res.json);
        const json = res.json as { sourceState?: { sourceRevision?: string }; data?: { totalRecords?: number }; page?: { total?: number } };
        answers.push({
          status: parsed.success ? res.status : -1,
          revision: json.sourceState?.sourceRevision ?? '',
          total: json.data?.totalRecords ?? json.page?.total ?? null,
        });
        // Pacing, not a wait: leave the build, which runs in this same process, some of the event loop.
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    const loops = Array.from({ length: 6 }, (_, n) => loop(n));

    // The next build: without the openFDA sample, so its revision and record count differ.
    const b = await buildFixture({ out, sources: FIXTURE_SOURCES.slice(1), epoch: 1_800_000_000 });
    expect(b.manifest.sourceRevision).not.toBe(a.manifest.sourceRevision);
    expect(b.manifest.counts.records).not.toBe(a.manifest.counts.records);
    await vi.waitFor(() => expect(server.app.snapshots.current?.manifest.sourceRevision).toBe(b.manifest.sourceRevision), { timeout: 10_000 });
    const switchedAt = answers.length;
    // A few rounds of every loop after the switch.
    await vi.waitFor(() => expect(answers.length).toBeGreaterThanOrEqual(switchedAt + 6 * 4), { timeout: 20_000 });
    stop = true;
    await Promise.all(loops);

    held.finish();
    const heldAnswer = await held.answer;
    expect(heldAnswer.status).toBe(200);
    expect(heldAnswer.json.sourceState.sourceRevision).toBe(a.manifest.sourceRevision);
    expect(heldAnswer.json.data.totalRecords).toBe(a.manifest.counts.records);

    expect(answers.length).toBeGreaterThan(switchedAt);
    expect(answers.filter((x) => x.status !== 200)).toEqual([]);
    // Every answer is whole: its data and its sourceState come from the same snapshot.
    for (const x of answers) {
      if (x.total === null) expect([a.manifest.sourceRevision, b.manifest.sourceRevision]).toContain(x.revision);
      else if (x.revision === a.manifest.sourceRevision) expect(x.total).toBe(a.manifest.counts.records);
      else if (x.revision === b.manifest.sourceRevision) expect(x.total).toBe(b.manifest.counts.records);
      else throw new Error(`an answer from no known snapshot: ${x.revision}`);
    }
    // Once switched, only the new snapshot answers.
    const after = answers.slice(switchedAt + 6);
    expect(after.length).toBeGreaterThan(0);
    expect(after.every((x) => x.revision === b.manifest.sourceRevision)).toBe(true);
    expect(server.logger.infos.filter((m) => m === 'snapshot loaded')).toHaveLength(2);
    // A build runs in this process beside six clients: bounded for a loaded machine, not timed.
  }, 90_000);
});

describe('a broken new snapshot is refused', () => {
  let a: Build;
  let out: string;
  let server: Running;

  beforeAll(async () => {
    out = join(await testTempDir('device-510k-refuse-'), 'snapshot');
    a = await buildFixture({ out });
    server = await startServer({ snapshotPath: out });
  });
  afterAll(async () => {
    await server?.close();
  });

  const broken: [string, (dir: string) => Promise<void>, RegExp][] = [
    ['a truncated shard', async (dir) => truncate(join(dir, LAYOUT.recordIndex), 10), /records\/index\.json: 10 bytes/],
    ['a missing manifest', async (dir) => rename(join(dir, LAYOUT.manifest), join(dir, 'manifest.old')), /manifest\.json is missing/],
    ['a manifest that is not JSON', async (dir) => writeFile(join(dir, LAYOUT.manifest), '{"schemaVersion":'), /not valid JSON/],
    ['a manifest of another schema version', async (dir) => {
      const m = JSON.parse(await readFile(join(dir, LAYOUT.manifest), 'utf8'));
      await writeFile(join(dir, LAYOUT.manifest), JSON.stringify({ ...m, schemaVersion: SNAPSHOT_SCHEMA_VERSION + 1 }));
    }, /schemaVersion/],
    ['a missing file', async (dir) => rename(join(dir, LAYOUT.meta), join(dir, 'meta.old')), /meta\.json: missing/],
  ];

  it.each(broken)('%s: logged, and the old snapshot keeps serving', async (_name, breakIt, reason) => {
    const dir = await mkdtemp(join(dirname(out), 'snapshot-builds', 'broken-'));
    await cp(a.dir, dir, { recursive: true });
    await breakIt(dir);
    const errorsBefore = server.logger.errors.length;
    await pointLink(out, dir);
    expect(await server.app.reload()).toBe('refused');
    const logged = server.logger.errors.slice(errorsBefore);
    expect(logged).toHaveLength(1);
    expect(logged[0]?.message).toContain('refused');
    expect(String(logged[0]?.fields?.reason)).toMatch(reason);
    // Asked again, it stays refused without logging again.
    expect(await server.app.reload()).toBe('refused');
    expect(server.logger.errors.length).toBe(errorsBefore + 1);

    const meta = expectOk(await ask(server.url, 'device-510k.meta', {}), 'device-510k.meta');
    expect(meta.sourceState.sourceRevision).toBe(a.manifest.sourceRevision);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it('a valid snapshot published after a broken one is taken', async () => {
    await pointLink(out, a.dir);
    const b = await buildFixture({ out, sources: FIXTURE_SOURCES.slice(1), epoch: 1_800_000_000 });
    expect(await server.app.reload()).toBe('switched');
    const meta = expectOk(await ask(server.url, 'device-510k.meta', {}), 'device-510k.meta');
    expect(meta.sourceState.sourceRevision).toBe(b.manifest.sourceRevision);
  });
});

describe('starting with no snapshot', () => {
  it('answers 503 until a build publishes one, then serves it without a restart', async () => {
    const out = join(await testTempDir('device-510k-late-'), 'snapshot');
    const server = await startServer({ snapshotPath: out, watch: true, pollMs: 200 });
    try {
      expectError(await ask(server.url, 'device-510k.meta', {}), 503, 'source_unavailable', 'device-510k.meta');
      const built = await buildFixture({ out });
      await vi.waitFor(async () => expect((await fetch(`${server.url}/healthz`)).status).toBe(200), { timeout: 10_000 });
      const meta = expectOk(await ask(server.url, 'device-510k.meta', {}), 'device-510k.meta');
      expect(meta.data.totalRecords).toBe(built.manifest.counts.records);
    } finally {
      await server.close();
    }
  });
});

describe('npm start', () => {
  it('listens on PORT and HOST, and on SIGTERM finishes the request in flight, then exits 0', async () => {
    const out = join(await testTempDir('device-510k-main-'), 'snapshot');
    const built = await buildFixture({ out });
    const main = new MainProcess({ SNAPSHOT_PATH: out, SYNC_STATE_PATH: join(dirname(out), 'state.json') }, { cwd: REPO });
    const { child, exited } = main;
    try {
      const url = await vi.waitFor(
        () => {
          const m = /"msg":"listening","url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(main.stdout);
          if (!m) throw new Error(`not listening yet: ${main.stdout}${main.stderr}`);
          return m[1] as string;
        },
        { timeout: 20_000, interval: 100 },
      );
      expectOk(await ask(url, 'device-510k.meta', {}), 'device-510k.meta');

      const held = heldRequest(url, JSON.stringify(envelope('device-510k.meta', {})));
      await held.reached;
      child.kill('SIGTERM');
      // The body arrives only once the server has stopped taking connections.
      await vi.waitFor(() => expect(main.stdout).toContain('"msg":"draining"'), { timeout: 10_000 });
      held.finish();
      const answer = await held.answer;
      expect(answer.status).toBe(200);
      expect(answer.json.data.totalRecords).toBe(built.manifest.counts.records);
      expect(await exited).toBe(0);
      expect(main.stdout).toContain('"msg":"draining"');
      // One request line for each request, none with a body.
      const lines = main.stdout.split('\n').filter((l) => l.includes('"msg":"request"'));
      expect(lines).toHaveLength(2);
      expect(main.stderr).not.toContain('"level":"error"');
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe('npm start, stopped as a process manager stops it', () => {
  it('SIGTERM to the PID npm start created stops the server: the port is closed', async () => {
    const out = join(await testTempDir('device-510k-npm-'), 'snapshot');
    await buildFixture({ out });
    // Exactly what a user or a service unit runs; `npm` is found on the PATH like in a shell.
    const child = spawn('npm', ['start'], {
      cwd: REPO,
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', SNAPSHOT_PATH: out, SYNC_STATE_PATH: join(dirname(out), 'state.json') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', () => {});
    let serverPid: number | null = null;
    try {
      const url = await vi.waitFor(
        () => {
          const m = /"msg":"listening","url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(stdout);
          if (!m) throw new Error(`not listening yet: ${stdout}`);
          return m[1] as string;
        },
        { timeout: 30_000, interval: 100 },
      );
      serverPid = Number(/"pid":(\d+)/.exec(stdout)?.[1] ?? NaN);
      expectOk(await ask(url, 'device-510k.meta', {}), 'device-510k.meta');
      process.kill(child.pid as number, 'SIGTERM');
      expect(await exited).toBe(0);
      // Nothing listens any more: the server itself stopped, not only npm.
      await vi.waitFor(
        async () => {
          const refused = await fetch(`${url}/healthz`).then(
            () => false,
            () => true,
          );
          expect(refused).toBe(true);
        },
        { timeout: 15_000, interval: 100 },
      );
      expect(stdout).toContain('"msg":"draining"');
      if (Number.isInteger(serverPid)) expect(() => process.kill(serverPid as number, 0)).toThrow();
    } finally {
      child.kill('SIGKILL');
      if (serverPid && Number.isInteger(serverPid)) {
        try {
          process.kill(serverPid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
  }, 60_000);
});

describe('npm start with WORKERS', () => {
  it('runs that many workers on one port; a published snapshot reaches every one; SIGTERM drains them all and exits 0', async () => {
    const out = join(await testTempDir('device-510k-workers-'), 'snapshot');
    const first = await buildFixture({ out });
    const main = new MainProcess({ WORKERS: '2', SNAPSHOT_PATH: out, SYNC_STATE_PATH: join(dirname(out), 'state.json') }, { cwd: REPO });
    const { child, exited } = main;
    try {
      const urls = await vi.waitFor(
        () => {
          const found = [...main.stdout.matchAll(/"msg":"listening","url":"(http:\/\/127\.0\.0\.1:\d+)"/g)].map((m) => m[1] as string);
          if (found.length < 2) throw new Error(`not listening yet: ${main.stdout}${main.stderr}`);
          return found;
        },
        { timeout: 30_000, interval: 100 },
      );
      expect(new Set(urls).size).toBe(1);
      const url = urls[0] as string;
      for (let i = 0; i < 10; i++) expect(expectOk(await ask(url, 'device-510k.meta', {}), 'device-510k.meta').sourceState.snapshotGeneratedAt).toBe(first.manifest.generatedAt);

      const second = await buildFixture({ out, epoch: FIXTURE_EPOCH + 3600 });
      expect(second.manifest.generatedAt).not.toBe(first.manifest.generatedAt);
      child.kill('SIGHUP'); // forwarded to each worker; each also follows the link by itself
      await vi.waitFor(() => expect([...main.stdout.matchAll(/"msg":"snapshot loaded"/g)].length).toBe(4), { timeout: 20_000, interval: 100 });
      for (let i = 0; i < 10; i++) expect(expectOk(await ask(url, 'device-510k.meta', {}), 'device-510k.meta').sourceState.snapshotGeneratedAt).toBe(second.manifest.generatedAt);

      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect([...main.stdout.matchAll(/"msg":"draining"/g)].length).toBe(3);
      expect(main.stdout).toContain('"msg":"all workers stopped"');
      expect(main.stderr).not.toContain('"level":"error"');
    } finally {
      child.kill('SIGKILL');
    }
  }, 90_000);
});
