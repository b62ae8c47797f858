import { AnswerCache } from '../operations/answer-cache.ts';
import { MAX_BODY_BYTES, readRequestBody } from '../api/body.ts';
import { DEFAULT_FRESHNESS_MAX_AGE_HOURS, DEFAULT_OPERATION_TIMEOUT_MS } from '../api/defaults.ts';
import { ApiError } from '../api/errors.ts';
import { CORS_HEADERS, matchRoute, routeRequest, type HostRouteId, type RouteAnswer, type RouteContext } from '../api/routes.ts';
import { answerQuery, errorAnswer, type QueryAnswer, type QueryDeps } from '../api/query-answer.ts';
import { SourceStateJson, sourceStateOf } from '../api/source-state.ts';
import type { OperationName } from '../contract/operations.ts';
import { LAYOUT } from '../contract/snapshot.ts';
import { BUILT_IN_CURSOR_SECRET, CursorCodec } from '../operations/cursor.ts';
import { OPERATION_REGISTRY } from '../operations/registry.ts';
import { safeRelPath, type Snapshot, CorruptFile, UnavailableFile, type SnapshotStorage } from '../snapshot/index.ts';
import { joinBytes } from '../utils/join-bytes.ts';
import { answerMcpPost, DEFAULT_BUDGET_BYTES, localBackend, mcpOptions, tooLarge, type McpOptions } from '../mcp/index.ts';
import { ManifestWatch } from './source.ts';
import { AssetsStorage, R2Storage, type AssetsBinding, type R2BucketBinding } from './storage.ts';

/**
 * The API as a Cloudflare Worker: the routes of src/api/routes.ts (the query, MCP, health, the OpenAPI document, export,
 * the snapshot's files), answered by the same code as the Node server (src/api, src/operations, src/search,
 * src/snapshot) over a snapshot in the Worker's static assets or in an R2 bucket. Everything else goes to the static
 * assets (the page).
 */
type Env = {
  /** Workers static assets: the page, and the snapshot under SNAPSHOT_PREFIX unless SNAPSHOT_BUCKET is bound. */
  ASSETS?: AssetsBinding;
  /** An R2 bucket holding the snapshot under SNAPSHOT_PREFIX; read instead of the assets when bound. */
  SNAPSHOT_BUCKET?: R2BucketBinding;
  /** Where the snapshot's files are (`manifest.json` and the rest), default `snapshot/`. */
  SNAPSHOT_PREFIX?: string;
  /** Seconds a manifest read is trusted before it is read again, default 60. */
  MANIFEST_CHECK_SECONDS?: string;
  /** Signs catalog cursors; give every instance (Node or Worker) the same one so cursors go from one to another. */
  CURSOR_SECRET?: string;
  FRESHNESS_MAX_AGE_HOURS?: string;
  /** Bytes of verified shards and records kept per isolate, default 8 MiB (an isolate has 128 MB in all). */
  SHARD_CACHE_BYTES?: string;
  /** Bytes of the record table kept per isolate, default 8 MiB (all of it up to about 300,000 records). */
  RECORD_TABLE_CACHE_BYTES?: string;
  /** Bytes of search answers kept per isolate, default 4 MiB (0 keeps none). */
  ANSWER_CACHE_BYTES?: string;
  OPERATION_TIMEOUT_MS?: string;
  /** Bytes each of an MCP tool result's JSON and text stays within, default 16 KiB. */
  MCP_BUDGET_BYTES?: string;
};

const DEFAULT_MANIFEST_CHECK_SECONDS = 60;
/**
 * An isolate's 128 MB, at 1,000,000 records: the search index's sections a query mix loads (about 50 MiB) and the
 * lookups derived from them (11 MiB), V8's heap (13 MiB), the manifest (2.5 MiB), and these caches.
 */
const DEFAULT_WORKER_CACHE_BYTES = 8 * 1024 * 1024;
const DEFAULT_WORKER_TABLE_CACHE_BYTES = 8 * 1024 * 1024;
const DEFAULT_WORKER_ANSWER_CACHE_BYTES = 4 * 1024 * 1024;

