import { hash } from 'node:crypto';
import { constants, openSync, readSync, closeSync, fstatSync, lstatSync, type BigIntStats } from 'node:fs';
import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import pLimit from 'p-limit';
import type { FileEntry } from '../contract/index.ts';
import type { SnapshotStorage } from '../snapshot/storage.ts';

import { LruCache } from '../utils/lru.ts';
import { safeRelPath } from '../snapshot/paths.ts';

/** The file-system side of a snapshot: reading its files and checking that the ones its manifest lists are there. */

export async function readSnapshotFile(root: string, rel: string): Promise<Buffer> {
  return readFile(join(root, rel));
}

/**
 * A snapshot folder on the local disk. Ranges are read synchronously: a record is a kilobyte or two, and a read from
 * the page cache takes microseconds, less than a trip through libuv's thread pool costs (the same trade nginx makes
 * without aio). A symbolic link in place of a file is refused. Given `openFiles`, descriptors are kept open between
 * reads, as nginx's open_file_cache keeps them: an open walks the path and fills a file-table entry each time. A kept
 * descriptor is checked with one fstat before each use, and one whose file has no link left (removed or replaced on
 * disk) is closed and the path opened again, so such a change is seen at once, as without them. Every byte read is
 * checked against the manifest by the caller anyway.
 */
export class NodeStorage implements SnapshotStorage {
  readonly location: string;
  /** Descriptors kept open between reads (null: each read opens and closes its file). */
  private open: OpenFiles | null;

  /** `openFiles`: descriptors kept open between reads, the most recently used (0, the default, keeps none). */
  constructor(dir: string, options: { openFiles?: number } = {}) {
    this.location = dir;
    const keep = options.openFiles ?? 0;
    this.open = keep > 0 ? new OpenFiles(keep) : null;
  }

  async read(path: string): Promise<Uint8Array> {
    // Synchronous for the same reason as readRange: a request's work then never waits on the thread pool, so the
    // server's turns (src/server/turns.ts) run it start to end.
    return this.withFile(path, (fd) => {
      const out = Buffer.allocUnsafeSlow(fstatSync(fd).size);
      return out.subarray(0, readFully(fd, out, 0));
    });
  }

  async readRange(path: string, offset: number, length: number): Promise<Uint8Array> {
    // Not from Buffer's shared pool: a slice kept in a cache would keep its whole 8 KiB pool slab alive.
    const out = Buffer.allocUnsafeSlow(length);
    return this.withFile(path, (fd) => out.subarray(0, readFully(fd, out, offset)));
  }

  async readIdentified(
    path: string,
    offset: number,
    length: number,
    into?: Uint8Array,
    known?: string,
  ): Promise<{ bytes: Uint8Array; identity: string | null }> {
    // A Buffer even over the caller's memory: its indexOf is memchr, a plain Uint8Array's a loop, several times slower
    // at finding a shard's lines.
    const out = into ? Buffer.from(into.buffer, into.byteOffset, length) : Buffer.allocUnsafeSlow(length);
    const got = known === undefined ? null : this.readIfUnchanged(path, out, offset, known);
    if (got !== null) return { bytes: out.subarray(0, got), identity: known! };
    return this.withFile(path, (fd, stat) => {
      const before = identityOf(stat ?? fstatSync(fd, { bigint: true }));
      const got = readFully(fd, out, offset);
      // A write during the read would show in the times taken after it: then the bytes are hashed, as without one.
      const after = identityOf(fstatSync(fd, { bigint: true }));
      return { bytes: out.subarray(0, got), identity: before === after ? before : null };
    });
  }

  /**
   * With a descriptor kept open: the read, then one fstat. The bytes read count when the file still has its link and
   * the identity `known`: then it was not changed since that identity's bytes matched, before the read or during it
   * (a change moves the change time, which never goes back). Else null, and the caller reads with a look before and
   * after. One fstat of two on every read of a shard: a catalog page's two were 4% of its time.
   */
  private readIfUnchanged(path: string, out: Uint8Array, offset: number, known: string): number | null {
    const fd = this.open?.take(path);
    if (fd === undefined) return null;
    let got: number;
    let stat: BigIntStats;
    try {
      got = readFully(fd, out, offset);
      stat = fstatSync(fd, { bigint: true });
    } catch {
      closeSync(fd);
      return null;
    }
    if (stat.nlink === 0n) {
      // Removed or replaced on disk: the path is opened again by the read that follows.
      closeSync(fd);
      return null;
    }
    this.open!.keep(path, fd);
    return identityOf(stat) === known ? got : null;
  }

