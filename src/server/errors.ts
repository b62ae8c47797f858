import { ERROR_STATUS, type ErrorBody, type ErrorCode, type ErrorDetail, type SourceState } from '../contract/index.ts';
import { CorruptFile } from '../snapshot/snapshot.ts';

/**
 * The one error type of the service. Its HTTP status comes from the contract's table (`ERROR_STATUS`), never from
 * the place that throws it, so a code always answers with the same status.
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

/** What an operation throws when its data cannot be reached right now (search, until its index is loaded). */
export class SearchUnavailable extends ApiError {
  override readonly name = 'SearchUnavailable';
  constructor(message = 'Search is not available on this server yet; every other operation is.') {
    super('source_unavailable', message);
  }
}

export const CORRUPT_FILE_MESSAGE = 'Part of the snapshot this answer needs failed its integrity check; the failure has been logged.';

export const INTERNAL_ERROR_MESSAGE = 'The server failed while answering this request; the failure has been logged.';

/**
 * Any thrown value as an ApiError. `bug` is true when it was not an ApiError: the caller logs its stack, and the
 * client sees only a generic sentence.
 */
export function toApiError(err: unknown): { error: ApiError; bug: boolean } {
  if (err instanceof ApiError) return { error: err, bug: false };
  // An operation written against its own copy of the class (or a test double) is recognized by name.
  if (err instanceof Error && err.name === 'SearchUnavailable') {
    return { error: new ApiError('source_unavailable', err.message || new SearchUnavailable().message), bug: false };
  }
  // A snapshot file that fails its sha256 check: not a bug but damaged data, reported by the snapshot when found.
  // 503 says what it is to a client (this answer cannot be given from this snapshot now; try again later).
  if (err instanceof CorruptFile) return { error: new ApiError('source_unavailable', CORRUPT_FILE_MESSAGE, { cause: err }), bug: false };
  return { error: new ApiError('internal_error', INTERNAL_ERROR_MESSAGE, { cause: err }), bug: true };
}

/** The canonical error body (CONTRACT.md section 2); the only place that builds one. */
export function errorBody(error: ApiError, operation: string | null, sourceState: SourceState): ErrorBody {
  return {
    version: 1,
    operation,
    error: { code: error.code, message: error.message, details: error.details },
    sourceState: error.code === 'source_unavailable' ? { ...sourceState, availability: 'unavailable' } : sourceState,
  };
}