type Service = {
  watch: ManifestWatch;
  deps: QueryDeps;
  mcp: McpOptions;
};

/** One per isolate and configuration: bindings and variables are the same for every request of a deployment. */
let service: { env: Env; value: Service } | null = null;

function serviceOf(env: Env): Service {
  if (service?.env === env) return service.value;
  const value = createService(env);
  service = { env, value };
  return value;
}

const numberVar = (env: Env, name: keyof Env, fallback: number): number => {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`Expected \`${name}\` to be a number from 0 and up, got "${String(raw)}"`);
  return n;
};

const log = (level: 'info' | 'error', message: string, fields: Record<string, unknown> = {}) =>
  console[level === 'error' ? 'error' : 'log'](JSON.stringify({ level, message, ...fields }));

function storageOf(env: Env): SnapshotStorage {
  const prefix = env.SNAPSHOT_PREFIX ?? 'snapshot/';
  if (env.SNAPSHOT_BUCKET) return new R2Storage(env.SNAPSHOT_BUCKET, prefix);
  if (env.ASSETS) return new AssetsStorage(env.ASSETS, prefix);
  throw new Error('Bind SNAPSHOT_BUCKET (an R2 bucket) or ASSETS (static assets) to the Worker: it has no snapshot to read');
}

function createService(env: Env): Service {
  const maxAgeHours = numberVar(env, 'FRESHNESS_MAX_AGE_HOURS', DEFAULT_FRESHNESS_MAX_AGE_HOURS);
  const operationTimeoutMs = numberVar(env, 'OPERATION_TIMEOUT_MS', DEFAULT_OPERATION_TIMEOUT_MS);
  const watch = new ManifestWatch(storageOf(env), {
    checkEveryMs: numberVar(env, 'MANIFEST_CHECK_SECONDS', DEFAULT_MANIFEST_CHECK_SECONDS) * 1000,
    cacheBytes: numberVar(env, 'SHARD_CACHE_BYTES', DEFAULT_WORKER_CACHE_BYTES),
    tableCacheBytes: numberVar(env, 'RECORD_TABLE_CACHE_BYTES', DEFAULT_WORKER_TABLE_CACHE_BYTES),
    onCorrupt: (r) => log('error', 'snapshot file does not match its sha256; it is not served', { ...r }),
    onRefuse: (reason) => log('error', 'snapshot refused; the current one keeps serving', { reason }),
    onSwitch: (next, previous) =>
      log('info', 'snapshot loaded', { snapshotId: next.id, records: next.manifest.counts.records, previousSnapshotId: previous?.id ?? null }),
  });
  const stateJson = new SourceStateJson();
  // A Worker has no sync state file: freshness comes from the manifest, as on a mirror.
  const deps: QueryDeps = {
    operations: OPERATION_REGISTRY,
    cursors: new CursorCodec(env.CURSOR_SECRET || BUILT_IN_CURSOR_SECRET),
    now: () => new Date(),
    sourceState: (snapshot, now, warnings) => sourceStateOf({ manifest: snapshot?.manifest ?? null, sync: null, now, maxAgeHours, warnings }),
    sourceStateJson: (snapshot, now, warnings) => stateJson.json({ manifest: snapshot?.manifest ?? null, sync: null, now, maxAgeHours, warnings }),
    deadline: (work, operation) => withDeadline(work, operationTimeoutMs, operation),
    answerCache: new AnswerCache(Math.floor(numberVar(env, 'ANSWER_CACHE_BYTES', DEFAULT_WORKER_ANSWER_CACHE_BYTES))),
  };
  const mcp = mcpOptions(
    localBackend({ deps, current: () => watch.current(Date.now()) }),
    numberVar(env, 'MCP_BUDGET_BYTES', DEFAULT_BUDGET_BYTES),
    (tool, err) => log('error', 'internal error', { path: '/mcp', tool, stack: err instanceof Error ? err.stack : String(err) }),
  );
  return { watch, deps, mcp };
}

