import { execFile } from 'node:child_process';
import { readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runBuild, type BuildOptions } from '../../build/snapshot/build.ts';
import type { SyncOptions } from '../../build/sync/config.ts';
import { runSync } from '../../build/sync/run.ts';
import { ChangeLog, CHANGES_PATH } from '../../src/contract/changes.ts';
import { LAYOUT, Manifest } from '../../src/contract/index.ts';
import { SyncState } from '../../src/contract/sync.ts';
import { editPmnText, PMN } from './edit-fixture.ts';
import { fixtureText, ORIGIN_FILE_NAMES, startOrigin, zipText, type Origin } from './origin.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

const run = promisify(execFile);
const BUNDLED_EDGES = fileURLToPath(new URL('../../data/fda/predicates', import.meta.url));

let origin: Origin;
let work: string;
let dir: string;
let out: string;
let clock: number;
let builds: number;

/** A clock that moves a minute per reading, so every recorded time is distinct and predictable in order. */
const now = () => new Date(Date.UTC(2026, 7, 17, 2, 0, 0) + clock++ * 60_000);

const options = (extra: Partial<SyncOptions> = {}): Partial<SyncOptions> => ({
  baseUrl: origin.url,
  files: ORIGIN_FILE_NAMES,
  dir,
  out,
  // Generous, so a loaded machine does not fail the tests that expect success; the hang case sets 200 ms.
  timeoutMs: 2_000,
  retries: 2,
  baseDelayMs: 5,
  maxDelayMs: 20,
  now,
  // The command line's: the bundled edge folders, so that a library run and a command-line run build alike.
  edges: [BUNDLED_EDGES],
  build: (o: BuildOptions) => {
    builds++;
    return runBuild({ ...o, sourceDateEpoch: 1_786_924_800 });
  },
  ...extra,
});

/** Downloads run in parallel, so requests arrive in any order. */
const byPath = <T extends { path: string }>(requests: T[]): T[] => [...requests].sort((a, b) => (a.path < b.path ? -1 : 1));
const readState = async () => SyncState.parse(JSON.parse(await readFile(join(dir, 'state.json'), 'utf8')));
const readManifest = async () => Manifest.parse(JSON.parse(await readFile(join(out, LAYOUT.manifest), 'utf8')));

/** What a failed sync must leave alone: the served snapshot, the verified sources and their validators. */
async function servedAndVerified() {
  const sources = join(dir, 'sources');
  const files = await Promise.all((await readdir(sources)).sort().map(async (n) => [n, (await readFile(join(sources, n))).toString('base64')]));
  const state = await readState();
  return {
    link: await readlink(out),
    manifest: await readFile(join(out, LAYOUT.manifest), 'utf8'),
    sources: files,
    files: state.files,
    lastSuccessfulSyncAt: state.lastSuccessfulSyncAt,
  };
}

beforeAll(async () => {
  origin = await startOrigin();
  work = await testTempDir('sync-');
  dir = join(work, '.sync');
  out = join(work, 'snapshot');
  clock = 0;
  builds = 0;
});
afterAll(async () => {
  await origin.close();
  await rm(work, { recursive: true, force: true });
});
beforeEach(() => {
  origin.requests.length = 0;
});

