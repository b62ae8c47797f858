import { existsSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import sirv from 'sirv';
import { LAYOUT } from '../contract/index.ts';
import type { Snapshot } from '../snapshot/index.ts';
import { safeRelPath } from '../snapshot/files.ts';

/**
 * Static files: the active snapshot under /snapshot/ and the browser page from public/. Both go through sirv, and
 * neither can reach a file outside its folder: the snapshot serves only paths its manifest lists (plus the manifest),
 * and public/ only the files sirv found in it at start-up.
 */

type Handler = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

/** Names with a content hash in them (Pagefind's fragments, indexes, filters) never change: cache them for a year. */
const CONTENT_ADDRESSED = /(?:^|[._-])[0-9a-f]{7,}(?:[._-]|$)/;
const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'public, no-cache';

export function cacheControlFor(rel: string): string {
  const name = rel.slice(rel.lastIndexOf('/') + 1);
  return CONTENT_ADDRESSED.test(name) && /\d/.test(name) ? IMMUTABLE : REVALIDATE;
}

type Variant = 'br' | 'gzip' | 'identity';

/**
 * The representation sirv will send: a precompressed `.br` or `.gz` sibling when the client takes it, else the
 * file. Decided here, with sirv's own rule, so the ETag can name it; sirv is then told to pick exactly this one.
 */
function variantFor(snapshot: Snapshot, rel: string, acceptEncoding: string): Variant {
  const present = snapshot.memo(`static:variants:${rel}`, () => ({
    br: existsSync(join(snapshot.dir, `${rel}.br`)),
    gzip: existsSync(join(snapshot.dir, `${rel}.gz`)),
  }));
  if (present.br && /(br|brotli)/i.test(acceptEncoding)) return 'br';
  if (present.gzip && acceptEncoding.includes('gzip')) return 'gzip';
  return 'identity';
}

const ETAG_SUFFIX: Record<Variant, string> = { br: '-br', gzip: '-gz', identity: '' };

function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}

/**
 * GET /snapshot/<path>: a file of the snapshot the request started on, byte for byte, with an ETag from its
 * sha256 in the manifest. Calls `notFound` for anything the manifest does not list, and `fail` when the file on disk
 * no longer matches its sha256 (checked once per file and snapshot, before its first byte is sent).
 */
export function snapshotFile(
  snapshot: Snapshot,
  rawPath: string,
  req: IncomingMessage,
  res: ServerResponse,
  notFound: () => void,
  fail: (err: unknown) => void,
): void {
  let decoded: string;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch {
    return notFound();
  }
  const rel = safeRelPath(decoded);
  const sha256 = rel === LAYOUT.manifest ? snapshot.manifestSha256 : rel === null ? undefined : snapshot.fileEntry(rel)?.sha256;
  if (rel === null || sha256 === undefined) return notFound();

  const acceptEncoding = String(req.headers['accept-encoding'] ?? '');
  const variant = variantFor(snapshot, rel, acceptEncoding);
  const etag = `"${sha256.slice(0, 32)}${ETAG_SUFFIX[variant]}"`;
  const setHeaders = () => {
    res.setHeader('ETag', etag);
    res.setHeader('Cache-Control', cacheControlFor(rel));
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Vary', 'Accept-Encoding');
    // The snapshot's JSON is UTF-8, as every JSON answer of the service says; sirv would name no charset.
    if (rel.endsWith('.json')) res.setHeader('Content-Type', 'application/json; charset=utf-8');
  };
  if (matchesEtag(req.headers['if-none-match'], etag)) {
    // The client already holds the bytes the manifest names; nothing on disk is involved.
    setHeaders();
    res.statusCode = 304;
    res.end();
    return;
  }
  snapshot.verifyFile(rel).then(() => {
    setHeaders();
    const serve = snapshot.memo('static:sirv', () =>
      // dev mode looks files up per request instead of walking the whole snapshot (up to 20,000 files) up front;
      // the manifest check above has already limited the paths it can be asked for.
      sirv(snapshot.dir, { dev: true, etag: false, brotli: true, gzip: true, extensions: [], dotfiles: false }),
    );
    req.headers['accept-encoding'] = variant === 'identity' ? 'identity' : variant;
    req.url = `/${rel}`;
    serve(req, res, notFound);
  }, fail);
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
