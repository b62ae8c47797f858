import { SEARCH_CHUNKS_PATH } from '../contract/search-chunks.ts';
import { LAYOUT } from '../contract/snapshot.ts';
import { searchFromChunks, warmSearch, type ChunkCache } from '../operations/search.ts';
import { InvalidSnapshot, Snapshot, type SnapshotOptions, toHex, type SnapshotStorage } from '../snapshot/index.ts';

export type ManifestWatchOptions = SnapshotOptions & {
  /** How long a manifest read is trusted before the next request reads it again; 0 reads it on every request. */
  checkEveryMs: number;
  /** Told when a published manifest is refused (the snapshot before it, if any, keeps serving). */
  onRefuse?: (reason: string) => void;
  /** The isolate's cache of the chunked search index's files, which every snapshot's searches read through. */
  searchCache: ChunkCache;
  /** Searches read the whole index by sections (read ahead at each switch), as before the chunked index: for comparison. */
  searchWhole?: boolean;
  /** Told when a new snapshot starts serving. */
  onSwitch?: (next: Snapshot, previous: Snapshot | null) => void;
};

/**
 * The snapshot a Worker isolate serves, from the manifest published in its storage. The manifest is read again at
 * most every `checkEveryMs`; when its bytes changed, the snapshot it names is opened (its manifest parsed, its small
 * files checked against their sha256) and requests that start afterwards use it. Each request keeps the Snapshot it
 * started on, so it is answered from one manifest only. A manifest that cannot be read or is not valid leaves the
 * previous snapshot serving (none at all: 503), as a broken link does on Node.
 *
 * Publishers upload the files first and the manifest last, so a manifest never names a file that is not there yet.
 */
export class ManifestWatch {
  private readonly storage: SnapshotStorage;
  private readonly options: ManifestWatchOptions;
  private snapshot: Snapshot | null = null;
  private checkedAt = Number.NEGATIVE_INFINITY;
  private checking: Promise<Snapshot | null> | null = null;

  constructor(storage: SnapshotStorage, options: ManifestWatchOptions) {
    this.storage = storage;
    this.options = options;
  }

  /** The snapshot for a request starting at `now` (ms): the current one, after reading the manifest when it is due. */
  async current(now: number): Promise<Snapshot | null> {
    if (this.snapshot && now - this.checkedAt < this.options.checkEveryMs) return this.snapshot;
    // One read at a time; requests that arrive meanwhile keep the snapshot they would have had, or wait for the first.
    if (this.checking) return this.snapshot ?? this.checking;
    this.checking = this.check(now).finally(() => {
      this.checking = null;
    });
    return this.checking;
  }

  /** The snapshot serving now, without reading the manifest (null before the first is opened). */
  get serving(): Snapshot | null {
    return this.snapshot;
  }

  /** Makes the next request read the manifest (after a file failed its check: a newer manifest may be out). */
  recheckSoon(): void {
    this.checkedAt = Number.NEGATIVE_INFINITY;
  }

  private async check(now: number): Promise<Snapshot | null> {
    const previous = this.snapshot;
    let bytes: Uint8Array;
    try {
      bytes = await this.storage.read(LAYOUT.manifest);
    } catch (err) {
      this.options.onRefuse?.(`${LAYOUT.manifest} cannot be read: ${err instanceof Error ? err.message : String(err)}`);
      this.checkedAt = now;
      return previous;
    }
    this.checkedAt = now;
    if (previous && toHex(this.storage.sha256Async ? await this.storage.sha256Async(bytes) : this.storage.sha256(bytes)) === previous.manifestSha256) return previous;
    try {
      const next = await Snapshot.fromStorage(this.storage, bytes, this.options);
      // Searches read the chunked index, a request's files when it comes: only its directory is read now. A snapshot
      // built before the chunked index has its whole index's common sections read ahead, as on Node.
      if (next.fileEntry(SEARCH_CHUNKS_PATH) && !this.options.searchWhole) await searchFromChunks(next, this.options.searchCache).catch(() => undefined);
      else await warmSearch(next).catch(() => undefined);
      this.snapshot = next;
      this.options.onSwitch?.(next, previous);
      return next;
    } catch (err) {
      if (!(err instanceof InvalidSnapshot)) throw err;
      this.options.onRefuse?.(err.message);
      return previous;
    }
  }
}
