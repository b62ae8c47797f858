import type { IncomingMessage, ServerResponse } from 'node:http';
import { isoTime } from '../utils/iso-time.ts';
import { rememberFirst } from '../utils/remember.ts';
import { logPath, type RequestLine } from '../api/log.ts';
import { pathOf } from '../api/routes.ts';

/**
 * Structured logs: one JSON line per request on `request` (method, path, operation, status, milliseconds; never a
 * body), and events (snapshot switches, refusals, bugs with their stacks) on `info` and `error`.
 */
export type Logger = {
  request: (line: RequestLine) => void;
  info: (message: string, fields?: Record<string, unknown>) => void;
  error: (message: string, fields?: Record<string, unknown>) => void;
};

export type { RequestLine };

const line = (fields: Record<string, unknown>) => `${JSON.stringify({ time: new Date().toISOString(), ...fields })}\n`;

/** `line({ level: 'info', msg: 'request', ...l })`, written out: one request line costs a template, not a stringify. */
const requestLine = (l: RequestLine) =>
  `{"time":"${isoTime(Date.now())}","level":"info","msg":"request","method":${quoted(l.method)},"path":${quoted(l.path)},"operation":${l.operation === null ? 'null' : quoted(l.operation)},"status":${l.status},"ms":${l.ms}${l.aborted ? ',"aborted":true' : ''}}\n`;

/** A string as JSON text, the first 256 kept: a line's method, path and operation are nearly always a few. */
const quoted = rememberFirst(256, (text) => JSON.stringify(text));

const exitFlushes = new Set<() => void>();
/** A process that exits (process.exit after a drain) runs no more event-loop turns: write what waits first. */
function atExit(flush: () => void): void {
  if (exitFlushes.size === 0) process.once('exit', () => exitFlushes.forEach((f) => f()));
  exitFlushes.add(flush);
}

/** Request lines held before a write: past this many bytes they are written at once. */
const FLUSH_BYTES = 64 * 1024;

/**
 * Request lines are gathered and written once per turn of the event loop (or once 64 KiB are waiting): stdout to a
 * file or a pipe is written synchronously, and one write per request cost more than the rest of a small answer.
 * Events and errors are rare and go out at once, after the request lines gathered so far, so the log keeps its order.
 */
export function jsonLogger(out: NodeJS.WritableStream = process.stdout, err: NodeJS.WritableStream = process.stderr): Logger {
  let pending = '';
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending === '') return;
    const text = pending;
    pending = '';
    out.write(text);
  };
  atExit(flush);
  return {
    request: (l) => {
      pending += requestLine(l);
      if (pending.length >= FLUSH_BYTES) flush();
      else if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    info: (message, fields) => {
      flush();
      out.write(line({ level: 'info', msg: message, ...fields }));
    },
    error: (message, fields) => {
      flush();
      err.write(line({ level: 'error', msg: message, ...fields }));
    },
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
  const path = logPath(pathOf(req.url ?? ''));
  res.once('close', () => {
    const entry: RequestLine = {
      method,
      path,
      operation: operations.get(res) ?? null,
      status: res.statusCode,
      ms: Math.round(Number(process.hrtime.bigint() - started) / 1e4) / 100,
    };
    if (!res.writableFinished) entry.aborted = true;
    logger.request(entry);
  });
}
