import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdir, readFile, readlink, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import sirv from 'sirv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkManifestPaths, fileUrl } from '../../build/mirror/plan.ts';
import { runMirror, type MirrorOptions } from '../../build/mirror/run.ts';
import { rawFetch } from '../../build/io/http.ts';
import { buildsDirFor } from '../../build/publish/publish.ts';
import { CHANGES_PATH, ChangeLog } from '../../src/contract/changes.ts';
import { LAYOUT, Manifest } from '../../src/contract/index.ts';
import { buildFixture, FIXTURE_SOURCES } from '../helpers/fixture-snapshot.ts';
import { ask, startServer, VALID_INPUT, type Running } from '../server/helpers.ts';
import { PMN, writeEditedPmn } from '../sync/edit-fixture.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

const run = promisify(execFile);

let work: string;
let originOut: string;
let mirrorOut: string;
let origin: Running;
let epoch = 1_786_924_800;

/** Every file under a folder with its sha256: two snapshots are the same copy when these are equal. */
async function tree(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (d: string) => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const abs = join(d, e.name);
      if (e.isDirectory()) await walk(abs);
      else out[relative(dir, abs)] = createHash('sha256').update(await readFile(abs)).digest('hex');
    }
  };
  await walk(dir);
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)));
}

const manifestOf = async (out: string) => Manifest.parse(JSON.parse(await readFile(join(out, LAYOUT.manifest), 'utf8')));

/** The mirror's transport (bodies as sent) that records the paths it was asked for (below /snapshot/), and can be told to fail or lie. */
function recordingFetch(opts: { failOn?: (path: string, n: number) => boolean; tamper?: (path: string) => boolean } = {}) {
  const paths: string[] = [];
  const fn: typeof fetch = async (input, init) => {
    const url = new URL(String(input));
    const path = decodeURIComponent(url.pathname.replace(/^\/snapshot\//, ''));
    paths.push(path);
    if (opts.failOn?.(path, paths.length)) throw new TypeError('fetch failed (connection reset)');
    const res = await rawFetch(input, init);
    if (!opts.tamper?.(path)) return res;
    const bytes = new Uint8Array(await res.arrayBuffer());
    bytes[0] = (bytes[0] ?? 0) ^ 0x20;
    return new Response(bytes, { status: res.status, headers: { 'content-length': String(bytes.byteLength) } });
  };
  return { fn, paths };
}

const mirrorOptions = (extra: Partial<MirrorOptions> = {}): MirrorOptions => ({
  from: `${origin.url}/snapshot`,
  to: mirrorOut,
  timeoutMs: 2_000,
  retries: 0,
  baseDelayMs: 1,
  maxDelayMs: 5,
  ...extra,
});

/** Rebuilds the origin from the fixtures with a few records changed, and tells its server to switch. */
async function changeUpstream(edit: Parameters<typeof writeEditedPmn>[2]): Promise<Manifest> {
  const edited = join(work, `pmn-edited-${epoch}.txt`);
  await writeEditedPmn(FIXTURE_SOURCES[1] as string, edited, edit);
  epoch += 86_400;
  const built = await buildFixture({ out: originOut, epoch, sources: FIXTURE_SOURCES.map((s, i) => (i === 1 ? edited : s)) });
  await origin.app.reload();
  return built.manifest;
}

const QUERIES: [Parameters<typeof ask>[1], unknown][] = [
  ['device-510k.detail', { id: 'K770121' }],
  ['device-510k.detail', { id: 'K802527' }],
  ['device-510k.search', { ...VALID_INPUT['device-510k.search'], query: '', pageSize: 50 }],
  ['device-510k.search', VALID_INPUT['device-510k.search']],
  ['device-510k.classification', { productCode: 'DXY' }],
  ['device-510k.top-product-codes', { limit: 100 }],
  ['device-510k.catalog', { kind: 'clearance', limit: 500, cursor: null }],
  ['device-510k.catalog', { kind: 'product-code', limit: 500, cursor: null }],
  ['device-510k.meta', {}],
];

/** The answers of a server with the per-request time taken out. */
async function answers(url: string): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const [operation, input] of QUERIES) {
    const a = await ask(url, operation, input);
    const body = a.json as { sourceState?: { servedAt?: string } };
    if (body.sourceState) delete body.sourceState.servedAt;
    out.push({ status: a.status, body });
  }
  return out;
}