// Most of these runs build a snapshot, which on a loaded machine takes longer than the default 30 s.
describe('the nightly sync against a local origin', { timeout: 120_000 }, () => {
  it('first run: downloads every file, verifies it, builds and publishes, and records the success', async () => {
    const result = await runSync(options());
    expect(result.outcome).toBe('built');
    expect(result.files.map((f) => [f.name, f.status, f.changed])).toEqual(ORIGIN_FILE_NAMES.map((n) => [n, 'downloaded', true]));
    expect(byPath(origin.requests).map((r) => [r.path, r.ifNoneMatch, r.status])).toEqual(
      [...ORIGIN_FILE_NAMES].sort().map((n) => [`/ftparea/${n}`, null, 200]),
    );
    expect(builds).toBe(1);

    const state = await readState();
    expect(state.lastFailure).toBeNull();
    expect(state.lastAttemptAt).toBe('2026-08-17T02:00:00.000Z');
    expect(state.lastSuccessfulSyncAt).toBe('2026-08-17T02:01:00.000Z');
    expect(Object.keys(state.files)).toEqual(ORIGIN_FILE_NAMES);
    expect(state.files['pmn7680.zip']).toMatchObject({ etag: origin.files.get('pmn7680.zip')?.etag, rows: 149 });
    expect(state.files['pmn96cur.zip']?.rows).toBe(39);
    expect(state.files['foiclass.zip']?.rows).toBe(208);

    const manifest = await readManifest();
    expect(manifest.lastSuccessfulSyncAt).toBe(state.lastSuccessfulSyncAt);
    expect(manifest.sources.map((s) => s.name.split('!')[1])).toEqual(['pmn7680.txt', 'pmn96cur.txt', 'foiclass.txt']);
    expect(manifest.counts.records).toBeGreaterThan(150);
    expect(await readdir(dir)).not.toContain('incoming');
  });

  it('304 Not Modified: asks conditionally, downloads nothing, rebuilds nothing, and records the success', async () => {
    const before = await servedAndVerified();
    const result = await runSync(options());
    expect(result.outcome).toBe('unchanged');
    expect(builds).toBe(1);
    expect(byPath(origin.requests).map((r) => [r.path, r.ifNoneMatch, r.status, r.bytes])).toEqual(
      [...ORIGIN_FILE_NAMES].sort().map((n) => [`/ftparea/${n}`, origin.files.get(n)?.etag, 304, 0]),
    );
    const after = await servedAndVerified();
    expect(after.link).toBe(before.link);
    expect(after.manifest).toBe(before.manifest);
    expect(after.lastSuccessfulSyncAt).not.toBe(before.lastSuccessfulSyncAt);
    expect(Date.parse(after.lastSuccessfulSyncAt ?? '')).toBeGreaterThan(Date.parse(before.lastSuccessfulSyncAt ?? ''));
    expect((await readState()).history.map((h) => h.outcome)).toEqual(['unchanged', 'built']);
  });

  it('an origin that ignores validators: the same bytes again rebuild nothing', async () => {
    for (const n of ORIGIN_FILE_NAMES) origin.fault(n, { kind: 'ignore-validators' });
    try {
      const result = await runSync(options());
      expect(result.outcome).toBe('unchanged');
      expect(result.files.every((f) => f.status === 'downloaded' && !f.changed)).toBe(true);
      expect(builds).toBe(1);
    } finally {
      for (const n of ORIGIN_FILE_NAMES) origin.fault(n, undefined);
    }
  });

  describe('faults: the served snapshot stays, the failure is recorded', () => {
    const cases: { name: string; file: string; arrange: () => Promise<void> | void; reason: RegExp; attempts: number; timeoutMs?: number }[] = [
      {
        name: 'HTTP 500',
        file: 'pmn96cur.zip',
        arrange: () => origin.fault('pmn96cur.zip', { kind: 'status', status: 500 }),
        reason: /^pmn96cur\.zip: could not be downloaded from http:\/\/127\.0\.0\.1:\d+\/ftparea\/pmn96cur\.zip: HTTP 500 Internal Server Error \(after 3 attempts\)$/,
        attempts: 3,
      },
      {
        name: 'a hang past the timeout',
        file: 'foiclass.zip',
        arrange: () => origin.fault('foiclass.zip', { kind: 'hang' }),
        reason: /^foiclass\.zip: could not be downloaded from http:\/\/127\.0\.0\.1:\d+\/ftparea\/foiclass\.zip: no complete answer within 200 ms \(after 3 attempts\)$/,
        attempts: 3,
        timeoutMs: 200,
      },
      {
        name: 'a connection cut mid-body',
        file: 'pmn7680.zip',
        arrange: () => origin.fault('pmn7680.zip', { kind: 'short-body' }),
        reason: /^pmn7680\.zip: could not be downloaded from http:\/\/127\.0\.0\.1:\d+\/ftparea\/pmn7680\.zip: .*\(after 3 attempts\)$/,
        attempts: 3,
      },
      {
        name: 'a truncated zip',
        file: 'pmn7680.zip',
        arrange: async () => {
          const whole = zipText('pmn7680.zip', `${await fixtureText('pmn-1976-1990-sample.txt')}`);
          origin.put('pmn7680.zip', whole.subarray(0, Math.floor(whole.byteLength * 0.6)));
        },
        reason: /^pmn7680\.zip: not a complete zip: no end-of-central-directory record/,
        attempts: 1,
      },
      {
        name: 'a changed header',
        file: 'pmn96cur.zip',
        arrange: async () => {
          const text = (await fixtureText('pmnlstmn-2020-sample.txt')).replace('|DEVICENAME\r\n', '|DEVICE_NAME\r\n');
          origin.put('pmn96cur.zip', zipText('pmn96cur.zip', text));
        },
        reason: /^pmn96cur\.zip: the header line changed: expected KNUMBER\|.*\|DEVICENAME, got KNUMBER\|.*\|DEVICE_NAME$/,
        attempts: 1,
      },
      {
        name: 'a file that lost most of its rows',
        file: 'pmn7680.zip',
        arrange: async () => {
          const lines = (await fixtureText('pmn-1976-1990-sample.txt')).split('\r\n');
          origin.put('pmn7680.zip', zipText('pmn7680.zip', `${lines.slice(0, 11).join('\r\n')}\r\n`));
        },
        reason: /^pmn7680\.zip: pmn7680\.txt has 10 rows where the last good sync had 149 \(fewer than 90%\)$/,
        attempts: 1,
      },
      {
        name: 'a zip without the expected file',
        file: 'foiclass.zip',
        arrange: async () => origin.put('foiclass.zip', zipText('other.zip', await fixtureText('foiclass-sample.txt'))),
        reason: /^foiclass\.zip: the zip holds no foiclass\.txt \(entries: other\.txt\)$/,
        attempts: 1,
      },
    ];

    it.each(cases)('$name', async ({ file, arrange, reason, attempts, timeoutMs }) => {
      const original = origin.files.get(file);
      const before = await servedAndVerified();
      await arrange();
      try {
        const result = await runSync(options(timeoutMs ? { timeoutMs } : {}));
        expect(result.outcome).toBe('failed');
        expect(result.snapshot).toBeNull();
        expect(builds).toBe(1);
        expect(origin.requests.filter((r) => r.path === `/ftparea/${file}`)).toHaveLength(attempts);

        const state = await readState();
        expect(state.lastFailure?.reason).toMatch(reason);
        expect(Date.parse(state.lastFailure?.at ?? '')).toBeGreaterThan(Date.parse(state.lastAttemptAt ?? ''));
        expect(state.history[0]).toEqual({ at: state.lastAttemptAt, outcome: 'failed', detail: state.lastFailure?.reason });
        expect(await servedAndVerified()).toEqual(before);
        expect(await readdir(dir)).not.toContain('incoming');
      } finally {
        origin.fault(file, undefined);
        if (original) origin.files.set(file, original);
      }
    });

    it('a later success clears the failure and keeps it in the history', async () => {
      const result = await runSync(options());
      expect(result.outcome).toBe('unchanged');
      const state = await readState();
      expect(state.lastFailure).toBeNull();
      expect(state.history.filter((h) => h.outcome === 'failed')).toHaveLength(cases.length);
    });
  });

  it('retries a transient failure with backoff and goes on', async () => {
    origin.fault('pmn96cur.zip', { kind: 'status', status: 503, times: 1 });
    const retries: string[] = [];
    const result = await runSync(options({ log: (l) => retries.push(l) }));
    expect(result.outcome).toBe('unchanged');
    expect(origin.requests.filter((r) => r.path === '/ftparea/pmn96cur.zip').map((r) => r.status)).toEqual([503, 304]);
    expect(retries.some((l) => /^pmn96cur\.zip: HTTP 503 Service Unavailable; retry 1 of 2 in \d+ ms$/.test(l))).toBe(true);
  });

  it('an upstream change: downloads only that file, rebuilds, and the change log names the records', async () => {
    const text = editPmnText(await fixtureText('pmn-1976-1990-sample.txt'), {
      set: { K770121: { [PMN.APPLICANT]: 'Renamed Applicant, Inc.' } },
      remove: ['K780485'],
    });
    origin.put('pmn7680.zip', zipText('pmn7680.zip', text));
    const previous = await readManifest();
    const result = await runSync(options());
    expect(result.outcome).toBe('built');
    expect(builds).toBe(2);
    expect(byPath(origin.requests).map((r) => [r.path, r.status])).toEqual([
      ['/ftparea/foiclass.zip', 304],
      ['/ftparea/pmn7680.zip', 200],
      ['/ftparea/pmn96cur.zip', 304],
    ]);
    const manifest = await readManifest();
    expect(manifest.snapshotId).not.toBe(previous.snapshotId);
    const state = await readState();
    expect(manifest.lastSuccessfulSyncAt).toBe(state.lastSuccessfulSyncAt);
    expect(state.files['pmn7680.zip']?.rows).toBe(148);
    const log = ChangeLog.parse(JSON.parse(await readFile(join(out, CHANGES_PATH), 'utf8')));
    expect(log.previous?.snapshotId).toBe(previous.snapshotId);
    expect(log.removed).toEqual(['K780485']);
    expect(log.changed).toEqual([{ kNumber: 'K770121', fields: ['applicant'] }]);
  });

  it('a failed build leaves the snapshot, and the next run downloads the files again and rebuilds', async () => {
    const before = await servedAndVerified();
    origin.put('foiclass.zip', zipText('foiclass.zip', `${(await fixtureText('foiclass-sample.txt')).trimEnd()}\r\n`.replace(/\r\n[^\r\n]*\r\n$/, '\r\n')));
    const failing = await runSync(options({ build: async () => Promise.reject(new Error('disk full')) }));
    expect(failing.outcome).toBe('failed');
    expect((await readState()).lastFailure?.reason).toBe('the build failed: disk full');
    const after = await servedAndVerified();
    expect([after.link, after.manifest, after.files, after.lastSuccessfulSyncAt]).toEqual([before.link, before.manifest, before.files, before.lastSuccessfulSyncAt]);

    origin.requests.length = 0;
    const retried = await runSync(options());
    expect(retried.outcome).toBe('built');
    expect(origin.requests.find((r) => r.path === '/ftparea/foiclass.zip')).toMatchObject({ ifNoneMatch: null, status: 200 });
    expect((await readState()).files['foiclass.zip']?.rows).toBe(207);
  });

  it('refuses to run beside another sync of the same folder', async () => {
    // Both start in the same tick and race for the lock: whichever takes it runs, the other is refused.
    const results = await Promise.allSettled([runSync(options()), runSync(options())]);
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(refused).toHaveLength(1);
    expect(String(refused[0]?.reason)).toMatch(/another sync \(process \d+\) holds/);
  });

  it('the CLI exits 0 when nothing changed and 1 on a failure, naming the reason', async () => {
    const args = ['--import', 'tsx', 'build/sync.ts', '--base-url', origin.url, ...ORIGIN_FILE_NAMES.flatMap((f) => ['--file', f]), '--dir', dir, '--out', out, '--timeout', '5000', '--retries', '0', '--skip-summaries'];
    const ok = await run(process.execPath, args, { encoding: 'utf8' });
    expect(ok.stdout).toMatch(/^sync unchanged: All 3 files are unchanged at the origin/m);

    origin.fault('pmn7680.zip', { kind: 'status', status: 404 });
    const failed = await run(process.execPath, args, { encoding: 'utf8' }).then(
      () => null,
      (err: { code: number; stdout: string }) => err,
    );
    origin.fault('pmn7680.zip', undefined);
    expect(failed?.code).toBe(1);
    expect(failed?.stdout).toMatch(/^sync failed: pmn7680\.zip: could not be downloaded from http:\/\/127\.0\.0\.1:\d+\/ftparea\/pmn7680\.zip: HTTP 404 Not Found$/m);
    expect(failed?.stdout).toMatch(/the published snapshot, if any, was left as it was/);
  });

  it('prints its closing line once, and build --fetch takes the same options and environment', { timeout: 90_000 }, async () => {
    const files = ORIGIN_FILE_NAMES.flatMap((f) => ['--file', f]);
    const common = ['--dir', dir, '--out', out, '--timeout', '5000', '--retries', '0', '--skip-summaries'];
    const closing = /unchanged: All 3 files are unchanged at the origin/g;

    const sync = await run(process.execPath, ['--import', 'tsx', 'build/sync.ts', '--base-url', origin.url, ...files, ...common], { encoding: 'utf8' });
    expect(`${sync.stdout}${sync.stderr}`.match(closing)).toHaveLength(1);

    const byOption = await run(process.execPath, ['--import', 'tsx', 'build/cli.ts', '--fetch', '--base-url', origin.url, ...files, ...common], { encoding: 'utf8' });
    expect(byOption.stdout).toMatch(/^sync unchanged: All 3 files are unchanged at the origin/m);
    expect(`${byOption.stdout}${byOption.stderr}`.match(closing)).toHaveLength(1);

    origin.requests.length = 0;
    const env = { ...process.env, SYNC_BASE_URL: origin.url, SYNC_FILES: ORIGIN_FILE_NAMES.join(',') };
    const byEnv = await run(process.execPath, ['--import', 'tsx', 'build/cli.ts', '--fetch', ...common], { encoding: 'utf8', env });
    expect(byEnv.stdout).toMatch(/^sync unchanged: All 3 files are unchanged at the origin/m);
    expect(origin.requests.map((r) => r.path).sort()).toEqual(ORIGIN_FILE_NAMES.map((f) => `/ftparea/${f}`).sort());
  });

  it('build refuses sync options without --fetch, and --source with it, in one line with exit 2', async () => {
    const refused = (args: string[]) =>
      run(process.execPath, ['--import', 'tsx', 'build/cli.ts', ...args], { encoding: 'utf8' }).then(
        () => null,
        (err: { code: number; stderr: string }) => err,
      );
    const stray = await refused(['--base-url', origin.url, '--out', out]);
    expect(stray?.code).toBe(2);
    expect(stray?.stderr.trim()).toBe('build: --base-url is a sync option; it applies only with --fetch (see --help)');
    const both = await refused(['--fetch', '--source', 'x.txt', '--out', out]);
    expect(both?.code).toBe(2);
    expect(both?.stderr.trim()).toBe('build: --fetch builds from the downloaded files; leave out --source (see --help)');
  });
});

describe('the state file', () => {
  it('a damaged state file starts over rather than stopping the sync', async () => {
    await writeFile(join(dir, 'state.json'), '{"lastAttemptAt": 12');
    const lines: string[] = [];
    const result = await runSync(options({ log: (l) => lines.push(l) }));
    expect(lines[0]).toMatch(/state\.json could not be read .*; starting over$/);
    // No validators to send, so every file comes whole; the bytes match the snapshot, which is not rebuilt.
    expect(result.outcome).toBe('unchanged');
    expect(origin.requests.every((r) => r.ifNoneMatch === null && r.status === 200)).toBe(true);
  });
});
