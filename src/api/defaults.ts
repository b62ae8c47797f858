/** Defaults every host of the API shares (the Node server's config.ts and the Worker read them from here). */
export const DEFAULT_FRESHNESS_MAX_AGE_HOURS = 48;
/** An operation still running after this long answers 500 `internal_error`. */
export const DEFAULT_OPERATION_TIMEOUT_MS = 30_000;
