import { spawn, spawnSync } from 'node:child_process';
import { mkdir, readdir, realpath, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildsDirFor } from '../../build/publish/publish.ts';
import { FIXTURE_SOURCES, buildFixture } from '../helpers/fixture-snapshot.ts';
import { ask, expectOk, startServer, type Running } from '../server/helpers.ts';
import { SEED, figure, isSymlink, seeded, snapshotProblems } from './helpers.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/**
 * Builds killed with SIGKILL at seeded random points, from start-up to publishing: the `snapshot` link must always
 * point at a complete snapshot (every file as its manifest says, byte for byte), the running server must go on
 * answering from it, and the next build must succeed and clear what the dead ones left behind.
 */
const REPO = fileURLToPath(new URL('../..', import.meta.url));
/** The build's progress lines (stderr), in order: a kill is aimed just after one of them. */
const STAGES = ['read sources', 'normalize and merge', 'write record shards', 'change log', 'write answers', 'static feeds', 'search index'];
const KILLS = 8;

type Child = { pid: number; done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>; kill: () => void; stages: string[] };

/** The build CLI as its own process (node itself, not a wrapper, so that SIGKILL hits the build). */
function startBuild(out: string, epoch: number): Child {
  const args = ['--import', 'tsx', 'build/cli.ts', '--out', out, ...FIXTURE_SOURCES.flatMap((s) => ['--source', s])];
  const child = spawn(process.execPath, args, { cwd: REPO, env: { ...process.env, SOURCE_DATE_EPOCH: String(epoch) }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const stages: string[] = [];
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    for (const line of d.toString().split('\n')) {
      const stage = STAGES.find((s) => line.startsWith(`${s}:`));
      if (stage) stages.push(stage);
    }
  });
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    // 'close', not 'exit': by then every progress line has been read.
    child.on('close', (code, signal) => resolve({ code, signal, stderr })),
  );
  return { pid: child.pid as number, done, kill: () => child.kill('SIGKILL'), stages };
}

/** A pid that no process has now: one of a process that has just exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid as number;
}

async function leftovers(out: string): Promise<{ staging: string[]; links: string[]; published: string[] }> {
  const builds = await readdir(buildsDirFor(out)).catch(() => [] as string[]);
  const beside = await readdir(join(out, '..'));
  return {
    staging: builds.filter((n) => n.startsWith('.staging-')),
    links: beside.filter((n) => n.startsWith('.snapshot.link-')),
    published: builds.filter((n) => !n.startsWith('.')),
  };
}

/** The link points at a whole snapshot, and the server serves exactly that one. */
async function expectWholeAndServed(out: string, server: Running): Promise<string> {
  const target = await realpath(out);
  const { manifest, problems } = await snapshotProblems(target);
  expect(problems).toEqual([]);
  await server.app.reload();
  expect(server.app.snapshots.current?.id).toBe(manifest?.snapshotId);
  expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  expectOk(await ask(server.url, 'device-510k.meta', {}), 'device-510k.meta');
  return target;
}

