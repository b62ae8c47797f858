import type { IncomingMessage, ServerResponse } from 'node:http';
import type { OperationName, SourceState } from '../contract/index.ts';
import { JsonBytes, type CursorCodec, type OperationRegistry, type OperationResult } from '../operations/index.ts';
import type { Snapshot } from '../snapshot/index.ts';
import { ClientGone, readBody } from './body.ts';
import { checkEnvelope, knownOperationOf, parseInput, parseJsonBody } from './envelope.ts';
import { ApiError, errorBody, toApiError } from './errors.ts';
import { noteOperation, type Logger } from './log.ts';
import { isJsonContentType } from './media.ts';
import { sendBytes, sendJson } from './respond.ts';
import type { Turns } from './turns.ts';

export type QueryDeps = {
  operations: OperationRegistry;
  /** The snapshot serving now; read once per request. */
  current: () => Snapshot | null;
  sourceState: (snapshot: Snapshot | null, now: Date, warnings?: readonly string[]) => SourceState;
  /** The same, as JSON text: serialized once per snapshot and sync state, with only `servedAt` written per answer. */
  sourceStateJson: (snapshot: Snapshot | null, now: Date, warnings?: readonly string[]) => string;
  cursors: CursorCodec;
  logger: Logger;
  now: () => Date;
  /** An operation still running after this long is a bug: it answers 500 rather than hold the client forever. */
  operationTimeoutMs: number;
  /** Where operations wait for their turn of the event loop. */
  turns: Turns;
};

/**
 * POST /v1/query. The checks run in the order of CONTRACT.md section 2's table, each only when the ones before it
 * passed: body size (the body must be read before anything in it can be checked), JSON, envelope, version,
 * operation, input, cursor, then the content type, then whether a snapshot is loaded, then the operation itself.
 * Nothing escapes: every failure, including a bug, becomes the canonical error body.
 */
export function queryHandler(deps: QueryDeps) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const snapshot = deps.current();
    let operation: string | null = null;
    try {
      const body = await readBody(req);
      const value = parseJsonBody(body);
      operation = knownOperationOf(value);
      if (operation) noteOperation(res, operation);
      const envelope = checkEnvelope(value);
      const op = deps.operations[envelope.operation];
      const input = parseInput(op.input, envelope.input, envelope.operation);
      const prepared = op.prepare ? op.prepare(input, { cursors: deps.cursors }) : input;
      if (!isJsonContentType(req.headers['content-type'])) {
        throw new ApiError('unsupported_media_type', 'The request body must be sent with Content-Type: application/json.', {
          details: [{ path: 'headers.content-type', message: 'must be application/json' }],
        });
      }
      if (!snapshot) {
        throw new ApiError('source_unavailable', 'No valid snapshot is loaded yet; try again once one has been built.');
      }
      // The operation and the answer's bytes run in the request's turn (turns.ts); compressing and sending do not.
      const answer = await deps.turns.run(req.socket, async () => {
        const servedAt = deps.now();
        const result = await withDeadline(op.handler(prepared, { snapshot, servedAt, cursors: deps.cursors }), deps.operationTimeoutMs, envelope.operation);
        return answerBytes(envelope.operation, result, deps.sourceStateJson(snapshot, deps.now(), result.warnings));
      });
      await sendBytes(req, res, 200, answer);
    } catch (err) {
      if (err instanceof ClientGone) return;
      await sendError(deps, req, res, err, operation, snapshot);
    }
  };
}

const encoder = new TextEncoder();
/** Each operation's fixed head of an answer, encoded once. */
const heads = new Map<string, Uint8Array>();
const headOf = (operation: OperationName): Uint8Array => {
  let head = heads.get(operation);
  if (!head) heads.set(operation, (head = encoder.encode(`{"version":1,"operation":${JSON.stringify(operation)},"data":`)));
  return head;
};

/**
 * The response envelope as bytes: the fixed head, the operation's data (its bytes as they are when it already is
 * bytes), the source state's text, then page and facets. The members come in the order JSON.stringify of the
 * envelope object would give, so the bytes are the same as before answers were spliced.
 */
export function answerBytes(operation: OperationName, result: OperationResult, sourceStateJson: string): Buffer {
  const data = result.data instanceof JsonBytes ? result.data.bytes : encoder.encode(JSON.stringify(result.data));
  let tail = `,"sourceState":${sourceStateJson}`;
  if (result.page) tail += `,"page":${JSON.stringify(result.page)}`;
  if (result.facets) tail += `,"facets":${JSON.stringify(result.facets)}`;
  tail += '}';
  const head = headOf(operation);
  const tailLength = Buffer.byteLength(tail, 'utf8');
  const out = Buffer.allocUnsafe(head.length + data.length + tailLength);
  out.set(head, 0);
  out.set(data, head.length);
  out.write(tail, head.length + data.length, 'utf8');
  return out;
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
export async function sendError(
  deps: Pick<QueryDeps, 'sourceState' | 'logger' | 'now'>,
  req: IncomingMessage,
  res: ServerResponse,
  err: unknown,
  operation: string | null,
  snapshot: Snapshot | null,
): Promise<void> {
  const { error, bug } = toApiError(err);
  if (bug) {
    deps.logger.error('internal error', {
      method: req.method,
      path: (req.url ?? '').split('?', 1)[0],
      operation,
      stack: err instanceof Error ? err.stack : String(err),
    });
  }
  if (res.headersSent) {
    // Part of an answer is out: the only honest thing left is to cut the connection.
    res.destroy();
    return;
  }
  try {
    await sendJson(req, res, error.status, errorBody(error, operation, deps.sourceState(snapshot, deps.now())), error.headers);
  } catch (sendErr) {
    deps.logger.error('could not send an error answer', { stack: sendErr instanceof Error ? sendErr.stack : String(sendErr) });
    res.destroy();
  }
}
