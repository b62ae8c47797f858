import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Structured logs: one JSON line per request on `request` (method, path, operation, status, milliseconds; never a
 * body), and events (snapshot switches, refusals, bugs with their stacks) on `info` and `error`.
 */
export type Logger = {
  request: (line: RequestLine) => void;
  info: (message: string, fields?: Record<string, unknown>) => void;
  error: (message: string, fields?: Record<string, unknown>) => void;
};

export type RequestLine = {
  method: string;
  path: string;
  operation: string | null;
  status: number;
  ms: number;
  /** The client went away before the answer was sent. */
  aborted?: true;
};

const line = (fields: Record<string, unknown>) => `${JSON.stringify({ time: new Date().toISOString(), ...fields })}\n`;

export function jsonLogger(out: NodeJS.WritableStream = process.stdout, err: NodeJS.WritableStream = process.stderr): Logger {
  return {
    request: (l) => out.write(line({ level: 'info', msg: 'request', ...l })),
    info: (message, fields) => out.write(line({ level: 'info', msg: message, ...fields })),
    error: (message, fields) => err.write(line({ level: 'error', msg: message, ...fields })),
  };
}

export const silentLogger: Logger = { request: () => {}, info: () => {}, error: () => {} };

const operations = new WeakMap<ServerResponse, string>();

/** Records which operation a request named, for its log line. */
export function noteOperation(res: ServerResponse, operation: string): void {
  operations.set(res, operation);
}

/** Logs the request once its answer is sent or its connection is gone. */
export function logWhenDone(logger: Logger, req: IncomingMessage, res: ServerResponse): void {
  const started = process.hrtime.bigint();
  const method = req.method ?? '';
  const path = (req.url ?? '').split('?', 1)[0] ?? '';
  res.once('close', () => {
    const entry: RequestLine = {
      method,
      path: path.length > 200 ? `${path.slice(0, 200)}…` : path,
      operation: operations.get(res) ?? null,
      status: res.statusCode,
      ms: Math.round(Number(process.hrtime.bigint() - started) / 1e4) / 100,
    };
    if (!res.writableFinished) entry.aborted = true;
    logger.request(entry);
  });
}