  async readInto(path: string, offset: number, into: Uint8Array): Promise<number> {
    return this.withFile(path, (fd) => readFully(fd, into, offset));
  }

  /**
   * Reads the files whole on a thread of their own, into a buffer nobody reads: what matters is that the kernel then
   * holds their pages, so that the synchronous reads of their records that follow take microseconds instead of
   * waiting on the disk, one small read at a time. An export's records are scattered over thousands of shards; on a
   * disk whose page cache lost them, one request for each whole shard costs a fraction of one for each record, and it
   * runs while the request's thread turns the records before into bytes. The reads are driven from a thread of their
   * own: each step of a read in libuv's pool completes on the event loop of the thread that asked, and the request's
   * thread seldom comes back to its loop during an export. A shard whose pages are in memory is read again all the
   * same (a copy of about 100 KiB on another core): telling which are would cost a wait on the disk for each that is not.
   */
  prefetch(paths: readonly string[]): void {
    prefetcher ??= startPrefetcher();
    prefetcher.postMessage(paths.map((p) => join(this.location, p)));
  }

  /**
   * Runs `use` on an open descriptor of a file of the snapshot (never opened through a symbolic link): one kept open
   * from an earlier read when there is one, else one opened now, kept or closed after. `stat` is the file's status taken
   * now when the descriptor was kept (checking it costs that stat anyway), else null.
   */
  private withFile<T>(path: string, use: (fd: number, stat: BigIntStats | null) => T): T {
    if (this.open === null) {
      refuseLinkedFolders(this.location, path);
      const fd = openFile(join(this.location, path));
      try {
        return use(fd, null);
      } finally {
        closeSync(fd);
      }
    }
    let fd = this.open.take(path);
    let stat: BigIntStats | null = null;
    if (fd !== undefined) {
      stat = fstatSync(fd, { bigint: true });
      // No link left to what the descriptor names: the file was removed or replaced on disk since it was opened.
      if (stat.nlink === 0n) {
        closeSync(fd);
        fd = undefined;
        stat = null;
      }
    }
    if (fd === undefined) refuseLinkedFolders(this.location, path);
    fd ??= this.open.openFile(join(this.location, path));
    try {
      const result = use(fd, stat);
      this.open.keep(path, fd);
      return result;
    } catch (err) {
      closeSync(fd);
      throw err;
    }
  }

  /**
   * Closes the descriptors kept open; reads after it open and close their file each time. For a snapshot no longer
   * served: the files of a snapshot removed from disk are then freed at once.
   */
  close(): void {
    this.open?.closeAll();
    this.open = null;
  }

  sha256(bytes: Uint8Array): Uint8Array {
    // The one-shot hash: no Hash object per call, which an export's hundred thousand record checks would each make.
    return hash('sha256', bytes, 'buffer');
  }
}

/**
 * The prefetching thread, one for the process whatever the snapshots (about 10 MiB): started at the first hint, so
 * that a process that never exports never has it.
 */
let prefetcher: Worker | null = null;

/**
 * Files the prefetching thread reads at once. On a cold disk, reads of several files at a time finish in about half the
 * time of one after another (the device serves them in parallel), and eight keep libuv's four threads busy.
 */
const PREFETCH_PARALLEL = 8;

/**
 * Starts the prefetching thread: it reads the files it is sent whole, in the order sent and
 * ${PREFETCH_PARALLEL} at a time (through libuv's threads, so the reads wait on the disk together), never through a
 * symbolic link, and ignores what cannot be read. Plain JavaScript evaluated as it is, so it needs no file of its own
 * next to a bundle. Small heap limits: it holds a 128 KiB buffer for each read under way and the lists it was sent.
 */
