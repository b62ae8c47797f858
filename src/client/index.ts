import { ErrorBody as ErrorBodySchema, LAYOUT, Manifest as ManifestSchema, ResponseSchemas } from '../contract/index.ts';
import type { Answers, CatalogKind, ClearanceRecord, ErrorBody, ErrorCode, ErrorDetail, Inputs, Manifest, OperationName, ProductCodeEntry } from './types.ts';

export type * from './types.ts';

/**
 * The typed client of the query service. In this repository: `import { createClient } from 'device-510k/client'`;
 * elsewhere it is the package `device-510k-client` (packages/client, built from this folder). Its types come from
 * the same zod schemas the server validates with, so TypeScript users need no generator: `query` takes each
 * operation's input and resolves to that operation's answer, parsed. Runs wherever `fetch` does (Node, browsers,
 * workers); it imports nothing from Node.
 */

/** The input an operation accepts (before the server's normalization: `"k123456"` is a valid `id`). */
export type InputOf<N extends OperationName> = Inputs[N];

/** A catalog item tagged with the kind of catalog it came from, so that `item.kind` narrows it. */
export type ClearanceItem = ClearanceRecord & { kind: 'clearance' };
export type ProductCodeItem = ProductCodeEntry & { kind: 'product-code' };
export type CatalogItem = ClearanceItem | ProductCodeItem;
export type CatalogItemOf<K extends CatalogKind> = Extract<CatalogItem, { kind: K }>;
/** A catalog answer whose items carry `kind` (the client adds it; the wire's items do not have it). */
export type CatalogAnswer<K extends CatalogKind = CatalogKind> = Omit<Answers['device-510k.catalog'], 'data'> & {
  data: { items: CatalogItemOf<K>[] };
};

/** The whole answer of an operation: `data`, `sourceState`, and `page`/`facets` where the operation has them. */
export type AnswerOf<N extends OperationName> = N extends 'device-510k.catalog' ? CatalogAnswer : Answers[N];

export type ClientOptions = {
  /** Where the service is, for example `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** A fetch to use instead of the global one (to add retries, headers or a test double). */
  fetch?: typeof fetch;
};

/** An error answer of the service (the contract's error table), or an answer that is not the service's. */
export class QueryError extends Error {
  override readonly name = 'QueryError';
  readonly status: number;
  /** The error code from the answer; null when the answer was not the service's error body. */
  readonly code: ErrorCode | null;
  readonly details: readonly ErrorDetail[];
  /** The error body as sent, when there was one. */
  readonly body: ErrorBody | null;

  constructor(status: number, body: ErrorBody | null, message: string) {
    super(message);
    this.status = status;
    this.body = body;
    this.code = body?.error.code ?? null;
    this.details = body?.error.details ?? [];
  }
}

export type Client = {
  /**
   * Runs one operation; resolves to its parsed answer, or rejects with a QueryError. A catalog query's answer is
   * narrowed by the `kind` asked for: `{ kind: 'clearance' }` gives clearance items.
   */
  query<K extends CatalogKind>(operation: 'device-510k.catalog', input: InputOf<'device-510k.catalog'> & { kind: K }): Promise<CatalogAnswer<K>>;
  query<N extends OperationName>(operation: N, input: InputOf<N>): Promise<AnswerOf<N>>;
  /** GET /healthz: whether a snapshot is loaded. */
  health(): Promise<{ ok: boolean; status: string }>;
  /** The served snapshot's files, as a static client or a mirror reads them. */
  snapshot: SnapshotFiles;
};

export type SnapshotFiles = {
  /** The URL of a file of the snapshot, each path segment escaped. */
  url(path: string): string;
  /** The snapshot's manifest, parsed with the contract's schema. */
  manifest(): Promise<Manifest>;
  /** A file's bytes (not checked here: compare them with the manifest's sha256). */
  file(path: string): Promise<Uint8Array>;
};

const trimSlashes = (url: string) => url.replace(/\/+$/, '');

/** The files of a snapshot published at `base` (the folder that holds manifest.json), on any server or static host. */
export function snapshotFiles(base: string, options: { fetch?: typeof fetch } = {}): SnapshotFiles {
  const root = trimSlashes(base);
  const doFetch = options.fetch ?? globalThis.fetch;
  const url = (path: string) => `${root}/${path.split('/').map(encodeURIComponent).join('/')}`;
  const get = async (path: string): Promise<Response> => {
    const res = await doFetch(url(path));
    if (res.status !== 200) throw new QueryError(res.status, null, `${path} could not be read from ${url(path)}: HTTP ${res.status}`);
    return res;
  };
  return {
    url,
    manifest: async () => ManifestSchema.parse(await (await get(LAYOUT.manifest)).json()),
    file: async (path) => new Uint8Array(await (await get(path)).arrayBuffer()),
  };
}

export function createClient(options: ClientOptions): Client {
  const base = trimSlashes(options.baseUrl);
  const doFetch = options.fetch ?? globalThis.fetch;
  const query = async (operation: OperationName, input: unknown): Promise<unknown> => {
    const res = await doFetch(`${base}/v1/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ version: 1, operation, input }),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new QueryError(res.status, null, `${base}/v1/query answered HTTP ${res.status} with a body that is not JSON`);
    }
    if (res.status !== 200) {
      const parsed = ErrorBodySchema.safeParse(json);
      const body = parsed.success ? parsed.data : null;
      throw new QueryError(res.status, body, body ? `${operation}: ${body.error.code}: ${body.error.message}` : `${operation}: HTTP ${res.status}`);
    }
    const answer = ResponseSchemas[operation].parse(json);
    if (answer.operation !== 'device-510k.catalog') return answer;
    // Tagged by shape, not by the input: a clearance record always has a kNumber, a product-code entry never.
    const items: CatalogItem[] = answer.data.items.map((item) =>
      'kNumber' in item ? { kind: 'clearance' as const, ...item } : { kind: 'product-code' as const, ...item },
    );
    return { ...answer, data: { items } };
  };
  return {
    query: query as Client['query'],
    async health() {
      const res = await doFetch(`${base}/healthz`);
      const body = (await res.json()) as { status?: unknown };
      return { ok: res.status === 200, status: typeof body.status === 'string' ? body.status : 'unknown' };
    },
    snapshot: snapshotFiles(`${base}/snapshot`, { fetch: doFetch }),
  };
}
