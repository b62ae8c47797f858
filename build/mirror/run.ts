import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { copyFile, link, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import pLimit from 'p-limit';
import { LAYOUT, Manifest, type FileEntry } from '../../src/contract/index.ts';
import { activeSnapshotDir, buildsDirFor, makeStagingDir, publishSnapshot, snapshotDirName } from '../publish/publish.ts';
import { getWithRetry, LimitError, type Body, type BodySink, type HttpOptions } from '../io/http.ts';
import { compressTo, HOST_COPY_SUFFIX, wantsHostCopy } from '../write/compress.ts';
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
  /** The most bytes the manifest may be, as sent or decoded (the one file whose size nothing declares). */
  maxManifestBytes?: number;
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
  /** Bytes of the downloaded files as they crossed the wire (compressed when the origin compressed them). */
  wireBytes: number;
  /** Bytes of the downloaded files as written to disk (decoded: the files the manifest lists). */
  writtenBytes: number;
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
  maxManifestBytes: 64 * 1024 * 1024,
} as const;

/**
 * What a file may take on the wire beyond its listed size: a compressed copy of incompressible bytes is a little
 * larger than they are (gzip and brotli add a few bytes per block).
 */
const wireAllowance = (bytes: number): number => bytes + 1024 + Math.ceil(bytes / 256);
/** Precompressed siblings are made here in memory from files up to this size; larger ones are downloaded. */
const DERIVE_MAX_BYTES = 64 * 1024 * 1024;

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
      const { manifest: remote, bytes: manifestBytes } = await fetchManifest(from, http, options.maxManifestBytes);
      if (local && localDir && local.manifest.snapshotId === remote.snapshotId && Buffer.compare(local.bytes, manifestBytes) === 0) {
        log(`already at snapshot ${remote.snapshotId}`);
        return { outcome: 'current', snapshotId: remote.snapshotId, dir: localDir, counts: { staged: 0, local: 0, origin: 0, derived: 0 }, wireBytes: 0, writtenBytes: 0 };
      }
      const staging = await stagingFor(options.to, from);
      const reusable = reusableLocal(remote, local?.manifest ?? null);
      const counts: Record<FileSource, number> = { staged: 0, local: 0, origin: 0, derived: 0 };
      const plainOf = compressedFrom(remote.files);
      let wireBytes = 0;
      let writtenBytes = 0;
      const mismatched: string[] = [];
      const oversized: string[] = [];

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
        if (plain && plain.bytes <= DERIVE_MAX_BYTES) {
          const made = await readFile(join(staging, plain.path))
            .then((b) => compressTo(f.path.endsWith('.br') ? 'br' : 'gzip', b))
            .catch(() => null);
          if (made && made.byteLength === f.bytes && sha256Hex(made) === f.sha256) {
            await writeAtomically(target, made);
            counts.derived++;
            return;
          }
        }
        // Streamed to a part file beside the target and cut off past the listed size, as sent and as decoded: an
        // origin cannot make the mirror hold or write more than the manifest says, however it compresses.
        await mkdir(dirname(target), { recursive: true });
        const part = `${target}.part-${process.pid}`;
        const limit = { bytes: f.bytes, wireBytes: wireAllowance(f.bytes), name: `the manifest's ${f.bytes.toLocaleString('en-US')} bytes` };
        /** The file's body, or why it was cut off past the listed size. */
        const fetchPart = async (keepCoding?: string): Promise<Body | string> => {
          try {
            return await download(from, f.path, http, { file: part, limit, ...(keepCoding ? { keepCoding } : {}) });
          } catch (err) {
            await rm(part, { force: true });
            if (!((err as Error).cause instanceof LimitError)) throw err;
            return ((err as Error).cause as Error).message;
          }
        };
        let got = await fetchPart();
        // A file stored compressed (`x.bin.gz`) that a host labels `Content-Encoding: gzip`, as sirv and object stores
        // with that metadata do, decodes to its content rather than to the file: then the body as sent is the file.
        if (f.path.endsWith('.gz') && (typeof got === 'string' || got.sha256 !== f.sha256)) {
          const asSent = await fetchPart('gzip');
          if (typeof asSent !== 'string' && asSent.bytes === f.bytes && asSent.sha256 === f.sha256) got = asSent;
        }
        if (typeof got === 'string') {
          // Past the listed size: this is not the file the manifest names (the origin may have switched snapshots).
          oversized.push(`${f.path} (${got})`);
          return;
        }
        const res = got;
        wireBytes += res.wireBytes;
        if (res.bytes !== f.bytes || res.sha256 !== f.sha256) {
          await rm(part, { force: true });
          mismatched.push(f.path);
          return;
        }
        await rename(part, target);
        counts.origin++;
        writtenBytes += res.bytes;
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

      if (mismatched.length > 0 || oversized.length > 0) {
        const again = await fetchManifest(from, http, options.maxManifestBytes);
        if (again.manifest.snapshotId !== remote.snapshotId && round < ROUNDS) {
          log(`the origin switched to snapshot ${again.manifest.snapshotId} during the copy; continuing with it`);
          continue;
        }
        const list = (items: string[]) => `${items.slice(0, 5).join(', ')}${items.length > 5 ? ', …' : ''}`;
        const plural = (n: number) => `${n} file${n === 1 ? '' : 's'}`;
        const reasons = [
          ...(mismatched.length ? [`${plural(mismatched.length)} did not match the manifest's sha256 (${list(mismatched)})`] : []),
          ...(oversized.length ? [`${plural(oversized.length)} sent more than the manifest lists: ${list(oversized)}`] : []),
        ];
        throw new Error(`${reasons.join('; ')}; the local copy was left as it was`);
      }

      // The shards' host copies (build/write/compress.ts) are no file of the manifest: made here from the verified
      // shards, never fetched, so a mirror that a static host serves sends its shards compressed too.
      const hostCopies = remote.files.filter((f) => wantsHostCopy(f.path));
      await Promise.all(
        hostCopies.map((f) => limit(async () => writeAtomically(join(staging, `${f.path}${HOST_COPY_SUFFIX}`), await compressTo('gzip', await readFile(join(staging, f.path)))))),
      );
      await removeStrays(staging, new Set([...remote.files.map((f) => f.path), ...hostCopies.map((f) => `${f.path}${HOST_COPY_SUFFIX}`)]));
      // The manifest goes in last and exactly as served, so the copy's manifest.json is the origin's byte for byte.
      await writeAtomically(join(staging, LAYOUT.manifest), manifestBytes);
      await rm(join(staging, MARKER), { force: true });
      const dir = await publishSnapshot(staging, options.to, snapshotDirName(remote), options.keep ?? MIRROR_DEFAULTS.keep);
      log(`snapshot ${remote.snapshotId}: ${counts.origin} downloaded (${wireBytes} bytes on the wire, ${writtenBytes} bytes written), ${counts.derived} compressed here, ${counts.local} kept from the local copy, ${counts.staged} from an interrupted run`);
      return { outcome: 'updated', snapshotId: remote.snapshotId, dir, counts, wireBytes, writtenBytes };
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

/** One file of the snapshot from the origin; a failure names the file and its URL (the HttpError is its cause). */
async function download(from: string, path: string, http: HttpOptions, sink: BodySink): Promise<Body> {
  const url = fileUrl(from, path);
  let res: Awaited<ReturnType<typeof getWithRetry>>;
  try {
    res = await getWithRetry(url, ACCEPT, http, sink);
  } catch (err) {
    throw new Error(`${path} could not be downloaded from ${url}: ${(err as Error).message}`, { cause: err });
  }
  if (res.status !== 200) throw new Error(`${path} could not be downloaded from ${url}: unexpected HTTP ${res.status}`);
  return res;
}

async function fetchManifest(from: string, http: HttpOptions, maxBytes: number = MIRROR_DEFAULTS.maxManifestBytes): Promise<{ manifest: Manifest; bytes: Buffer }> {
  const res = await download(from, LAYOUT.manifest, http, { limit: { bytes: maxBytes, name: '--max-manifest-bytes' } });
  const bytes = res.data as Buffer;
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
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex') === f.sha256;
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
