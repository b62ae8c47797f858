import { execFile, spawn } from 'node:child_process';
import { copyFile, mkdir, readdir, readFile, realpath, rm, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { MAX_COMPRESSED_BYTES, NODE_IMPORT } from '../helpers/worker-bundle.ts';
import { pageBesideApi } from '../../src/server/public-dir.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

type Ran = { code: number; stdout: string; stderr: string };
function run(file: string, args: string[], cwd: string, env: Record<string, string>): Promise<Ran> {
  return new Promise((done) => {
    execFile(file, args, { cwd, encoding: 'utf8', timeout: 240_000, env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      done({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

/** The repository as a fresh clone has it: the files git tracks (and new ones not ignored), no dist/, no snapshot. */
async function freshCopy(): Promise<string> {
  const dir = join(await testTempDir('device-510k-clone-'), 'device-510k');
  const listed = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], ROOT, {});
  const files = listed.stdout.split('\0').filter(Boolean);
  expect(files).toContain('wrangler.toml');
  for (const file of files) {
    const from = join(ROOT, file);
    // A tracked file deleted in the work tree is not in the clone either.
    await mkdir(dirname(join(dir, file)), { recursive: true });
    await copyFile(from, join(dir, file)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }
  // The installed packages, as `npm ci` would give them (not copied: the copy is about the repository's files).
  await symlink(await realpath(join(ROOT, 'node_modules')), join(dir, 'node_modules'));
  return dir;
}

const QUIET = { WRANGLER_SEND_METRICS: 'false', CI: 'true', NO_COLOR: '1' };

// Both tests run in one fresh copy (the work tree's dist/ is never written, so they cannot race another test file).
let clone: string;
let snapshotPath: string;
beforeAll(async () => {
  snapshotPath = await buildFixtureSnapshot();
  clone = await freshCopy();
}, 120_000);
afterAll(async () => {
  if (clone) await rm(dirname(clone), { recursive: true, force: true });
});

describe('deploying the Worker from a fresh clone', () => {
  it('npx wrangler deploy --dry-run fills the assets with its build step and passes, offline', async () => {
    const out = await testTempDir('device-510k-dryrun-');
    try {
      await expect(readdir(join(clone, 'dist'))).rejects.toThrow(/ENOENT/);
      // SNAPSHOT_PATH: the fixture snapshot instead of building the bundled FDA files (the same step, smaller).
      const ran = await run('npx', ['wrangler', 'deploy', '--dry-run', '--outdir', out], clone, { ...QUIET, SNAPSHOT_PATH: snapshotPath });
      expect(ran.stdout + ran.stderr).toMatch(/--dry-run: exiting now/);
      expect(ran.code).toBe(0);
      expect(ran.stdout).toMatch(/env\.ASSETS/);
      const assets = join(clone, 'dist/worker-assets');
      // The page beside the Worker's API: the repository's, less the hints only a static host's visitors use.
      const page = await readFile(join(assets, 'index.html'), 'utf8');
      expect(page).toBe(pageBesideApi(await readFile(join(ROOT, 'public/index.html'), 'utf8')));
      expect(page).not.toMatch(/data-static-host|snapshot\/search\/chunks\.json/);
      expect(page).toMatch(/<script type="module" src="js\/app\.js"><\/script>/);
      expect(await readFile(join(assets, 'snapshot/manifest.json'), 'utf8')).toBe(await readFile(join(snapshotPath, 'manifest.json'), 'utf8'));
      const code = await readFile(join(out, 'index.js'), 'utf8');
      expect(code).toMatch(/device-510k\.catalog/);
      expect(code).not.toMatch(NODE_IMPORT);
      expect(gzipSync(code).length).toBeLessThan(MAX_COMPRESSED_BYTES);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  }, 300_000);
});

/** The processes below `pid` (children, their children, ...), read from /proc. */
async function descendants(pid: number): Promise<number[]> {
  const out: number[] = [];
  const children = async (p: number): Promise<number[]> => {
    const tasks = await readdir(`/proc/${p}/task`).catch(() => [] as string[]);
    const found: number[] = [];
    for (const t of tasks) {
      const text = await readFile(`/proc/${p}/task/${t}/children`, 'utf8').catch(() => '');
      found.push(...text.split(' ').filter(Boolean).map(Number));
    }
    return found;
  };
  const queue = [pid];
  while (queue.length > 0 && out.length < 100) {
    for (const child of await children(queue.shift() ?? 0)) {
      out.push(child);
      queue.push(child);
    }
  }
  return out;
}

/** Whether a process still runs (a zombie waiting for its parent does not). */
async function alive(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  return stat !== null && !/^\d+ \(.*\) Z/.test(stat);
}

async function answers(url: string): Promise<boolean> {
  return fetch(url, { signal: AbortSignal.timeout(2_000) }).then(
    (res) => res.body?.cancel().then(() => true) ?? true,
    () => false,
  );
}

async function until(condition: () => Promise<boolean>, deadlineMs: number, what: string): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.skipIf(process.platform !== 'linux')('npm run worker', () => {
  const started: number[] = [];
  afterAll(() => {
    // Whatever the test saw start and is still there (only when it failed).
    for (const pid of started) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
  });

  it("stops on SIGTERM to npm's pid: npm, node and workerd all exit and the port stops answering", async () => {
    const npm = spawn('npm', ['run', 'worker', '--no-update-notifier'], {
      cwd: clone,
      env: { ...process.env, PORT: '0', SNAPSHOT_PATH: snapshotPath, npm_config_loglevel: 'error' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const pid = npm.pid ?? 0;
    started.push(pid);
    let output = '';
    npm.stdout.on('data', (c: Buffer) => (output += c.toString()));
    npm.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<void>((resolve) => npm.on('exit', () => resolve()));
    let npmExited = false;
    void exited.then(() => (npmExited = true));

    await until(async () => /answers at (http:\/\/[\d.:]+)\//.test(output) || npmExited, 120_000, `npm run worker answers (${output})`);
    const url = /answers at (http:\/\/[\d.:]+)\//.exec(output)?.[1] ?? '';
    expect(url, output).not.toBe('');
    await until(() => answers(`${url}/healthz`), 30_000, 'the Worker answers /healthz');
    const below = await descendants(pid);
    started.push(...below);
    const names = await Promise.all(below.map((p) => readFile(`/proc/${p}/comm`, 'utf8').then((s) => s.trim(), () => '?')));
    expect(names).toContain('workerd');

    process.kill(pid, 'SIGTERM');
    await until(async () => npmExited, 30_000, 'npm exits');
    await until(async () => !(await answers(`${url}/healthz`)), 30_000, 'the port stops answering');
    await until(async () => !(await Promise.all(below.map(alive))).some(Boolean), 30_000, `no process of npm run worker remains (${names.join(', ')})`);
  }, 240_000);
});
