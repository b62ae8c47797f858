import type { Sendable } from '../api/dispatch.ts';
import { jsonHeaders } from '../api/json-headers.ts';
import { joinBytes } from '../utils/join-bytes.ts';
import { CorruptFile, UnavailableFile } from '../snapshot/index.ts';
import { log } from './service.ts';
import type { ManifestWatch } from './source.ts';
import type { AssetsBinding } from './storage.ts';

/** Hop-by-hop headers are the platform's to set. */
const PLATFORM_HEADERS = new Set(['connection']);

/**
 * The dispatcher's answer (src/api/dispatch.ts) as a Response. The platform writes the Content-Length and compresses
 * as the client accepts. A streamed body asks for the next chunk only when the platform has sent the previous one, so
 * a slow reader holds one chunk. After the first byte an error cannot be an answer any more: the stream errors and
 * the platform cuts the connection, so a truncated file never looks complete.
 */
export function responseOf(answer: Sendable, watch: ManifestWatch | null): Response {
  if (answer.kind === 'empty') return new Response(null, { status: answer.status, headers: answer.headers });
  if (answer.kind === 'json') {
    const out = new Headers();
    for (const [name, value] of Object.entries(jsonHeaders(null, 'identity', answer.headers))) if (!PLATFORM_HEADERS.has(name.toLowerCase())) out.set(name, String(value));
    const body = answer.body instanceof Uint8Array ? answer.body : joinBytes(answer.body);
    return new Response(answer.head ? null : (body as Uint8Array<ArrayBuffer>), { status: answer.status, headers: out });
  }
  const chunks = answer.chunks[Symbol.asyncIterator]();
  if (answer.head) {
    void chunks.return?.();
    return new Response(null, { status: answer.status, headers: answer.headers });
  }
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      } catch (err) {
        log('error', 'a streamed answer failed after its first byte; the connection is cut', { reason: err instanceof Error ? err.message : String(err) });
        if (err instanceof UnavailableFile || err instanceof CorruptFile) watch?.recheckSoon();
        controller.error(err);
      }
    },
    async cancel() {
      await chunks.return?.();
    },
  });
  return new Response(body, { status: answer.status, headers: answer.headers });
}

/**
 * A Response where none can be made: a Web request's body never reads as gone and a Response is always made, so the
 * dispatcher never asks for it; a 500 with no body if it ever did.
 */
export const noAnswer = (): Response => new Response(null, { status: 500 });

/** The static assets' file for a request, or null where they hold none (and the dispatcher answers 404). */
export async function assetOf(assets: AssetsBinding | undefined, request: Request): Promise<Response | null> {
  if (!assets) return null;
  const asset = await assets.fetch(request);
  // The assets answer a path they do not hold (or a method they do not take) with a bare 404 or 405; the contract's
  // answer for a path nothing serves is the JSON not_found, as on Node.
  if (asset.status !== 404 && asset.status !== 405) return asset;
  await asset.body?.cancel();
  return null;
}
