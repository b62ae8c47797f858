import { randomBytes } from 'node:crypto';
import { copyFile, link, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import pLimit from 'p-limit';
import { LAYOUT, Manifest, type FileEntry } from '../../src/contract/index.ts';
import { activeSnapshotDir, buildsDirFor, makeStagingDir, publishSnapshot, snapshotDirName } from '../publish/publish.ts';
import { getWithRetry, type HttpOptions } from '../io/http.ts';
import { compressTo } from '../write/compress.ts';
import { acquireLock } from '../io/lock.ts';
import { checkManifestPaths, fileUrl, reusableLocal, type FileSource } from './plan.ts';
import { sha256Hex } from '../../src/utils/sha256-hex.ts';

export type MirrorOptions = {
  /** The snapshot's base URL: where `manifest.json` is (for this server, `http://host/snapshot`). */
  from: string;
  /** The local snapshot link to publish, like the build's `--out`. */
  to: string;
  concurrency?: number;
  timeoutMs?: number;
  retries?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Published copies kept besides the active one. */
  keep?: number;
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  log?: (line: string) => void;
};

export type MirrorResult = {
  /** current: the local copy already was this snapshot; updated: a new copy was switched in. */
  outcome: 'current' | 'updated';
  snapshotId: string;
  dir: string;
  /** Files by where they came from (the manifest itself not counted). */
  counts: Record<FileSource, number>;
  downloadedBytes: number;
};

/** The mirror's defaults, used by runMirror and shown by `npm run mirror -- --help`. */
export const MIRROR_DEFAULTS = {
  to: 'snapshot',
  concurrency: 8,
  timeoutMs: 60_000,
  retries: 4,
  baseDelayMs: 500,
  maxDelayMs: 15_000,
  keep: 2,
} as const;

const MARKER = '.mirror.json';
/** Files are asked for compressed: a server that compresses on the fly (ours does, for record shards) sends less. */
const ACCEPT = { 'accept-encoding': 'br, gzip' };

const ROUNDS = 3;

/**
 * Copies the snapshot at `from` into `to` by its manifest: files whose path and sha256 the local copy already has
 * are hard-linked (after checking their bytes), the rest are downloaded and checked against the manifest; then the
 * copy is switched in with the build's atomic publish. The staging folder keeps what was verified, so a run that
 * is interrupted resumes where it stopped. If the origin switches snapshots during the copy, the copy starts over
 * on the new manifest, keeping every file that still matches.
 */
export async function runMirror(options: MirrorOptions): Promise<MirrorResult> {
  const from = options.from.replace(/\/+$/, '');
  if (!/^https?:\/\//.test(from)) throw new Error(`Expected \`from\` to be an http(s) URL, got "${options.from}"`);
  const log = options.log ?? (() => {});
  const http: HttpOptions = {
    timeoutMs: options.timeoutMs ?? MIRROR_DEFAULTS.timeoutMs,
    retries: options.retries ?? MIRROR_DEFAULTS.retries,
    baseDelayMs: options.baseDelayMs ?? MIRROR_DEFAULTS.baseDelayMs,
    maxDelayMs: options.maxDelayMs ?? MIRROR_DEFAULTS.maxDelayMs,
    fetch: options.fetch,
    sleep: options.sleep,
    onRetry: ({ url, attempt, delayMs, reason }) => log(`${url}: ${reason}; retry ${attempt} in ${delayMs} ms`),
  };
  const limit = pLimit(options.concurrency ?? MIRROR_DEFAULTS.concurrency);
  const builds = buildsDirFor(options.to);
  const release = await acquireLock(join(builds, '.mirror.lock'), 'mirror');
  try {
    const localDir = await activeSnapshotDir(options.to);
    const local = localDir ? await readManifest(join(localDir, LAYOUT.manifest)) : null;

    for (let round = 1; ; round++) {
      const { manifest: remote, bytes: manifestBytes } = await fetchManifest(from, http);
      if (local && localDir && local.manifest.snapshotId === remote.snapshotId && Buffer.compare(local.bytes, manifestBytes) === 0) {
        log(`already at snapshot ${remote.snapshotId}`);
        return { outcome: 'current', snapshotId: remote.snapshotId, dir: localDir, counts: { staged: 0, local: 0, origin: 0, derived: 0 }, downloadedBytes: 0 };
      }
      const staging = await stagingFor(options.to, from);
      const reusable = reusableLocal(remote, local?.manifest ?? null);
      const counts: Record<FileSource, number> = { staged: 0, local: 0, origin: 0, derived: 0 };
      const plainOf = compressedFrom(remote.files);
      let downloadedBytes = 0;
      const mismatched: string[] = [];

      const copyOne = async (f: FileEntry): Promise<void> => {
        const target = join(staging, f.path);
        if (await holds(target, f)) {
          counts.staged++;
          return;
        }
        const mine = reusable.get(f.path);
        if (mine && localDir && (await holds(join(localDir, f.path), f))) {
          await place(join(localDir, f.path), target);
          counts.local++;
          return;
        }
        // A precompressed sibling is made here from its file (already downloaded and checked) with the build's
        // deterministic settings, and kept only when it has exactly the listed sha256: no second download of the
        // same content. Another zlib may compress differently; then it is downloaded like any file.
        const plain = plainOf.get(f.path);
        if (plain) {
          const made = await readFile(join(staging, plain.path))
            .then((b) => compressTo(f.path.endsWith('.br') ? 'br' : 'gzip', b))
            .catch(() => null);
          if (made && made.byteLength === f.bytes && sha256Hex(made) === f.sha256) {
            await writeAtomically(target, made);
            counts.derived++;
            return;
          }
        }
        const res = await download(from, f.path, http);
        if (res.body.byteLength !== f.bytes || sha256Hex(res.body) !== f.sha256) {
          mismatched.push(f.path);
          return;
        }
        await writeAtomically(target, res.body);
        counts.origin++;
        downloadedBytes += res.body.byteLength;
      };

      // After the first failure the queued files are skipped, and the run waits for those in flight, so nothing
      // writes into the staging folder after this call has returned (a rerun may already be using it).
      let failure: unknown = null;
      // Every file but the precompressed siblings first, then the siblings, made from their files.
      for (const batch of [remote.files.filter((f) => !plainOf.has(f.path)), remote.files.filter((f) => plainOf.has(f.path))]) {
        await Promise.allSettled(
          batch.map((f) =>
            limit(async () => {
              if (failure !== null) return;
              try {
                await copyOne(f);
              } catch (err) {
                failure ??= err;
              }
            }),
          ),
        );
      }
      if (failure !== null) throw failure;

      if (mismatched.length > 0) {
        const again = await fetchManifest(from, http);
        if (again.manifest.snapshotId !== remote.snapshotId && round < ROUNDS) {
          log(`the origin switched to snapshot ${again.manifest.snapshotId} during the copy; continuing with it`);
          continue;
        }
        throw new Error(
          `${mismatched.length} file${mismatched.length === 1 ? '' : 's'} did not match the manifest's sha256 (${mismatched.slice(0, 5).join(', ')}${mismatched.length > 5 ? ', …' : ''}); the local copy was left as it was`,
        );
      }

      await removeStrays(staging, new Set(remote.files.map((f) => f.path)));
      // The manifest goes in last and exactly as served, so the copy's manifest.json is the origin's byte for byte.
      await writeAtomically(join(staging, LAYOUT.manifest), manifestBytes);
      await rm(join(staging, MARKER), { force: true });
      const dir = await publishSnapshot(staging, options.to, snapshotDirName(remote), options.keep ?? MIRROR_DEFAULTS.keep);
      log(`snapshot ${remote.snapshotId}: ${counts.origin} downloaded (${downloadedBytes} bytes), ${counts.derived} compressed here, ${counts.local} kept from the local copy, ${counts.staged} from an interrupted run`);
      return { outcome: 'updated', snapshotId: remote.snapshotId, dir, counts, downloadedBytes };
    }
  } finally {
    await release();
  }
}

/** For each listed `X.br` or `X.gz` whose `X` is listed too, the entry of `X`. */
function compressedFrom(files: readonly FileEntry[]): Map<string, FileEntry> {
  const byPath = new Map(files.map((f) => [f.path, f]));
  const out = new Map<string, FileEntry>();
  for (const f of files) {
    const plain = /\.(br|gz)$/.test(f.path) ? byPath.get(f.path.slice(0, -3)) : undefined;
    if (plain) out.set(f.path, plain);
  }
  return out;
}

/** One file of the snapshot from the origin; a failure names the file and its URL. */
async function download(from: string, path: string, http: HttpOptions): Promise<{ body: Uint8Array }> {
  const url = fileUrl(from, path);
  let res: Awaited<ReturnType<typeof getWithRetry>>;
  try {
    res = await getWithRetry(url, ACCEPT, http);
  } catch (err) {
    throw new Error(`${path} could not be downloaded from ${url}: ${(err as Error).message}`, { cause: err });
  }
  if (res.status !== 200) throw new Error(`${path} could not be downloaded from ${url}: unexpected HTTP ${res.status}`);
  return res;
}

async function fetchManifest(from: string, http: HttpOptions): Promise<{ manifest: Manifest; bytes: Buffer }> {
  const res = await download(from, LAYOUT.manifest, http);
  const bytes = Buffer.from(res.body);
  let manifest: Manifest;
  try {
    manifest = Manifest.parse(JSON.parse(bytes.toString('utf8')));
  } catch (err) {
    throw new Error(`${fileUrl(from, LAYOUT.manifest)} is not a snapshot manifest (${(err as Error).message.split('\n')[0]})`);
  }
  checkManifestPaths(manifest);
  return { manifest, bytes };
}

async function readManifest(path: string): Promise<{ manifest: Manifest; bytes: Buffer } | null> {
  try {
    const bytes = await readFile(path);
    return { manifest: Manifest.parse(JSON.parse(bytes.toString('utf8'))), bytes };
  } catch {
    return null;
  }
}

/**
 * The staging folder of an interrupted mirror run (found by its marker; the lock says no other run owns it), taken
 * over under this process's name so pruning spares it; else a fresh one.
 */
async function stagingFor(to: string, from: string): Promise<string> {
  const builds = buildsDirFor(to);
  const names = (await readdir(builds).catch(() => [] as string[])).filter((n) => n.startsWith('.staging-')).sort();
  for (const name of names) {
    let dir = join(builds, name);
    if ((await stat(join(dir, MARKER)).catch(() => null)) === null) continue;
    if (!name.startsWith(`.staging-${process.pid}-`)) {
      const mine = join(builds, `.staging-${process.pid}-${randomBytes(4).toString('hex')}`);
      await rename(dir, mine);
      dir = mine;
    }
    return dir;
  }
  const dir = await makeStagingDir(to);
  await writeFile(join(dir, MARKER), JSON.stringify({ from }));
  return dir;
}

/** Whether `path` holds exactly the file the manifest describes. */
async function holds(path: string, f: FileEntry): Promise<boolean> {
  const st = await stat(path).catch(() => null);
  if (!st?.isFile() || st.size !== f.bytes) return false;
  return sha256Hex(await readFile(path)) === f.sha256;
}

/** A hard link when the file system allows it (no second copy on disk), else a copy. */
async function place(source: string, target: string): Promise<void> {
  await mkdir(dirname(target), { recursive: true });
  await rm(target, { force: true });
  try {
    await link(source, target);
  } catch {
    await copyFile(source, target);
  }
}

/** Written beside and renamed, so a file in staging is either whole or absent: what resuming relies on. */
async function writeAtomically(target: string, bytes: Uint8Array): Promise<void> {
  await mkdir(dirname(target), { recursive: true });
  const part = `${target}.part-${process.pid}`;
  await writeFile(part, bytes);
  await rename(part, target);
}

/** Files of an earlier target (or half-written parts) that the new manifest does not list. */
async function removeStrays(staging: string, keep: ReadonlySet<string>): Promise<void> {
  const walk = async (dir: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const abs = join(dir, e.name);
      if (e.isDirectory()) await walk(abs);
      else {
        const rel = relative(staging, abs).split(sep).join('/');
        if (rel !== MARKER && !keep.has(rel)) await rm(abs, { force: true });
      }
    }
  };
  await walk(staging);
}
