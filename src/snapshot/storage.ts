/**
 * Where a snapshot's files come from, and the one hash the snapshot needs: everything below the HTTP layer reads
 * through this interface, so the same snapshot code runs over a local folder (Node), and over object storage or
 * static assets elsewhere. Paths are relative to the snapshot's root and come from its manifest.
 */
export interface SnapshotStorage {
  /** Where the snapshot is, for logs (a folder, a bucket and prefix). */
  readonly location: string;
  /** A whole file; rejects when it cannot be read. */
  read(path: string): Promise<Uint8Array>;
  /** `length` bytes from `offset` (fewer only when the file is shorter); rejects when it cannot be read. */
  readRange(path: string, offset: number, length: number): Promise<Uint8Array>;
  /**
   * Optional: fills `into` from `offset` (fewer bytes only when the file is shorter) and resolves to how many were
   * read, so that a reader of many ranges (an export) reuses one buffer instead of making one per read.
   */
  readInto?(path: string, offset: number, into: Uint8Array): Promise<number>;
  /**
   * Optional: a hint that these files will be read soon (the shards of the records an export reads next), so that the storage
   * starts fetching them in the background while the caller works on what it has. Nothing is kept or returned, and a
   * file that cannot be read is left to the read that follows to report.
   */
  prefetch?(paths: readonly string[]): void;
  /**
   * Optional: bytes between two ranges of one file below which reading through the gap costs less than a second read
   * (an export reads a shard's records in as few reads as this allows); absent, a local disk's 16 KiB. A storage whose
   * read is a request (a Worker's) gives more than a shard: a request costs more than a shard's bytes.
   */
  readonly rangeGapBytes?: number;
  /** SHA-256 of the bytes. Synchronous: records are checked on the request path, and a round trip would cost more. */
  sha256(bytes: Uint8Array): Uint8Array;
  /**
   * Optional: `readRange` plus the file's identity when the bytes were read (on a local disk: device, inode, size,
   * modification and change times, the same before and after the read), or null when it cannot be told. A file whose
   * identity is the one it had when its bytes last matched their sha256 holds those bytes still, so the snapshot does
   * not hash it again: a change in place moves its change time, a replacement its inode. With `into` (at least
   * `length` long), the bytes are read into it rather than into a new buffer. With `known`, the identity the file had
   * when its bytes last matched, one look after the read may do: a file that has it still was not changed since, so
   * the bytes read are the ones that matched (the answer's identity is then `known`); any other answer is as without.
   */
  readIdentified?(
    path: string,
    offset: number,
    length: number,
    into?: Uint8Array,
    known?: string,
  ): Promise<{ bytes: Uint8Array; identity: string | null }>;
  /**
   * SHA-256 of the bytes, asynchronously, where the host's fast hash is asynchronous only (Web Crypto in a Worker):
   * for the search index's blocks, many at a time. Absent: `sha256` is used.
   */
  sha256Async?(bytes: Uint8Array): Promise<Uint8Array>;
  /** Optional: lets go of what the storage holds open (descriptors) once the snapshot is no longer served; reads still work after. */
  close?(): void;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

export function toHex(bytes: Uint8Array, length = bytes.length): string {
  let out = '';
  for (let i = 0; i < length; i++) out += HEX[bytes[i] as number];
  return out;
}

/** True when the first `length` bytes of `a` from `aAt` equal those of `b` from `bAt`. */
export function bytesEqual(a: Uint8Array, aAt: number, b: Uint8Array, bAt: number, length: number): boolean {
  for (let i = 0; i < length; i++) if (a[aAt + i] !== b[bAt + i]) return false;
  return true;
}

/**
 * Thrown by a storage when a file the manifest lists is not there or cannot be fetched (an object store that lost an
 * object, a static-assets version without it). Not a bug: the answer that needs the file cannot be given from this
 * snapshot now, which the API says with 503 `source_unavailable`.
 */
export class UnavailableFile extends Error {
  override readonly name = 'UnavailableFile';
  readonly path: string;
  constructor(location: string, path: string, reason: string) {
    super(`${path} of the snapshot at ${location} cannot be read: ${reason}`);
    this.path = path;
  }
}
