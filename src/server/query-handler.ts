import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { OperationName } from '../contract/index.ts';
import { answerQuery, errorAnswer, type QueryAnswer, type QueryDeps as ApiQueryDeps } from '../api/query-answer.ts';
import type { Snapshot } from '../snapshot/index.ts';
import { ClientGone, readBody } from './body.ts';
import { noteOperation, type Logger } from './log.ts';
import { sendBytes } from './respond.ts';
import type { Turns } from './turns.ts';

export type QueryDeps = Omit<ApiQueryDeps, 'deadline'> & {
  /** The snapshot serving now; read once per request. */
  current: () => Snapshot | null;
  logger: Logger;
  /** An operation still running after this long is a bug: it answers 500 rather than hold the client forever. */
  operationTimeoutMs: number;
  /** Where operations wait for their turn of the event loop. */
  turns: Turns;
};

/** What a run resolves to when `hold` said, as its turn came, that its answer is not to be made yet. */
export const HELD: unique symbol = Symbol('held');

/**
 * One request's answer below HTTP: the bytes of its body in, the answer out, or null when its client is gone. With
 * `hold`: asked as the request's turn comes; when it answers true no work is done and the run resolves to HELD, for
 * the caller to run the request again once it is to be made.
 */
export type QueryRun = (
  snapshot: Snapshot | null,
  body: Uint8Array,
  contentType: string | undefined,
  connection: Socket,
  onOperation: (operation: OperationName) => void,
  hold?: () => boolean,
) => Promise<QueryAnswer | null | typeof HELD>;

/**
 * Answers a request's body with src/api/query-answer.ts, bounded by the operation timeout, in the connection's turn of the
 * event loop (turns.ts). A connection closed while its request waited for its turn (the client left, or the
 * pipelining bound refused it) gets no work done for it: nobody would read the answer. Both lanes of POST /v1/query
 * (Node's HTTP server and the fast lane) answer through this.
 */
export function queryRunner(deps: QueryDeps): QueryRun {
  const core = coreDeps(deps);
  return (snapshot, body, contentType, connection, onOperation, hold) =>
    deps.turns
      .run(connection, (pause): Promise<QueryAnswer | null | typeof HELD> => {
        if (connection.destroyed) return Promise.resolve(null);
        if (hold?.()) return Promise.resolve(HELD);
        return answerQuery(core, snapshot, body, contentType, onOperation, pause);
      })
      .catch((err: unknown) => errorAnswer(deps, err, null, snapshot));
}

/** What src/api needs of the server's parts: the same, with the operation timeout as a deadline. */
export function coreDeps(deps: QueryDeps): ApiQueryDeps {
  return { ...deps, deadline: (work, operation) => withDeadline(work, deps.operationTimeoutMs, operation) };
}

/** Logs the stack of an answer that is a bug (the client sees only the generic sentence). */
export function logBug(logger: Logger, answer: QueryAnswer, method: string, path: string): void {
  const failure = answer.failure;
  if (!failure?.bug) return;
  logger.error('internal error', {
    method,
    path,
    operation: answer.operation,
    stack: failure.cause instanceof Error ? failure.cause.stack : String(failure.cause),
  });
}

/**
 * POST /v1/query on Node's HTTP server: the body is read first (its size is the table's first check, and nothing in
 * it can be checked before it is read), then `queryRunner` answers it, and the answer goes out compressed as the
 * client accepts. Nothing escapes: every failure, including a bug, becomes the canonical error body.
 */
export function queryHandler(deps: QueryDeps) {
  const run = queryRunner(deps);
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const snapshot = deps.current();
    let answer: QueryAnswer | null;
    try {
      const body = await readBody(req);
      const made = await run(snapshot, body, req.headers['content-type'], req.socket, (operation) => noteOperation(res, operation));
      // Never HELD: no `hold` is given here.
      if (made === null || made === HELD) return;
      answer = made;
    } catch (err) {
      if (err instanceof ClientGone) return;
      answer = errorAnswer(deps, err, null, snapshot);
    }
    await send(deps, req, res, answer, snapshot);
  };
}

type Deadline = { at: number; expire: () => void };
const deadlines = new Set<Deadline>();
let sweeper: NodeJS.Timeout | null = null;
let sweepEveryMs = 1000;

/** One timer for every operation in flight, rather than a timer of its own for each request. */
function watch(entry: Deadline, ms: number): void {
  deadlines.add(entry);
  const every = Math.max(10, Math.min(1000, Math.floor(ms / 10)));
  if (sweeper && every >= sweepEveryMs) return;
  if (sweeper) clearInterval(sweeper);
  sweepEveryMs = every;
  sweeper = setInterval(() => {
    const now = Date.now();
    for (const d of deadlines) if (d.at <= now) d.expire();
    if (deadlines.size === 0 && sweeper) {
      clearInterval(sweeper);
      sweeper = null;
      sweepEveryMs = 1000;
    }
  }, every);
  sweeper.unref();
}

function withDeadline<T>(work: Promise<T>, ms: number, operation: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const entry: Deadline = {
      at: Date.now() + ms,
      expire: () => {
        deadlines.delete(entry);
        reject(new Error(`${operation} did not finish within ${ms} ms`));
      },
    };
    watch(entry, ms);
    work.then(
      (value) => {
        deadlines.delete(entry);
        resolve(value);
      },
      (err: unknown) => {
        deadlines.delete(entry);
        reject(err);
      },
    );
  });
}

/** Answers with the canonical error body for any thrown value; bugs are logged with their stack, never sent. */
export function sendError(
  deps: Pick<QueryDeps, 'sourceState' | 'logger' | 'now'>,
  req: IncomingMessage,
  res: ServerResponse,
  err: unknown,
  operation: string | null,
  snapshot: Snapshot | null,
): Promise<void> {
  return send(deps, req, res, errorAnswer(deps, err, operation, snapshot), snapshot);
}

async function send(
  deps: Pick<QueryDeps, 'sourceState' | 'logger' | 'now'>,
  req: IncomingMessage,
  res: ServerResponse,
  answer: QueryAnswer,
  snapshot: Snapshot | null,
): Promise<void> {
  logBug(deps.logger, answer, req.method ?? '', (req.url ?? '').split('?', 1)[0] ?? '');
  if (res.headersSent) {
    // Part of an answer is out: the only honest thing left is to cut the connection.
    res.destroy();
    return;
  }
  try {
    await sendBytes(req, res, answer.status, answer.body, answer.headers);
  } catch (sendErr) {
    // An answer that could not be sent (it failed to compress) becomes the error it is; an error answer that could
    // not be sent leaves nothing else to try.
    if (answer.status === 200 && !res.headersSent) return send(deps, req, res, errorAnswer(deps, sendErr, answer.operation, snapshot), snapshot);
    deps.logger.error('could not send an error answer', { stack: sendErr instanceof Error ? sendErr.stack : String(sendErr) });
    res.destroy();
  }
}
