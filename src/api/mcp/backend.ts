import type { OperationName } from '../../contract/index.ts';
import { answerChanges } from '../changes.ts';
import { ApiError, toApiError } from '../errors.ts';
import { answerValues, type QueryDeps } from '../query-answer.ts';
import type { Snapshot } from '../../snapshot/snapshot.ts';

/**
 * Where the tools get their answers: the same operations as `POST /v1/query` and `GET /v1/changes`, either run in
 * this process over the snapshot it serves (the HTTP hosts, stdio over a local snapshot) or asked of a running
 * service over HTTP (stdio with a base URL). Either way a tool sees the answer's status and its JSON body, errors
 * in the contract's canonical shape.
 */
export type Answer = { status: number; body: unknown };

export type McpBackend = {
  /** An operation's answer, as `POST /v1/query` gives it for this envelope. */
  query(operation: OperationName, input: Record<string, unknown>): Promise<Answer>;
  /** `GET /v1/changes?since=…`'s answer (JSON). */
  changes(since: string): Promise<Answer>;
};

const decoder = new TextDecoder();

/** The answer of an error thrown outside answerQuery (changes), in the same canonical shape. */
function errorOf(err: unknown, onFailure?: LocalBackendOptions['onFailure']): Answer {
  const { error, bug } = toApiError(err);
  if (!(err instanceof ApiError)) onFailure?.({ cause: err, bug });
  return { status: error.status, body: { version: 1, operation: null, error: { code: error.code, message: error.message, details: error.details } } };
}

export type LocalBackendOptions = {
  deps: QueryDeps;
  /** The snapshot serving now, read once per call. */
  current: () => Snapshot | null | Promise<Snapshot | null>;
  /**
   * Runs one operation where the host runs its queries (Node: the connection's turn of the event loop, with `pause`
   * between a long search's slices); called directly when absent.
   */
  schedule?: <T>(work: (pause?: () => Promise<void>) => Promise<T>) => Promise<T>;
  /**
   * Told the cause of each error answer that was not a plain ApiError (a damaged file, a bug), as /v1/query's host is
   * told: the tool's result carries only the error table's sentence.
   */
  onFailure?: (failure: { cause: unknown; bug: boolean }) => void;
};

/** The operations in this process: no HTTP round trip, the same checks, caches and deadline as `/v1/query`. */
export function localBackend({ deps, current, schedule, onFailure }: LocalBackendOptions): McpBackend {
  const run = schedule ?? ((work) => work());
  return {
    async query(operation, input) {
      const snapshot = await current();
      // The operation itself, with its input as values: no envelope is written for it, nor its answer read back.
      const answer = await run((pause) => answerValues(deps, snapshot, operation, input, pause));
      if (answer.failure) onFailure?.(answer.failure);
      return { status: answer.status, body: answer.body };
    },
    async changes(since) {
      try {
        const snapshot = await current();
        const query = new URLSearchParams({ since });
        const answer = await answerChanges({ url: `/v1/changes?${query}`, query, header: () => undefined }, snapshot);
        return { status: answer.status, body: JSON.parse(decoder.decode(answer.body)) };
      } catch (err) {
        return errorOf(err, onFailure);
      }
    },
  };
}

/** A running service over HTTP, by its base URL (`https://host` or `http://127.0.0.1:8080`). */
export function remoteBackend(baseUrl: string, fetchImpl: typeof fetch = fetch): McpBackend {
  const base = new URL(baseUrl);
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new Error(`Expected \`baseUrl\` to be an http or https URL, got "${baseUrl}"`);
  const at = (path: string) => new URL(path, base.href.endsWith('/') ? base.href : `${base.href}/`);
  const read = async (response: Response): Promise<Answer> => {
    const text = await response.text();
    try {
      return { status: response.status, body: JSON.parse(text) };
    } catch {
      return errorOf(new Error(`${response.url} answered ${response.status} with a body that is not JSON`));
    }
  };
  const reached = async (url: URL, init?: RequestInit): Promise<Answer> => {
    try {
      return await read(await fetchImpl(url, init));
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      return {
        status: 503,
        body: { version: 1, operation: null, error: { code: 'source_unavailable', message: `The service at ${base.origin} cannot be reached: ${reason}.`, details: [] } },
      };
    }
  };
  return {
    query: (operation, input) =>
      reached(at('v1/query'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ version: 1, operation, input }) }),
    changes: (since) => reached(at(`v1/changes?${new URLSearchParams({ since })}`)),
  };
}
