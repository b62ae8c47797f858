/**
 * What a host logs of a request, the same on every host: one line per request (method, path, operation, status,
 * milliseconds; never a body), and for an answer that is a bug, its stack under the message `internal error`.
 */
export type RequestLine = {
  method: string;
  path: string;
  operation: string | null;
  status: number;
  ms: number;
  /** The client went away before the answer was sent. */
  aborted?: true;
};

/** The message a bug is logged under. */
export const BUG_MESSAGE = 'internal error';

/** A path as a request line has it: its first 200 characters. */
export function logPath(path: string): string {
  return path.length > 200 ? `${path.slice(0, 200)}…` : path;
}

/** The fields of a bug's log line: where it happened, and its stack (the client saw only a generic sentence). */
export function bugFields(cause: unknown, method: string, path: string, operation: string | null): Record<string, unknown> {
  return { method, path, operation, stack: cause instanceof Error ? cause.stack : String(cause) };
}