describe('builds killed at random points', () => {
  let out: string;
  let server: Running;

  beforeAll(async () => {
    out = join(await testTempDir('device-510k-crash-'), 'snapshot');
    await buildFixture({ out });
    server = await startServer({ snapshotPath: out, watch: true, pollMs: 100 });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('leave the published snapshot whole and served; the next build succeeds and clears their leftovers', async () => {
    const rng = seeded(SEED + 3);
    const landed = new Map<string, number>();
    let survived = 0;
    let previous = await realpath(out);
    for (let i = 0; i < KILLS; i++) {
      // Aim at each stage in turn (and at start-up), a random moment after it is reported.
      const aim = i === 0 ? 'start-up' : (STAGES[(i - 1) % STAGES.length] as string);
      const delay = aim === 'start-up' ? rng.int(1500) : rng.int(150);
      const build = startBuild(out, 1_800_000_000 + i * 86_400);
      if (aim !== 'start-up') {
        await vi.waitFor(() => expect(build.stages.includes(aim) || build.stages.length === STAGES.length).toBe(true), { timeout: 60_000, interval: 5 });
      }
      await new Promise((r) => setTimeout(r, delay));
      build.kill();
      const { signal, code } = await build.done;
      const where = signal === 'SIGKILL' ? `killed after ${build.stages.at(-1) ?? 'start-up'}` : `finished first (exit ${code})`;
      landed.set(where, (landed.get(where) ?? 0) + 1);

      const now = await expectWholeAndServed(out, server);
      // Either the build died before its switch, and the old snapshot stays, or it had published a whole new one.
      if (signal === 'SIGKILL' && build.stages.length < STAGES.length) expect(now).toBe(previous);
      previous = now;
      survived++;
    }
    const before = await leftovers(out);

    const final = startBuild(out, 1_900_000_000);
    const result = await final.done;
    expect(result.code, result.stderr).toBe(0);
    const target = await realpath(out);
    expect(target).not.toBe(previous);
    await vi.waitFor(async () => expect((await snapshotProblems(target)).manifest?.snapshotId).toBe(server.app.snapshots.current?.id), { timeout: 10_000 });
    await expectWholeAndServed(out, server);
    const after = await leftovers(out);

    figure('crash: builds killed (SIGKILL) and survived', survived);
    figure('crash: where the kills landed', [...landed].map(([w, n]) => `${w} ${n}`).join(', '));
    figure('crash: staging directories left by dead builds, then after the next build', `${before.staging.length}, ${after.staging.length}`);
    expect(survived).toBe(KILLS);
    expect(after.staging).toEqual([]);
    expect(after.links).toEqual([]);
    // The active snapshot and the two before it; older ones are pruned.
    expect(after.published.length).toBeLessThanOrEqual(3);
  }, 180_000);

  it('a dead build’s half-written staging directory and stray link are cleared by the next build', async () => {
    const pid = deadPid();
    const builds = buildsDirFor(out);
    const staging = join(builds, `.staging-${pid}-0badc0de`);
    await mkdir(join(staging, 'records'), { recursive: true });
    await writeFile(join(staging, 'records', 'K0000.json'), '[{"id":"K00');
    // A link made just before the rename that would have published it.
    await symlink(staging, join(out, '..', `.snapshot.link-${pid}-0badc0`), 'dir');
    expect((await leftovers(out)).staging).toContain(`.staging-${pid}-0badc0de`);

    const result = await startBuild(out, 1_950_000_000).done;
    expect(result.code, result.stderr).toBe(0);
    const after = await leftovers(out);
    expect(after.staging).toEqual([]);
    expect(after.links).toEqual([]);
    expect(await isSymlink(out)).toBe(true);
    await expectWholeAndServed(out, server);
  }, 60_000);
});

describe('the very first build killed', () => {
  it('leaves no snapshot at all; the server answers 503, then picks up the next build by itself', async () => {
    const out = join(await testTempDir('device-510k-crash-first-'), 'snapshot');
    const server = await startServer({ snapshotPath: out, watch: true, pollMs: 100 });
    try {
      const build = startBuild(out, 1_800_000_000);
      await vi.waitFor(() => expect(build.stages).toContain('write record shards'), { timeout: 60_000, interval: 5 });
      build.kill();
      expect((await build.done).signal).toBe('SIGKILL');
      expect(await isSymlink(out)).toBe(false);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(503);

      const result = await startBuild(out, 1_800_086_400).done;
      expect(result.code, result.stderr).toBe(0);
      // No reload(): the server notices the link by itself.
      await vi.waitFor(async () => expect((await fetch(`${server.url}/healthz`)).status).toBe(200), { timeout: 10_000, interval: 50 });
      expect((await snapshotProblems(await realpath(out))).problems).toEqual([]);
      expect((await leftovers(out)).staging).toEqual([]);
    } finally {
      await server.close();
    }
  }, 60_000);
});
