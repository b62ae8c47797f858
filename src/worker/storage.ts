import { sha256 } from '../operations/sha256.ts';
import { UnavailableFile, type SnapshotStorage } from '../snapshot/index.ts';

/**
 * Snapshot storages of a Cloudflare Worker: the Worker's static assets, or an R2 bucket. Both read `prefix + path`
 * (the snapshot's files as `npm run build` wrote them, `manifest.json` beside them), and neither checks anything:
 * the Snapshot checks every byte against the manifest, exactly as on Node. A file that is not there or cannot be
 * fetched throws UnavailableFile (503 for the answers that need it), never an empty or partial read.
 *
 * Only the few members used are typed here, so the project needs no Workers type package.
 */
export type AssetsBinding = { fetch(request: Request): Promise<Response> };

export type R2Range = { offset: number; length: number };
export type R2ObjectBodyLike = { arrayBuffer(): Promise<ArrayBuffer> };
export type R2BucketBinding = { get(key: string, options?: { range?: R2Range }): Promise<R2ObjectBodyLike | null> };

/** SHA-256 on the request path: Web Crypto's digest is asynchronous, and the interface is not (see storage.ts). */
const digest = (bytes: Uint8Array): Uint8Array => sha256(bytes);

/**
 * Web Crypto's SHA-256 for the search index's blocks: native code, many times faster than the script above on
 * megabytes, and the index loader awaits anyway.
 */
const digestAsync = async (bytes: Uint8Array): Promise<Uint8Array> =>
  new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));

/**
 * What a Worker's storages read through rather than make another request: a request to the assets or to R2 costs the
 * isolate some hundreds of microseconds of CPU (about 0.3 ms under workerd, Miniflare's assets server included), more
 * than the bytes of a whole record shard (about 100 KB at 100 records), so an export reads each shard's records of a
 * batch in one request, however far apart. Miniflare's assets server answers a Range with the whole file, so there
 * each further request read the same whole shard again.
 */
const WORKER_RANGE_GAP_BYTES = 1024 * 1024;

/** Workers static assets, through the ASSETS binding: plain GETs, with a Range header for a record. */
export class AssetsStorage implements SnapshotStorage {
  readonly location: string;
  readonly rangeGapBytes = WORKER_RANGE_GAP_BYTES;
  private readonly assets: AssetsBinding;
  private readonly base: string;

  constructor(assets: AssetsBinding, prefix: string) {
    this.assets = assets;
    this.base = `https://assets.invalid/${prefix}`;
    this.location = `assets:/${prefix}`;
  }

  async read(path: string): Promise<Uint8Array> {
    return this.get(path, null);
  }

  async readRange(path: string, offset: number, length: number): Promise<Uint8Array> {
    if (length <= 0) return new Uint8Array(0);
    const bytes = await this.get(path, `bytes=${offset}-${offset + length - 1}`);
    // A host that ignores Range sends the whole file (200): copy the range out of it, so that a range kept for long
    // (a search index section) does not keep the whole file alive.
    return bytes.length > length ? bytes.slice(offset, offset + length) : bytes;
  }

  sha256(bytes: Uint8Array): Uint8Array {
    return digest(bytes);
  }

  sha256Async(bytes: Uint8Array): Promise<Uint8Array> {
    return digestAsync(bytes);
  }

  private async get(path: string, range: string | null): Promise<Uint8Array> {
    let response: Response;
    try {
      response = await this.assets.fetch(new Request(this.base + path, range ? { headers: { Range: range } } : {}));
    } catch (err) {
      throw new UnavailableFile(this.location, path, err instanceof Error ? err.message : String(err));
    }
    if (response.status !== 200 && response.status !== 206) {
      await response.body?.cancel();
      throw new UnavailableFile(this.location, path, `the assets answered ${response.status}`);
    }
    return new Uint8Array(await response.arrayBuffer());
  }
}

/** An R2 bucket through its binding: `get`, with a range for a record. */
export class R2Storage implements SnapshotStorage {
  readonly location: string;
  readonly rangeGapBytes = WORKER_RANGE_GAP_BYTES;
  private readonly bucket: R2BucketBinding;
  private readonly prefix: string;

  constructor(bucket: R2BucketBinding, prefix: string) {
    this.bucket = bucket;
    this.prefix = prefix;
    this.location = `r2:/${prefix}`;
  }

  read(path: string): Promise<Uint8Array> {
    return this.get(path);
  }

  readRange(path: string, offset: number, length: number): Promise<Uint8Array> {
    if (length <= 0) return Promise.resolve(new Uint8Array(0));
    return this.get(path, { offset, length });
  }

  sha256(bytes: Uint8Array): Uint8Array {
    return digest(bytes);
  }

  sha256Async(bytes: Uint8Array): Promise<Uint8Array> {
    return digestAsync(bytes);
  }

  private async get(path: string, range?: R2Range): Promise<Uint8Array> {
    let object: R2ObjectBodyLike | null;
    try {
      object = await this.bucket.get(this.prefix + path, range ? { range } : undefined);
      if (object) return new Uint8Array(await object.arrayBuffer());
    } catch (err) {
      throw new UnavailableFile(this.location, path, err instanceof Error ? err.message : String(err));
    }
    throw new UnavailableFile(this.location, path, 'no such object in the bucket');
  }
}
