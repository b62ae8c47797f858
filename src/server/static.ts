import { createHash } from 'node:crypto';
import { constants, statSync, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import sirv from 'sirv';
import { LAYOUT, type FileEntry } from '../contract/index.ts';
import { UNREADABLE, type Snapshot } from '../snapshot/index.ts';
import { safeRelPath } from '../snapshot/paths.ts';
import { refuseLinkedFolders } from '../node/files.ts';
import { contentTypeFor, hasEncodedSeparator, httpDate, ifRangeHolds, isCompressibleType, notModified, parseRange, preconditionFails } from '../api/file-http.ts';
import { encodingWeights } from './media.ts';
import { COMPRESS_MIN_BYTES, compress } from './respond.ts';

/**
 * Static files: the active snapshot under /snapshot/ and the browser page from public/. Neither can reach a file
 * outside its folder: the snapshot serves only paths its manifest lists (plus the manifest), and public/ only the
 * files sirv found in it at start-up.
 *
 * A snapshot file is sent only from bytes checked against the manifest during this request: files up to
 * MEMORY_MAX_BYTES from the snapshot's byte cache (checked when read, and never re-read from disk while cached),
 * larger ones streamed from one descriptor and hashed as they go, the last chunk held back until the whole file has
 * matched its sha256: a file changed on disk during the stream cuts the connection, so no client ever receives a
 * complete body that differs from the manifest. Before the stream starts, a file whose identity (device, inode, size,
 * modification and change times) is not the one recorded when it last matched in full is checked in full first, so
 * a file damaged at rest gets an error answer rather than a cut connection.
 */

type Handler = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

/** Files up to this size are sent from the snapshot's verified byte cache; larger ones are streamed. */
export const MEMORY_MAX_BYTES = 1024 * 1024;

/** Names with a content hash in them (Pagefind's fragments, indexes, filters) never change: cache them for a year. */
const CONTENT_ADDRESSED = /(?:^|[._-])[0-9a-f]{7,}(?:[._-]|$)/;
const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'public, no-cache';

export function cacheControlFor(rel: string): string {
  const name = rel.slice(rel.lastIndexOf('/') + 1);
  return CONTENT_ADDRESSED.test(name) && /\d/.test(name) ? IMMUTABLE : REVALIDATE;
}

type Coding = 'br' | 'gzip';
const SUFFIX: Record<Coding, string> = { br: '.br', gzip: '.gz' };

/**
 * What is sent for a request: the file itself, a precompressed sibling the manifest lists (a file of its own, with
 * its own sha256 and so its own strong ETag), or the file compressed now (a weak ETag: the same bytes each time on
 * one server, but not promised across versions of zlib).
 */
type Representation =
  | { kind: 'file'; entry: FileEntry; coding: Coding | null; etag: string }
  | { kind: 'on-the-fly'; coding: Coding; etag: string };

/** Streamed files and the identity they had when their bytes last matched the manifest, per snapshot. */
const streamedIdentity = new WeakMap<Snapshot, Map<string, string>>();
/** The manifest compressed once per snapshot and coding (it is the one file every mirror run asks for). */
const compressedManifest = new WeakMap<Snapshot, Map<Coding, Promise<Buffer>>>();

function representationFor(snapshot: Snapshot, rel: string, entry: FileEntry, req: IncomingMessage, memoryMaxBytes: number): Representation {
  const identity: Representation = { kind: 'file', entry, coding: null, etag: `"${entry.sha256}"` };
  if (/\.(br|gz)$/.test(rel)) return identity;
  const weights = encodingWeights(req.headers['accept-encoding']);
  const order = (['br', 'gzip'] as const).filter((c) => weights[c] > 0).sort((a, b) => weights[b] - weights[a]);
  for (const coding of order) {
    const sibling = snapshot.fileEntry(`${rel}${SUFFIX[coding]}`);
    if (sibling) return { kind: 'file', entry: sibling, coding, etag: `"${sibling.sha256}"` };
  }
  // A range is of the representation sent; on-the-fly bytes have no stable offsets, so a Range gets the file.
  const small = rel === LAYOUT.manifest || entry.bytes <= memoryMaxBytes;
  const coding = order[0];
  if (coding && small && entry.bytes > COMPRESS_MIN_BYTES && isCompressibleType(rel) && req.headers.range === undefined) {
    return { kind: 'on-the-fly', coding, etag: `W/"${entry.sha256}-${coding === 'br' ? 'br' : 'gz'}"` };
  }
  return identity;
}

/**
 * GET and HEAD /snapshot/<path>: a file of the snapshot the request started on. Calls `notFound` for anything the
 * manifest does not list, and `fail` with a CorruptFile when the file on disk is gone or no longer matches.
 */
export function snapshotFile(
  snapshot: Snapshot,
  rawPath: string,
  req: IncomingMessage,
  res: ServerResponse,
  notFound: () => void,
  fail: (err: unknown) => void,
  memoryMaxBytes = MEMORY_MAX_BYTES,
): void {
  if (hasEncodedSeparator(rawPath)) return notFound();
  let decoded: string;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch {
    return notFound();
  }
  const rel = safeRelPath(decoded);
  const entry: FileEntry | undefined =
    rel === LAYOUT.manifest
      ? { path: rel, bytes: snapshot.manifestBytes.length, sha256: snapshot.manifestSha256 }
      : rel === null
        ? undefined
        : snapshot.fileEntry(rel);
  if (rel === null || entry === undefined) return notFound();

  const rep = representationFor(snapshot, rel, entry, req, memoryMaxBytes);
  const lastModified = new Date(snapshot.manifest.generatedAt);
  // Set only on the way out: an error answer instead (a file that fails its check) must not carry them.
  const headers: Record<string, string> = {
    'Content-Type': contentTypeFor(rel),
    ETag: rep.etag,
    'Last-Modified': httpDate(lastModified),
    'Cache-Control': cacheControlFor(rel),
    'Access-Control-Allow-Origin': '*',
    Vary: 'Accept-Encoding',
  };
  if (rep.kind === 'file') headers['Accept-Ranges'] = 'bytes';
  if (rep.coding) headers['Content-Encoding'] = rep.coding;

  if (preconditionFails(req.headers as Record<string, string | undefined>, rep.etag, lastModified)) {
    // RFC 9110 13.2.2: If-Match (or If-Unmodified-Since) is decided first; a client that names a version other than
    // the one served gets 412 and no body, so it never mixes the bytes of two versions.
    const { 'Content-Type': _type, 'Content-Encoding': _coding, ...validators } = headers;
    const body = Buffer.from(`The file's current entity tag is ${rep.etag}; the request's precondition names another.\n`, 'utf8');
    return end(req, res, 412, { ...validators, 'Content-Type': 'text/plain; charset=utf-8' }, body);
  }
  if (notModified(req.headers as Record<string, string | undefined>, rep.etag, lastModified)) {
    // The client already holds the bytes the manifest names; nothing on disk is involved.
    const { 'Content-Type': _type, 'Content-Encoding': _coding, ...validators } = headers;
    res.writeHead(304, validators);
    res.end();
    return;
  }

  const send = async (): Promise<void> => {
    if (rep.kind === 'on-the-fly') {
      const body = rel === LAYOUT.manifest ? await manifestIn(snapshot, rep.coding) : await compress(rep.coding, await snapshot.fileBytes(rel));
      return end(req, res, 200, headers, body);
    }
    const file = rep.entry;
    const range = ifRangeHolds(req.headers['if-range'] as string | undefined, rep.etag, lastModified) ? parseRange(req.headers.range, file.bytes) : { kind: 'none' as const };
    if (range.kind === 'unsatisfiable') {
      const { 'Content-Encoding': _coding, ...rest } = headers;
      const body = Buffer.from(`The range asked for is not within the file's ${file.bytes} bytes.\n`, 'utf8');
      return end(req, res, 416, { ...rest, 'Content-Type': 'text/plain; charset=utf-8', 'Content-Range': `bytes */${file.bytes}` }, body);
    }
    const [start, endAt] = range.kind === 'range' ? [range.start, range.end] : [0, file.bytes - 1];
    if (range.kind === 'range') headers['Content-Range'] = `bytes ${start}-${endAt}/${file.bytes}`;
    const status = range.kind === 'range' ? 206 : 200;
    if (file.path === LAYOUT.manifest || file.bytes <= memoryMaxBytes) {
      const bytes = await snapshot.fileBytes(file.path);
      return end(req, res, status, headers, bytes.subarray(start, endAt + 1));
    }
    return streamChecked(snapshot, file, start, endAt, req, res, status, headers);
  };
  send().catch(fail);
}

function end(req: IncomingMessage, res: ServerResponse, status: number, headers: Record<string, string>, body: Uint8Array): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { ...headers, 'Content-Length': body.length });
  res.end(req.method === 'HEAD' ? undefined : body);
}

