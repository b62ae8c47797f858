import type { ErrorBody, SourceState } from '../contract/index.ts';
import { ApiError } from '../operations/errors.ts';
import { CorruptFile } from '../snapshot/snapshot.ts';
import { UnavailableFile } from '../snapshot/storage.ts';

export { ApiError, SearchUnavailable } from '../operations/errors.ts';

export const CORRUPT_FILE_MESSAGE = 'Part of the snapshot this answer needs failed its integrity check; the failure has been logged.';

export const UNAVAILABLE_FILE_MESSAGE = 'Part of the snapshot this answer needs cannot be read right now; the failure has been logged.';

export const INTERNAL_ERROR_MESSAGE = 'The server failed while answering this request; the failure has been logged.';

/**
 * Any thrown value as an ApiError. `bug` is true when it was not an ApiError: the caller logs its stack, and the
 * client sees only a generic sentence.
 */
export function toApiError(err: unknown): { error: ApiError; bug: boolean } {
  if (err instanceof ApiError) return { error: err, bug: false };
  // A snapshot file that fails its sha256 check: not a bug but damaged data, reported by the snapshot when found.
  // 503 says what it is to a client (this answer cannot be given from this snapshot now; try again later).
  if (err instanceof CorruptFile) return { error: new ApiError('source_unavailable', CORRUPT_FILE_MESSAGE, { cause: err }), bug: false };
  // A file the storage cannot give (an object store without it): the same, for the same reason.
  if (err instanceof UnavailableFile) return { error: new ApiError('source_unavailable', UNAVAILABLE_FILE_MESSAGE, { cause: err }), bug: false };
  return { error: new ApiError('internal_error', INTERNAL_ERROR_MESSAGE, { cause: err }), bug: true };
}

/** The canonical error body (docs/contract.md section 2); the only place that builds one. */
export function errorBody(error: ApiError, operation: string | null, sourceState: SourceState): ErrorBody {
  return {
    version: 1,
    operation,
    error: { code: error.code, message: error.message, details: error.details },
    sourceState: error.code === 'source_unavailable' ? { ...sourceState, availability: 'unavailable' } : sourceState,
  };
}