/** The precompressed siblings the manifest lists: a mirror makes them from their files instead of downloading them. */
function derivable(manifest: Manifest): Set<string> {
  const paths = new Set(manifest.files.map((f) => f.path));
  return new Set(manifest.files.map((f) => f.path).filter((p) => /\.(br|gz)$/.test(p) && paths.has(p.slice(0, -3))));
}

beforeAll(async () => {
  work = await testTempDir('mirror-');
  originOut = join(work, 'origin', 'snapshot');
  mirrorOut = join(work, 'mirror', 'snapshot');
  await buildFixture({ out: originOut, epoch });
  origin = await startServer({ snapshotPath: originOut });
});
afterAll(async () => {
  await origin?.close();
  await rm(work, { recursive: true, force: true });
});

describe('npm run mirror', () => {
  it('copies a snapshot whole, byte for byte, verifying every file', async () => {
    const rec = recordingFetch();
    const result = await runMirror(mirrorOptions({ fetch: rec.fn }));
    const manifest = await manifestOf(originOut);
    // A precompressed sibling is made from its file (and checked against its own sha256), not downloaded.
    const made = derivable(manifest);
    expect(made.size).toBeGreaterThan(0);
    expect(result).toMatchObject({ outcome: 'updated', snapshotId: manifest.snapshotId, counts: { origin: manifest.files.length - made.size, derived: made.size, local: 0, staged: 0 } });
    expect(rec.paths.filter((p) => p !== LAYOUT.manifest).sort()).toEqual(manifest.files.map((f) => f.path).filter((p) => !made.has(p)).sort());
    for (const p of made) expect(rec.paths).toContain(p.slice(0, -3));
    // The bulk downloads among them, fetched and checked against the manifest like every file.
    expect(rec.paths).toEqual(expect.arrayContaining([LAYOUT.downloadsParquet, LAYOUT.downloadsSqlite]));
    expect(await tree(mirrorOut)).toEqual(await tree(originOut));
    expect(await readlink(mirrorOut)).toMatch(/^snapshot-builds\/\d{8}T\d{6}Z-[0-9a-f]{16}$/);
  });

  it('is current when nothing changed: only the manifest is fetched', async () => {
    const rec = recordingFetch();
    const before = await readlink(mirrorOut);
    const result = await runMirror(mirrorOptions({ fetch: rec.fn }));
    expect(result.outcome).toBe('current');
    expect(rec.paths).toEqual([LAYOUT.manifest]);
    expect(await readlink(mirrorOut)).toBe(before);
  });

  it('after an upstream change and rebuild, moves only the changed files, and serves the same answers as the origin', async () => {
    const previous = await manifestOf(originOut);
    const next = await changeUpstream({
      set: { K770121: { [PMN.APPLICANT]: 'Renamed Applicant, Inc.' }, K802527: { [PMN.DEVICENAME]: 'HERPES SIMPLEX TEST, RENAMED' } },
      remove: ['K780485'],
    });
    const log = ChangeLog.parse(JSON.parse(await readFile(join(originOut, CHANGES_PATH), 'utf8')));
    expect(log.changed.map((c) => c.kNumber)).toEqual(['K770121', 'K802527']);

    const old = new Map(previous.files.map((f) => [f.path, f.sha256]));
    const changed = next.files.filter((f) => old.get(f.path) !== f.sha256).map((f) => f.path).sort();
    expect(changed.length).toBeGreaterThan(0);
    expect(changed.length).toBeLessThan(next.files.length / 2);
    const present = new Set(next.files.map((f) => f.path));
    for (const shard of log.shards) if (present.has(shard)) expect(changed).toContain(shard);

    const rec = recordingFetch();
    const result = await runMirror(mirrorOptions({ fetch: rec.fn }));
    expect(result.outcome).toBe('updated');
    const made = derivable(next);
    expect(rec.paths.filter((p) => p !== LAYOUT.manifest).sort()).toEqual(changed.filter((p) => !made.has(p)));
    const changedMade = changed.filter((p) => made.has(p)).length;
    expect(result.counts).toEqual({ origin: changed.length - changedMade, derived: changedMade, local: next.files.length - changed.length, staged: 0 });
    expect(await tree(mirrorOut)).toEqual(await tree(originOut));

    const copy = await startServer({ snapshotPath: mirrorOut });
    try {
      const [a, b] = [await answers(origin.url), await answers(copy.url)];
      expect(b).toEqual(a);
      expect((a[0] as { status: number }).status).toBe(200);
      expect(JSON.stringify(a[0])).toContain('Renamed Applicant, Inc.');
    } finally {
      await copy.close();
    }
  });

  it('resumes after an interruption, fetching only what the interrupted run had not', async () => {
    const next = await changeUpstream({ set: { K791172: { [PMN.APPLICANT]: 'Another Applicant' }, K801349: { [PMN.APPLICANT]: 'Third Applicant' } } });
    const live = await manifestOf(mirrorOut);
    const old = new Map(live.files.map((f) => [f.path, f.sha256]));
    const changed = next.files.filter((f) => old.get(f.path) !== f.sha256).map((f) => f.path).sort();
    expect(changed.length).toBeGreaterThanOrEqual(3);

    // The connection drops after the manifest and two files.
    const broken = recordingFetch({ failOn: (_p, n) => n > 3 });
    await expect(runMirror(mirrorOptions({ fetch: broken.fn, concurrency: 1 }))).rejects.toThrow(/connection reset/);
    expect(await readlink(mirrorOut)).toBe(`snapshot-builds/${live.generatedAt.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}-${live.snapshotId}`);
    const fetchedBefore = broken.paths.slice(1, 3);
    const staging = (await readdir(buildsDirFor(mirrorOut))).filter((n) => n.startsWith('.staging-'));
    expect(staging).toHaveLength(1);

    const rec = recordingFetch();
    const result = await runMirror(mirrorOptions({ fetch: rec.fn }));
    expect(result.outcome).toBe('updated');
    expect(result.counts.staged).toBeGreaterThanOrEqual(2);
    const second = rec.paths.filter((p) => p !== LAYOUT.manifest);
    for (const p of fetchedBefore) expect(second).not.toContain(p);
    expect([...second, ...fetchedBefore].sort()).toEqual(changed.filter((p) => !derivable(next).has(p)));
    expect(await tree(mirrorOut)).toEqual(await tree(originOut));
    expect((await readdir(buildsDirFor(mirrorOut))).filter((n) => n.startsWith('.staging-'))).toEqual([]);
  });

  it('names the file and the URL that failed', async () => {
    const next = await changeUpstream({ set: { K802527: { [PMN.APPLICANT]: 'Named Failure, Inc.' } } });
    const live = await manifestOf(mirrorOut);
    const old = new Map(live.files.map((f) => [f.path, f.sha256]));
    const changed = next.files.filter((f) => old.get(f.path) !== f.sha256).map((f) => f.path);
    const victim = changed.find((p) => p.startsWith('records/')) ?? (changed[0] as string);
    const before = await readlink(mirrorOut);

    const noManifest = recordingFetch({ failOn: (p) => p === LAYOUT.manifest });
    await expect(runMirror(mirrorOptions({ fetch: noManifest.fn }))).rejects.toThrow(
      `manifest.json could not be downloaded from ${origin.url}/snapshot/manifest.json: fetch failed (connection reset)`,
    );
    const noFile = recordingFetch({ failOn: (p) => p === victim });
    await expect(runMirror(mirrorOptions({ fetch: noFile.fn, concurrency: 1 }))).rejects.toThrow(
      `${victim} could not be downloaded from ${origin.url}/snapshot/${victim}: fetch failed (connection reset)`,
    );
    expect(await readlink(mirrorOut)).toBe(before);
  });

  it('refuses a file whose bytes do not match the manifest and leaves the copy as it was', async () => {
    const next = await changeUpstream({ set: { K760247: { [PMN.APPLICANT]: 'Tampered Test' } } });
    const before = await readlink(mirrorOut);
    const target = next.files.find((f) => f.path === 'records/K7602.json');
    expect(target).toBeDefined();
    const rec = recordingFetch({ tamper: (p) => p === 'records/K7602.json' });
    await expect(runMirror(mirrorOptions({ fetch: rec.fn }))).rejects.toThrow(
      /^1 file did not match the manifest's sha256 \(records\/K7602\.json\); the local copy was left as it was$/,
    );
    expect(await readlink(mirrorOut)).toBe(before);
    // The next honest run finishes the copy.
    const result = await runMirror(mirrorOptions());
    expect(result.outcome).toBe('updated');
    expect(await tree(mirrorOut)).toEqual(await tree(originOut));
  });

  it('copies from any static host too, and the CLI reports what moved', async () => {
    const serve = sirv(join(mirrorOut, '..', await readlink(mirrorOut)), { dev: true, dotfiles: false });
    const server: Server = createServer((req, res) => {
      req.url = (req.url ?? '/').replace(/^\/cdn\/snap/, '') || '/';
      serve(req, res, () => {
        res.writeHead(404).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const copyOut = join(work, 'copy-of-copy', 'snapshot');
      const { stdout } = await run(process.execPath, ['--import', 'tsx', 'build/mirror.ts', '--from', `http://127.0.0.1:${port}/cdn/snap/`, '--to', copyOut, '--quiet'], { encoding: 'utf8' });
      const manifest = await manifestOf(originOut);
      const made = derivable(manifest).size;
      expect(stdout).toMatch(
        new RegExp(`^mirror updated: .* is snapshot ${manifest.snapshotId}; ${manifest.files.length - made} files downloaded \\([\\d,]+ bytes on the wire, [\\d,]+ bytes written\\), ${made} compressed here, 0 unchanged, 0 resumed$`, 'm'),
      );
      expect(await tree(copyOut)).toEqual(await tree(originOut));
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('mirror plan', () => {
  const manifestWith = (paths: string[]) =>
    ({ files: paths.map((path) => ({ path, bytes: 1, sha256: 'a'.repeat(64) })) }) as unknown as Manifest;
  it.each([['../etc/passwd'], ['/abs'], ['records/../../x'], ['a//b'], ['.mirror.json'], ['records/.hidden'], ['manifest.json'], ['a\\b'], ['']])(
    'refuses the path %j',
    (p) => {
      expect(() => checkManifestPaths(manifestWith([p]))).toThrow(/a mirror will not write|twice/);
    },
  );
  it('accepts the layout of a snapshot and refuses a path named twice', () => {
    expect(() => checkManifestPaths(manifestWith(['meta.json', 'records/K7602.json', 'pagefind/fragment/en_1a2b.pf_fragment']))).not.toThrow();
    expect(() => checkManifestPaths(manifestWith(['meta.json', 'meta.json']))).toThrow(/twice/);
  });
  it('escapes each path segment of a file URL', () => {
    expect(fileUrl('http://h/snapshot/', 'pagefind/a b#c.pf')).toBe('http://h/snapshot/pagefind/a%20b%23c.pf');
  });
});