function manifestIn(snapshot: Snapshot, coding: Coding): Promise<Buffer> {
  let byCoding = compressedManifest.get(snapshot);
  if (!byCoding) compressedManifest.set(snapshot, (byCoding = new Map()));
  let packed = byCoding.get(coding);
  if (!packed) {
    packed = compress(coding, snapshot.manifestBytes);
    byCoding.set(coding, packed);
    packed.catch(() => byCoding.delete(coding));
  }
  return packed;
}

const identityOf = (st: Stats): string => `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;

/**
 * Streams a byte range of a large file from one descriptor, opened without following a symbolic link. A file whose
 * identity is not the one recorded when it last matched its sha256 in full is checked in full first (an error answer
 * if it does not match). Then the whole file is read once more through the same descriptor, hashed as it goes, and
 * the bytes of the range are sent with the last chunk held back: it goes out only when the file has matched its
 * sha256 to the last byte; otherwise the connection is cut and the snapshot told that the file is damaged.
 */
async function streamChecked(
  snapshot: Snapshot,
  file: FileEntry,
  start: number,
  endAt: number,
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  headers: Record<string, string>,
): Promise<void> {
  let handle: FileHandle;
  try {
    // No link is followed, as a folder on the way either (a history folder linked outside the snapshot).
    refuseLinkedFolders(snapshot.dir, file.path);
    handle = await open(join(snapshot.dir, file.path), constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return snapshot.reportCorrupt(file.path, UNREADABLE);
  }
  let known = streamedIdentity.get(snapshot);
  if (!known) streamedIdentity.set(snapshot, (known = new Map()));
  try {
    const st = await handle.stat();
    if (!st.isFile()) return snapshot.reportCorrupt(file.path, UNREADABLE);
    const identity = identityOf(st);
    if (known.get(file.path) !== identity) {
      known.delete(file.path);
      const hash = createHash('sha256');
      for await (const chunk of handle.createReadStream({ start: 0, autoClose: false })) hash.update(chunk as Buffer);
      const actual = hash.digest('hex');
      const after = await handle.stat();
      if (actual !== file.sha256 || st.size !== file.bytes || identityOf(after) !== identity) {
        return snapshot.reportCorrupt(file.path, actual);
      }
      known.set(file.path, identity);
    }
    if (res.destroyed) return;
    res.writeHead(status, { ...headers, 'Content-Length': endAt - start + 1 });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    const hash = createHash('sha256');
    let at = 0;
    let held: Buffer | null = null;
    // One byte past the listed size is read if it is there, so a file that grew fails too.
    for await (const chunk of handle.createReadStream({ start: 0, end: file.bytes, autoClose: false }) as AsyncIterable<Buffer>) {
      hash.update(chunk);
      const from = Math.max(start, at);
      const to = Math.min(endAt + 1, at + chunk.length);
      if (to > from) {
        if (held !== null && !res.write(held)) await drained(res);
        if (res.destroyed) return;
        held = chunk.subarray(from - at, to - at);
      }
      at += chunk.length;
    }
    const actual = hash.digest('hex');
    if (at !== file.bytes || actual !== file.sha256) {
      known.delete(file.path);
      res.destroy();
      return snapshot.reportCorrupt(file.path, actual);
    }
    res.end(held ?? undefined);
  } catch (err) {
    // Headers are out: the connection is cut rather than ended, so the body can never look complete.
    if (res.headersSent) res.destroy();
    throw err;
  } finally {
    await handle.close().catch(() => {});
  }
}

/** Resolves when a response can take more, or is gone. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** GET / and other paths: the browser page. Null when there is no public/ folder (a bare API deployment). */
export function publicFiles(dir: string): Handler | null {
  const st = statSync(dir, { throwIfNoEntry: false });
  if (!st?.isDirectory()) return null;
  const serve = sirv(dir, { dev: false, etag: true, maxAge: 0, gzip: true, brotli: true, extensions: ['html'], dotfiles: false });
  return (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    res.setHeader('Access-Control-Allow-Origin', '*');
    serve(req, res, next);
  };
}