function withDeadline<T>(work: Promise<T>, ms: number, operation: OperationName): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${operation} did not finish within ${ms} ms`)), ms);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

const JSON_HEADERS = { 'Content-Type': 'application/json; charset=utf-8', 'Access-Control-Allow-Origin': '*', Vary: 'Accept-Encoding' };
/** Hop-by-hop headers are the platform's to set. */
const PLATFORM_HEADERS = new Set(['connection']);

function jsonResponse(request: Request, status: number, body: Uint8Array, headers: Readonly<Record<string, string>> = {}): Response {
  const out = new Headers(JSON_HEADERS);
  for (const [name, value] of Object.entries(headers)) if (!PLATFORM_HEADERS.has(name.toLowerCase())) out.set(name, value);
  return new Response(request.method === 'HEAD' ? null : (body as Uint8Array<ArrayBuffer>), { status, headers: out });
}

function answered(request: Request, answer: QueryAnswer, watch: ManifestWatch, path: string): Response {
  const failure = answer.failure;
  if (failure) {
    if (failure.bug) {
      log('error', 'internal error', {
        method: request.method,
        path,
        operation: answer.operation,
        stack: failure.cause instanceof Error ? failure.cause.stack : String(failure.cause),
      });
    } else if (failure.cause instanceof UnavailableFile) {
      log('error', 'snapshot file cannot be read; it is not served', { reason: failure.cause.message });
    }
    // A file that is gone or changed may belong to a newer publication: read the manifest on the next request.
    if (failure.cause instanceof UnavailableFile || failure.cause instanceof CorruptFile) watch.recheckSoon();
  }
  return jsonResponse(request, answer.status, answer.body, answer.headers);
}

async function query(request: Request, { watch, deps }: Service): Promise<Response> {
  let snapshot: Snapshot | null = null;
  try {
    snapshot = await watch.current(Date.now());
    const body = await readRequestBody(request, MAX_BODY_BYTES);
    return answered(request, await answerQuery(deps, snapshot, body, request.headers.get('content-type')), watch, '/v1/query');
  } catch (err) {
    return answered(request, errorAnswer(deps, err, null, snapshot), watch, '/v1/query');
  }
}

const CONTENT_TYPES: Record<string, string> = { json: 'application/json; charset=utf-8', bin: 'application/octet-stream' };

/** A file of the snapshot, checked against the manifest it was read with (R2 only: assets serve their own files). */
async function snapshotFile(request: Request, rest: string, { watch, deps }: Service): Promise<Response> {
  const snapshot = await watch.current(Date.now());
  if (!snapshot) throw new ApiError('source_unavailable', 'No valid snapshot is loaded yet.');
  let rel: string | null;
  try {
    rel = decodeURIComponent(rest);
  } catch {
    rel = null;
  }
  const safe = rel === null ? null : safeRelPath(rel);
  if (safe === null || (safe !== LAYOUT.manifest && !snapshot.fileEntry(safe))) {
    return answered(request, errorAnswer(deps, new ApiError('not_found', 'Nothing is served at this path.'), null, snapshot), watch, request.url);
  }
  try {
    const bytes = await snapshot.readFile(safe);
    const type = CONTENT_TYPES[safe.slice(safe.lastIndexOf('.') + 1)] ?? 'application/octet-stream';
    return new Response(request.method === 'HEAD' ? null : (bytes as Uint8Array<ArrayBuffer>), {
      headers: { 'Content-Type': type, 'Cache-Control': 'public, no-cache', 'Access-Control-Allow-Origin': '*' },
    });
  } catch (err) {
    return answered(request, errorAnswer(deps, err, null, snapshot), watch, request.url);
  }
}

/** The Worker's code for the routes the table leaves to each host; null hands the request on to the static assets. */
type WorkerRoute = (request: Request, rest: string, env: Env, svc: Service) => Promise<Response | null>;

/** POST /mcp (src/mcp/http.ts): the body read with /v1/query's bound, then answered by the same core as on Node. */
async function mcp(request: Request, svc: Service): Promise<Response> {
  let body: Uint8Array;
  try {
    body = await readRequestBody(request, MAX_BODY_BYTES);
  } catch (err) {
    if (err instanceof ApiError && err.code === 'request_too_large') return tooLarge(MAX_BODY_BYTES);
    throw err;
  }
  return answerMcpPost(svc.mcp, request.url, request.headers, body);
}

const OWN: Record<HostRouteId, WorkerRoute> = {
  query: (request, _rest, _env, svc) => query(request, svc),
  mcp: (request, _rest, _env, svc) => mcp(request, svc),
  // Static assets serve their own files; only a snapshot in R2 is read here.
  'snapshot-files': (request, rest, env, svc) => (env.SNAPSHOT_BUCKET ? snapshotFile(request, rest, svc) : Promise.resolve(null)),
};

/**
 * A portable route's answer as a Response. A streamed body asks for the next chunk only when the platform has sent
 * the previous one, so a slow reader holds one chunk. After the first byte an error cannot be an answer any more: the
 * stream errors and the platform cuts the connection, so a truncated file never looks complete.
 */
function responseOf(request: Request, answer: RouteAnswer, watch: ManifestWatch): Response {
  if (answer.kind === 'bytes') return jsonResponse(request, answer.status, answer.body instanceof Uint8Array ? answer.body : joinBytes(answer.body), answer.headers);
  const headers = { ...CORS_HEADERS, ...answer.headers };
  const chunks = answer.chunks[Symbol.asyncIterator]();
  if (request.method === 'HEAD') {
    void chunks.return?.();
    return new Response(null, { status: answer.status, headers });
  }
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      } catch (err) {
        log('error', 'a streamed answer failed after its first byte; the connection is cut', { reason: err instanceof Error ? err.message : String(err) });
        if (err instanceof UnavailableFile || err instanceof CorruptFile) watch.recheckSoon();
        controller.error(err);
      }
    },
    async cancel() {
      await chunks.return?.();
    },
  });
  return new Response(body, { status: answer.status, headers });
}

async function route(request: Request, env: Env, svc: Service): Promise<Response> {
  const url = new URL(request.url);
  const match = matchRoute(request.method, url.pathname);
  if (match.kind === 'preflight') return new Response(null, { status: 204, headers: match.headers });
  if (match.kind === 'refuse') throw match.error;
  if (match.kind === 'route') {
    const { route, rest } = match;
    if (route.handler === 'host') {
      const own = await OWN[route.id](request, rest, env, svc);
      if (own) return own;
    } else {
      const snapshot = await svc.watch.current(Date.now());
      const context: RouteContext = { snapshot, problem: null, deps: svc.deps, lendsChunks: false };
      const routed = routeRequest(request.method, `${url.pathname}${url.search}`, rest, (name) => request.headers.get(name) ?? undefined, url.origin);
      try {
        return responseOf(request, await route.handler(routed, context), svc.watch);
      } catch (err) {
        return answered(request, errorAnswer(svc.deps, err, null, snapshot), svc.watch, url.pathname);
      }
    }
  }
  if (env.ASSETS) {
    const asset = await env.ASSETS.fetch(request);
    // The assets answer a path they do not hold (or a method they do not take) with a bare 404 or 405; the
    // contract's answer for a path nothing serves is the JSON not_found, as on Node.
    if (asset.status !== 404 && asset.status !== 405) return asset;
    await asset.body?.cancel();
  }
  throw new ApiError('not_found', 'Nothing is served at this path.');
}

// The Workers runtime finds the handlers on the default export, and refuses any other export of the entry module.
export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    let svc: Service;
    try {
      svc = serviceOf(env);
    } catch (err) {
      log('error', 'the Worker is not configured', { reason: err instanceof Error ? err.message : String(err) });
      const unconfigured = { now: () => new Date(), sourceState: (_: Snapshot | null, now: Date) => sourceStateOf({ manifest: null, sync: null, now, maxAgeHours: 1 }) };
      const answer = errorAnswer(unconfigured, new ApiError('internal_error', 'The service is not configured; the failure has been logged.'), null, null);
      return jsonResponse(request, answer.status, answer.body);
    }
    try {
      return await route(request, env, svc);
    } catch (err) {
      const answer = errorAnswer(svc.deps, err, null, await svc.watch.current(Date.now()).catch(() => null));
      return answered(request, answer, svc.watch, new URL(request.url).pathname);
    }
  },
};
