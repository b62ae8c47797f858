import { createReadStream } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import type { Item } from './plan.ts';

/** Where a publication goes: an S3-compatible bucket under a prefix, or a folder a static host serves. */
export interface Destination {
  readonly name: string;
  /** The bytes of the live `manifest.json` under `key`, or null when there is none. */
  read(key: string): Promise<Buffer | null>;
  /** Whether `item` is already there as sent before (a folder checks the file's size; a bucket trusts the manifest). */
  holds(item: Item): Promise<boolean>;
  put(item: Item): Promise<void>;
  /** Every key under a prefix of the site. */
  list(prefix: string): Promise<string[]>;
  remove(key: string): Promise<void>;
}

/** Files up to this size are sent from memory (so the client can retry them); larger ones are streamed once. */
const IN_MEMORY_BYTES = 16 * 1024 * 1024;

/** `s3://bucket/prefix` → bucket and key prefix (empty, or ending in `/`). */
export function parseBucketUrl(url: string): { bucket: string; prefix: string } | null {
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(url);
  if (!m) return null;
  const rest = (m[2] ?? '').replace(/^\/+|\/+$/g, '');
  if (rest.split('/').some((seg) => seg === '.' || seg === '..')) return null;
  return { bucket: m[1] as string, prefix: rest === '' ? '' : `${rest}/` };
}

export type BucketOptions = {
  bucket: string;
  prefix: string;
  /** An S3-compatible service's URL (R2, MinIO, a local server); addressed by path, not by host name. */
  endpoint?: string;
  region?: string;
};

/**
 * A bucket through AWS's own S3 client: it signs requests for AWS and for every S3-compatible service, reads the
 * usual credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a profile, an instance role), retries throttled
 * and failed requests with backoff, and pages through listings. Checksums are sent only where an operation
 * requires them, since several S3-compatible services refuse the newer checksum headers.
 */
export function bucketDestination(options: BucketOptions): Destination {
  const client = new S3Client({
    region: options.region ?? process.env.AWS_REGION ?? 'us-east-1',
    ...(options.endpoint ? { endpoint: options.endpoint, forcePathStyle: true } : {}),
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const Bucket = options.bucket;
  const Key = (key: string) => `${options.prefix}${key}`;
  return {
    name: `s3://${Bucket}/${options.prefix}`,
    async read(key) {
      try {
        const got = await client.send(new GetObjectCommand({ Bucket, Key: Key(key) }));
        return Buffer.from(await got.Body!.transformToByteArray());
      } catch (err) {
        if (err instanceof S3ServiceException && (err.name === 'NoSuchKey' || err.$metadata.httpStatusCode === 404)) return null;
        throw err;
      }
    },
    holds: async () => true,
    async put(item) {
      const body = item.bytes <= IN_MEMORY_BYTES ? await readFile(item.source) : createReadStream(item.source);
      await client.send(
        new PutObjectCommand({
          Bucket,
          Key: Key(item.key),
          Body: body,
          ContentLength: item.bytes,
          ContentType: item.contentType,
          CacheControl: item.cacheControl,
          ...(item.contentEncoding ? { ContentEncoding: item.contentEncoding } : {}),
          Metadata: { sha256: item.sha256 },
        }),
      );
    },
    async list(prefix) {
      const keys: string[] = [];
      let token: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket, Prefix: Key(prefix), ContinuationToken: token }));
        for (const o of page.Contents ?? []) if (o.Key) keys.push(o.Key.slice(options.prefix.length));
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      return keys;
    },
    async remove(key) {
      await client.send(new DeleteObjectCommand({ Bucket, Key: Key(key) }));
    },
  };
}

/**
 * A folder laid out as the site. Each file is written beside its place and renamed into it, so a reader never gets
 * a file half written.
 */
export function folderDestination(root: string): Destination {
  const dir = resolve(root);
  const at = (key: string) => join(dir, ...key.split('/'));
  return {
    name: dir,
    read: (key) => readFile(at(key)).catch(() => null),
    async holds(item) {
      return (await stat(at(item.key)).catch(() => null))?.size === item.bytes;
    },
    async put(item) {
      const target = at(item.key);
      await mkdir(dirname(target), { recursive: true });
      const staged = `${target}.publishing-${process.pid}`;
      await copyFile(item.source, staged);
      await rename(staged, target);
    },
    async list(prefix) {
      const base = at(prefix);
      const entries = await readdir(base, { withFileTypes: true, recursive: true }).catch(() => []);
      return entries.filter((e) => e.isFile()).map((e) => `${prefix}${relative(base, join(e.parentPath, e.name)).split(sep).join('/')}`);
    },
    async remove(key) {
      await rm(at(key), { force: true });
    },
  };
}
