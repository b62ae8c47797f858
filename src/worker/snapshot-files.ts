import type { HostTools } from '../api/dispatch.ts';
import { ApiError } from '../api/errors.ts';
import { DOWNLOADS_DIR, LAYOUT } from '../contract/snapshot.ts';
import { safeRelPath } from '../snapshot/index.ts';
import type { ManifestWatch } from './source.ts';

const CONTENT_TYPES: Record<string, string> = { json: 'application/json; charset=utf-8', bin: 'application/octet-stream' };

/** A file of the snapshot, checked against the manifest it was read with (R2 only: assets serve their own files). */
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
  try {
    const bytes = await snapshot.readFile(safe);
    const type = CONTENT_TYPES[safe.slice(safe.lastIndexOf('.') + 1)] ?? 'application/octet-stream';
    return new Response(request.method === 'HEAD' ? null : (bytes as Uint8Array<ArrayBuffer>), {
      headers: { 'Content-Type': type, 'Cache-Control': 'public, no-cache', 'Access-Control-Allow-Origin': '*' },
    });
  } catch (err) {
    return tools.fail(err, snapshot);
  }
}
