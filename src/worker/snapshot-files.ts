import type { HostTools } from '../api/dispatch.ts';
import { ApiError } from '../api/errors.ts';
import { httpDate, notModified, preconditionFails } from '../api/file-http.ts';
import { DOWNLOADS_DIR, LAYOUT } from '../contract/snapshot.ts';
import { safeRelPath } from '../snapshot/index.ts';
import type { ManifestWatch } from './source.ts';

const CONTENT_TYPES: Record<string, string> = { json: 'application/json; charset=utf-8', bin: 'application/octet-stream' };

/**
 * A file of the snapshot, checked against the manifest it was read with (R2 only: assets serve their own files). Its
 * validators are the manifest's, as on the Node server: the file's sha256 as a strong ETag and the build's time, so a
 * client revalidating a file it holds gets 304 without its bytes, and one whose If-Match names another version 412.
 */
export async function snapshotFile(request: Request, rest: string, watch: ManifestWatch, tools: HostTools<Response>): Promise<Response> {
  const snapshot = await watch.current(Date.now());
  if (!snapshot) return tools.fail(new ApiError('source_unavailable', 'No valid snapshot is loaded yet.'), null);
  let rel: string | null;
  try {
    rel = decodeURIComponent(rest);
  } catch {
    rel = null;
  }
  const safe = rel === null ? null : safeRelPath(rel);
  if (safe === null || (safe !== LAYOUT.manifest && !snapshot.fileEntry(safe))) return tools.notFound(snapshot);
  // The bulk downloads are read whole to be checked, and reach hundreds of MB, past a Worker's memory: users fetch
  // them from the bucket or static host that holds them (docs/downloads.md), as from the assets' side.
  if (safe.startsWith(`${DOWNLOADS_DIR}/`)) return tools.notFound(snapshot);
  const etag = `"${safe === LAYOUT.manifest ? snapshot.manifestSha256 : snapshot.fileEntry(safe)!.sha256}"`;
  const lastModified = new Date(snapshot.manifest.generatedAt);
  const validators = { ETag: etag, 'Last-Modified': httpDate(lastModified), 'Cache-Control': 'public, no-cache', 'Access-Control-Allow-Origin': '*' };
  const conditions = {
    'if-match': request.headers.get('if-match') ?? undefined,
    'if-unmodified-since': request.headers.get('if-unmodified-since') ?? undefined,
    'if-none-match': request.headers.get('if-none-match') ?? undefined,
    'if-modified-since': request.headers.get('if-modified-since') ?? undefined,
  };
  if (preconditionFails(conditions, etag, lastModified)) {
    const body = request.method === 'HEAD' ? null : `The file's current entity tag is ${etag}; the request's precondition names another.\n`;
    return new Response(body, { status: 412, headers: { ...validators, 'Content-Type': 'text/plain; charset=utf-8' } });
  }
  if (notModified(conditions, etag, lastModified)) return new Response(null, { status: 304, headers: validators });
  try {
    const bytes = await snapshot.readFile(safe);
    const type = CONTENT_TYPES[safe.slice(safe.lastIndexOf('.') + 1)] ?? 'application/octet-stream';
    return new Response(request.method === 'HEAD' ? null : (bytes as Uint8Array<ArrayBuffer>), { headers: { 'Content-Type': type, ...validators } });
  } catch (err) {
    return tools.fail(err, snapshot);
  }
}
