import { LAYOUT, type FileEntry } from '../contract/index.ts';
import { CorruptFile, UNREADABLE, type CorruptFileReport } from './errors.ts';
import { safeRelPath } from './paths.ts';
import { toHex, type SnapshotStorage } from './storage.ts';

/** A buffer lent to a run of reads (an export's, or one lent shard's), reused from one read to the next. */
export type ReadBuffers = { bytes: Uint8Array; entries?: Uint32Array; offsets?: Uint32Array; lengths?: Uint32Array };

/** Read buffers (lent or an export's): at least this large. */
export const READ_BUFFER_MIN_BYTES = 64 * 1024;

/** Grows a read buffer (to twice its size at least) when it is shorter than `length`. */
function ensureRoom(buffers: ReadBuffers, length: number): void {
  if (buffers.bytes.length < length) buffers.bytes = new Uint8Array(Math.max(length, 2 * buffers.bytes.length, READ_BUFFER_MIN_BYTES));
}

/**
 * Reads of a snapshot's files checked against its manifest: a file whose bytes do not match, or that cannot be read,
 * throws CorruptFile and is reported once (per file and snapshot). A file read again is hashed again unless the
 * storage can tell it is the very file whose bytes matched before: the identity of one that matched is remembered.
 */
export class CheckedReads {
  /** Record shards whose bytes have matched their sha256 once, so that single records may be read from them. */
  readonly verified = new Set<string>();
  /** Each file's identity on disk when its bytes last matched the manifest (storages that can tell one). */
  readonly identities = new Map<string, string>();
  /** Files already reported as damaged, so the log says it once per file and snapshot. */
  private readonly reported = new Set<string>();

  constructor(
    readonly storage: SnapshotStorage,
    readonly files: ReadonlyMap<string, FileEntry>,
    private readonly snapshotId: string,
    private readonly onCorrupt: ((report: CorruptFileReport) => void) | undefined,
  ) {}

  /** The manifest's entry of a listed file (the caller knows it is listed). */
  entry(path: string): FileEntry {
    return this.files.get(path) as FileEntry;
  }

  /** Reports a damaged file once and throws CorruptFile. */
  corrupt(path: string, expected: string, actual: string): never {
    const report: CorruptFileReport = { snapshotId: this.snapshotId, dir: this.storage.location, path, expected, actual };
    if (!this.reported.has(path)) {
      this.reported.add(path);
      this.onCorrupt?.(report);
    }
    throw new CorruptFile(report);
  }

  /** A listed file that could not be read: reported as unreadable. */
  unreadable(path: string): never {
    return this.corrupt(path, this.entry(path).sha256, UNREADABLE);
  }

  /** A checked file whose bytes no longer match: reported as the file it is now against the manifest. */
  async changedSince(path: string): Promise<never> {
    this.verified.delete(path);
    this.identities.delete(path);
    const now = await this.storage.read(path).then((b) => toHex(this.storage.sha256(b)), () => UNREADABLE);
    return this.corrupt(path, this.entry(path).sha256, now);
  }

  /**
   * A listed file (not the manifest) read now and checked against the manifest's sha256, whatever its identity.
   * `large`: megabytes, checked with the storage's asynchronous hash where it has one.
   */
  async file(rel: string, large = false): Promise<Uint8Array> {
    const safe = safeRelPath(rel);
    const entry = safe === null || safe === LAYOUT.manifest ? undefined : this.files.get(safe);
    if (safe === null || !entry) throw new Error(`${rel} is not a file of snapshot ${this.snapshotId}`);
    const bytes = await this.storage.read(safe).catch(() => this.corrupt(safe, entry.sha256, UNREADABLE));
    const digest = large && this.storage.sha256Async ? await this.storage.sha256Async(bytes) : this.storage.sha256(bytes);
    const actual = toHex(digest);
    if (actual !== entry.sha256 || bytes.length !== entry.bytes) return this.corrupt(safe, entry.sha256, actual);
    return bytes;
  }

  /**
   * A listed file read whole (into `buffers`, grown when short, when given) and checked against the manifest, unless
   * the storage tells it is the very file that matched before.
   */
  async whole(path: string, buffers?: ReadBuffers): Promise<Uint8Array> {
    const entry = this.entry(path);
    const { bytes, identity } = await this.readWhole(path, entry, buffers);
    if (identity === null || this.identities.get(path) !== identity) {
      const actual = toHex(this.storage.sha256(bytes));
      if (bytes.length !== entry.bytes || actual !== entry.sha256) {
        this.identities.delete(path);
        this.corrupt(path, entry.sha256, actual);
      }
      if (identity !== null) this.identities.set(path, identity);
    }
    return bytes;
  }

  /** A whole file (into `buffers`, grown when short, when given) and its identity when the storage can tell one. */
  private async readWhole(path: string, entry: FileEntry, buffers?: ReadBuffers): Promise<{ bytes: Uint8Array; identity: string | null }> {
    try {
      if (buffers) ensureRoom(buffers, entry.bytes);
      if (this.storage.readIdentified) return await this.storage.readIdentified(path, 0, entry.bytes, buffers?.bytes, this.identities.get(path));
      return { bytes: await this.range(path, 0, entry.bytes, buffers), identity: null };
    } catch {
      this.identities.delete(path);
      return this.corrupt(path, entry.sha256, UNREADABLE);
    }
  }

  /**
   * `length` bytes of a file from `offset`, not checked (the caller checks them against a digest of its own): into
   * `buffers` (grown when short) when the storage can, else a new buffer.
   */
  async range(path: string, offset: number, length: number, buffers?: ReadBuffers): Promise<Uint8Array> {
    if (!buffers || !this.storage.readInto) return this.storage.readRange(path, offset, length);
    ensureRoom(buffers, length);
    const got = await this.storage.readInto(path, offset, buffers.bytes.subarray(0, length));
    return buffers.bytes.subarray(0, got);
  }
}
