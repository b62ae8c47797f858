import { ERROR_STATUS, type ErrorCode, type ErrorDetail } from '../contract/index.ts';
import { QueryCostError } from '../search/cost.ts';
import type { FacetValuesError } from '../search/facet-fields.ts';
import { PredicatesNotIndexed } from '../search/model.ts';

/**
 * The one error type of the service. Its HTTP status comes from the contract's table (`ERROR_STATUS`), never from
 * the place that throws it, so a code always answers with the same status. It lives below both the operations and
 * the server, which turns it into the error body (src/server/errors.ts).
 */
export class ApiError extends Error {
  override readonly name: string = 'ApiError';
  readonly code: ErrorCode;
  readonly details: ErrorDetail[];
  /** Extra response headers the error needs (Allow on 405, Connection on 413). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, message: string, options: { details?: ErrorDetail[]; headers?: Record<string, string>; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options.details ?? [];
    this.headers = options.headers ?? {};
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

/** One plain sentence naming the first problem, and how many more there are: the message of an invalid_input error. */
export function sentenceOf(details: readonly ErrorDetail[]): string {
  const first = details[0];
  if (!first) return 'The request is invalid.';
  const more = details.length - 1;
  return `${first.path} ${first.message}${more > 0 ? ` (and ${more} more problem${more > 1 ? 's' : ''})` : ''}.`;
}

/** What an operation throws when its data cannot be reached right now (search, until its index is loaded). */
export class SearchUnavailable extends ApiError {
  override readonly name = 'SearchUnavailable';
  constructor(message = 'Search is not available on this server yet; every other operation is.') {
    super('source_unavailable', message);
  }
}

/**
 * A query over a limit of src/search/cost.ts (or over the work budget): `invalid_input` (400), since the same query
 * is refused the same way every time (the limits and the budget are counts, not times), so it is the input that must
 * change; a 503 would tell the client to send it again.
 */
export function queryOverLimit(err: QueryCostError, path = 'input.query'): ApiError {
  return new ApiError('invalid_input', `${path} ${err.message}.`, { details: [{ path, message: err.message }], cause: err });
}

/**
 * A facet that would list more values than an answer carries (src/search/facet-fields.ts): `invalid_input` (400), as
 * a query over a limit is, naming the facet's `size` and what to ask instead.
 */
export function facetOverLimit(err: FacetValuesError, path = `input.facets[${err.position}].size`): ApiError {
  return new ApiError('invalid_input', `${path} ${err.message}.`, { details: [{ path, message: err.message }], cause: err });
}

/**
 * Runs `fn`, turning a query over a limit into the error above, and one that needs predicate sections the snapshot's
 * index was written without into a 503 saying to build it again.
 */
export function refusingCostlyQueries<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof QueryCostError) throw queryOverLimit(err);
    if (err instanceof PredicatesNotIndexed) throw new SearchUnavailable(err.message);
    throw err;
  }
}
