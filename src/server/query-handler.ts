import type { Socket } from 'node:net';
import type { OperationName } from '../contract/index.ts';
import { answerQuery, errorAnswer, type QueryAnswer, type QueryDeps as ApiQueryDeps } from '../api/query-answer.ts';
import type { Snapshot } from '../snapshot/index.ts';
import { operationDeadline } from '../api/deadline.ts';
import { BUG_MESSAGE, bugFields } from '../api/log.ts';
import type { Logger } from './log.ts';
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
 * pipelining bound refused it) gets no work done for it: nobody would read the answer. The fast lane answers
 * POST /v1/query through this; on Node's HTTP server the table's query route runs in the same turns (routes.ts).
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

/** What src/api needs of the server's parts: the same, with the operation timeout as a deadline (one shared timer). */
export function coreDeps(deps: QueryDeps): ApiQueryDeps {
  return { ...deps, deadline: operationDeadline(deps.operationTimeoutMs, true) };
}

/** Logs the stack of an answer that is a bug (the client sees only the generic sentence). */
export function logBug(logger: Logger, answer: QueryAnswer, method: string, path: string): void {
  const failure = answer.failure;
  if (failure?.bug) logger.error(BUG_MESSAGE, bugFields(failure.cause, method, path, answer.operation));
}