function startPrefetcher(): Worker {
  const worker = new Worker(
    `const { parentPort } = require('node:worker_threads');
const { open, read, close, constants } = require('node:fs');
let queue = [];
let next = 0;
let running = 0;
const buffers = [];
function pump() {
  while (running < ${PREFETCH_PARALLEL} && next < queue.length) {
    running++;
    const file = queue[next++];
    const buffer = buffers.pop() ?? Buffer.allocUnsafeSlow(128 * 1024);
    const done = () => {
      buffers.push(buffer);
      running--;
      pump();
    };
    open(file, constants.O_RDONLY | constants.O_NOFOLLOW, (error, fd) => {
      if (error) return done();
      const more = () => read(fd, buffer, 0, buffer.length, null, (e, n) => (e || n === 0 ? close(fd, done) : more()));
      more();
    });
  }
  if (next === queue.length) {
    queue = [];
    next = 0;
  }
}
parentPort.on('message', (files) => {
  for (const file of files) queue.push(file);
  pump();
});`,
    { eval: true, resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 2 } },
  );
  // A hint is worth nothing to a process that is stopping: the thread never keeps it alive. One that failed (out of
  // its small heap, say) is replaced at the next hint; the reads never needed it.
  worker.unref();
  worker.on('error', () => {});
  worker.once('exit', () => {
    if (prefetcher === worker) prefetcher = null;
  });
  return worker;
}

function openFile(path: string): number {
  return openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
}

/**
 * Throws (ELOOP) when a folder on the way from `root` to the file `rel` is a symbolic link. O_NOFOLLOW refuses a link
 * only as the file itself; a linked folder (`history/changes` pointing outside the snapshot) would be followed, so
 * every folder below the root is looked at first, as SECURITY.md promises that no link is followed.
 */
export function refuseLinkedFolders(root: string, rel: string): void {
  const parts = rel.split(/[\\/]/);
  let at = root;
  for (let i = 0; i < parts.length - 1; i++) {
    at = join(at, parts[i]!);
    if (lstatSync(at).isSymbolicLink()) {
      throw Object.assign(new Error(`${rel}: the folder ${parts.slice(0, i + 1).join('/')} is a symbolic link, which is never followed`), { code: 'ELOOP' });
    }
  }
}

/**
 * Open descriptors by path, the least recently used closed for another past `limit` (an LruCache that closes what it
 * evicts). A descriptor is taken out while in use and put back after, so one that failed a read is simply not put back.
 */
class OpenFiles {
  private readonly fds: LruCache<string, number>;

  constructor(limit: number) {
    this.fds = new LruCache(limit, () => 1, (_, fd) => closeSync(fd));
  }

  take(path: string): number | undefined {
    const fd = this.fds.get(path);
    if (fd !== undefined) this.fds.delete(path);
    return fd;
  }

  keep(path: string, fd: number): void {
    this.fds.set(path, fd);
  }

  /**
   * Opens a file; when the process is out of descriptors, closes half of those kept, keeps at most that many from
   * then on, and tries once more: the cache gives way to the rest of the process.
   */
  openFile(path: string): number {
    try {
      return openFile(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EMFILE' || this.fds.size === 0) throw err;
      this.fds.resize(Math.max(1, Math.floor(this.fds.size / 2)));
      return openFile(path);
    }
  }

  closeAll(): void {
    this.fds.evictAll();
  }
}

/** Reads into all of `into` from `offset` of the file, or up to its end; returns the bytes read. */
function readFully(fd: number, into: Uint8Array, offset: number): number {
  let got = 0;
  while (got < into.length) {
    const n = readSync(fd, into, got, into.length - got, offset + got);
    if (n === 0) break;
    got += n;
  }
  return got;
}

function identityOf(st: BigIntStats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

/**
 * Problems with the listed files: missing, not a file, or of another size than the manifest says. Sizes, not
 * digests: hashing every file would read the whole snapshot on each switch, while a truncated or half-copied file
 * (what actually goes wrong with a copy or a full disk) always shows in its size.
 */
export async function checkListedFiles(root: string, files: readonly FileEntry[], concurrency = 32): Promise<string[]> {
  const limit = pLimit(concurrency);
  const problems: string[] = [];
  await Promise.all(
    files.map((f) =>
      limit(async () => {
        const rel = safeRelPath(f.path);
        if (rel === null) {
          problems.push(`${f.path}: not a path inside the snapshot`);
          return;
        }
        const st = await lstat(join(root, rel)).catch(() => null);
        if (!st) problems.push(`${f.path}: missing`);
        else if (!st.isFile()) problems.push(`${f.path}: not a file${st.isSymbolicLink() ? ' (a symbolic link)' : ''}`);
        else if (st.size !== f.bytes) problems.push(`${f.path}: ${st.size} bytes, manifest says ${f.bytes}`);
      }),
    ),
  );
  return problems.sort();
}
