import type { OperationName, SourceState } from '../contract/index.ts';
import { AnswerCache, type AnswerParts } from '../utils/answer-cache.ts';
import type { CursorCodec } from '../operations/cursor.ts';
import type { OperationRegistry } from '../operations/registry.ts';
import { JsonBytes, type OperationResult } from '../operations/types.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import { checkEnvelope, knownOperationOf, parseInput, parseJsonBody } from './envelope.ts';
import { ApiError, errorBody, toApiError } from './errors.ts';
import { isJsonContentType } from './media.ts';
import { joinBytes } from '../utils/join-bytes.ts';
import type { ExportTables } from '../operations/export-tables.ts';

/**
 * POST /v1/query below the HTTP layer, the same for every host (the Node server, the Worker): bytes of a body in,
 * bytes of an answer out. Each host reads the body (and refuses one that is too large) its own way, and sends what
 * this returns its own way.
 */
export type QueryDeps = {
  operations: OperationRegistry;
  cursors: CursorCodec;
  now: () => Date;
  sourceState: (snapshot: Snapshot | null, now: Date, warnings?: readonly string[]) => SourceState;
  /** The same, as JSON text: serialized once per snapshot and sync state, with only `servedAt` written per answer. */
  sourceStateJson: (snapshot: Snapshot | null, now: Date, warnings?: readonly string[]) => string;
  /** Bounds an operation's run: a host's own timer (an operation still running long after its time is a bug). */
  deadline?: <T>(work: Promise<T>, operation: OperationName) => Promise<T>;
  /** Keeps the answers of operations marked `cacheable` (search); none are kept when absent. */
  answerCache?: AnswerCache;
  /**
   * Where an answer's bytes are written (a new Uint8Array when absent): a host may lend memory it reuses, with room
   * before it for its own head, so that an answer is made in the buffer it is sent from.
   */
  allocate?: (size: number) => Uint8Array;
  /** Bytes each of an MCP tool result's JSON and text stays within (src/api/mcp; its default when absent). */
  mcpBudgetBytes?: number;
  /** The values one search facet may list (docs/limits.md); FACET_VALUES_MAX when absent. */
  facetValuesMax?: number;
  /**
   * The record table's parts that `/v1/export` reads, kept between exports (the process's own when absent): a Worker
   * gives its own, counted in its isolate's budget.
   */
  exportTables?: ExportTables;
};

/** What to send: the status, the JSON bytes, the headers an error adds, and what failed when it was not a plain ApiError. */
export type QueryAnswer = {
  status: number;
  body: Uint8Array;
  headers: Readonly<Record<string, string>>;
  operation: string | null;
  /** The thrown value behind an error answer; `bug` says whether the host should log its stack. */
  failure?: { cause: unknown; bug: boolean };
};

/**
 * The checks run in the order of docs/contract.md section 2's table, each only when the ones before it passed: JSON,
 * envelope, version, operation, input, cursor, then the content type, then whether a snapshot is loaded, then the
 * operation itself. Nothing escapes: every failure, including a bug, becomes the canonical error body.
 * `snapshot` is the one the request started on; `onOperation` hears the operation's name as soon as it is known.
 */
export async function answerQuery(
  deps: QueryDeps,
  snapshot: Snapshot | null,
  body: Uint8Array,
  contentType: string | null | undefined,
  onOperation?: (operation: OperationName) => void,
  /** Where a long operation gives the loop back between its slices (the host's turn queue). */
  pause?: () => Promise<void>,
): Promise<QueryAnswer> {
  let operation: OperationName | null = null;
  try {
    const value = parseJsonBody(body);
    operation = knownOperationOf(value);
    if (operation) onOperation?.(operation);
    const envelope = checkEnvelope(value);
    const op = deps.operations[envelope.operation];
    const input = parseInput(op.input, envelope.input, envelope.operation);
    const prepared = op.prepare ? op.prepare(input, { cursors: deps.cursors }) : input;
    if (!isJsonContentType(contentType ?? undefined)) {
      throw new ApiError('unsupported_media_type', 'The request body must be sent with Content-Type: application/json.', {
        details: [{ path: 'headers.content-type', message: 'must be application/json' }],
      });
    }
    if (!snapshot) {
      throw new ApiError('source_unavailable', 'No valid snapshot is loaded yet; try again once one has been built.');
    }
    const { parts } = (await run(deps, snapshot, envelope.operation, input, prepared, pause)) as { parts: AnswerParts };
    const answer = assemble(envelope.operation, parts, deps.sourceStateJson(snapshot, deps.now(), parts.warnings), deps.allocate);
    return { status: 200, body: answer, headers: {}, operation: envelope.operation };
  } catch (err) {
    return errorAnswer(deps, err, operation, snapshot);
  }
}

/**
 * Runs a checked operation over `snapshot`, or takes its answer from the cache: its answer's parts (bytes), and the
 * operation's result when it was run here (not taken from the cache).
 */
async function run(
  deps: QueryDeps,
  snapshot: Snapshot,
  operation: OperationName,
  input: unknown,
  prepared: unknown,
  pause: (() => Promise<void>) | undefined,
  values = false,
): Promise<{ parts: AnswerParts; result?: OperationResult } | { parts?: undefined; result: OperationResult }> {
  const op = deps.operations[operation];
  const cache = op.cacheable ? deps.answerCache : undefined;
  // Keyed by the checked input: what `prepare` adds (a query's parse) follows from it.
  const key = cache ? AnswerCache.keyOf(operation, input) : '';
  const kept = cache?.get(snapshot, key);
  if (kept) return { parts: kept };
  const servedAt = deps.now();
  // An answer that is kept, or read as values, must not live in memory the host reuses.
  const allocate = op.cacheable || values ? undefined : deps.allocate;
  // Aborted when the deadline rejects the answer: the operation's work stops too, at its next yield point.
  const cancel: { aborted: boolean; reason?: unknown } = { aborted: false };
  const work = op.handler(prepared as never, { snapshot, servedAt, cursors: deps.cursors, cancel, ...(allocate && { allocate }), ...(pause && { pause }), ...(deps.facetValuesMax !== undefined && { facetValuesMax: deps.facetValuesMax }) });
  // An answer at hand cannot be late.
  const bounded = work instanceof Promise && deps.deadline ? deps.deadline(work, operation) : work;
  const result = bounded instanceof Promise ? await bounded.catch((err: unknown) => cancelled(cancel, err)) : bounded;
  // Read as values and not kept: no bytes are made of it.
  if (values && !cache) return { result };
  let parts = answerParts(result);
  if (cache) {
    // Kept parts are shared by later answers, so none is written in place.
    parts = { ...parts, spare: undefined };
    cache.set(snapshot, key, parts);
  }
  return { parts, result };
}

/** An answer as values: its status, and the body as JSON.parse of the answer's bytes would give it. */
export type ValuesAnswer = { status: number; body: Record<string, unknown>; failure?: { cause: unknown; bug: boolean } };

const decoder = new TextDecoder();
const valueOf = (part: unknown): unknown => (part instanceof JsonBytes ? JSON.parse(decoder.decode(part.bytes)) : part);

/**
 * An operation asked by code in this process (the MCP tools), with its input as values: the checks answerQuery makes
 * from the input on (input, cursor, snapshot), the same cache, deadline and turns, and the same answer, as values
 * rather than bytes: no envelope is written and read again. The body's `sourceState` is made only when read.
 */
export async function answerValues(
  deps: QueryDeps,
  snapshot: Snapshot | null,
  operation: OperationName,
  rawInput: unknown,
  pause?: () => Promise<void>,
): Promise<ValuesAnswer> {
  try {
    const op = deps.operations[operation];
    const input = parseInput(op.input, rawInput, operation);
    const prepared = op.prepare ? op.prepare(input, { cursors: deps.cursors }) : input;
    if (!snapshot) throw new ApiError('source_unavailable', 'No valid snapshot is loaded yet; try again once one has been built.');
    const { parts, result } = await run(deps, snapshot, operation, input, prepared, pause, true);
    // A kept answer is bytes: its data, page and facets are read back from them.
    const members: Record<string, unknown> = result
      ? { data: valueOf(result.data), ...(result.page && { page: result.page }), ...(result.facets && { facets: valueOf(result.facets) }) }
      : (JSON.parse(`{"data":${decoder.decode(parts!.data)}${decoder.decode(parts!.tail)}`) as Record<string, unknown>);
    const body: Record<string, unknown> = { version: 1, operation, ...members };
    const warnings = result ? result.warnings : parts!.warnings;
    Object.defineProperty(body, 'sourceState', { enumerable: true, get: () => deps.sourceState(snapshot, deps.now(), warnings) });
    return { status: 200, body };
  } catch (err) {
    const made = errorAnswer(deps, err, operation, snapshot);
    return { status: made.status, body: JSON.parse(decoder.decode(made.body)) as Record<string, unknown>, ...(made.failure && { failure: made.failure }) };
  }
}

/** Marks the operation's work cancelled with `err` as the reason, and throws `err` on. */
function cancelled(cancel: { aborted: boolean; reason?: unknown }, err: unknown): never {
  cancel.aborted = true;
  cancel.reason = err;
  throw err;
}

/** The canonical error answer for any thrown value (bugs get a generic sentence; their stack is for the host's log). */
export function errorAnswer(
  deps: Pick<QueryDeps, 'sourceState' | 'now'>,
  err: unknown,
  operation: string | null,
  snapshot: Snapshot | null,
): QueryAnswer {
  const { error, bug } = toApiError(err);
  const body = encoder.encode(JSON.stringify(errorBody(error, operation, deps.sourceState(snapshot, deps.now()))));
  return { status: error.status, body, headers: error.headers, operation, failure: err instanceof ApiError ? undefined : { cause: err, bug } };
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
export function answerBytes(operation: OperationName, result: OperationResult, sourceStateJson: string): Uint8Array {
  return assemble(operation, answerParts(result), sourceStateJson);
}

/** What an operation's result contributes to its answer, as bytes (all of the answer but its head and sourceState). */
export function answerParts(result: OperationResult): AnswerParts {
  const data = result.data instanceof JsonBytes ? result.data.bytes : encoder.encode(JSON.stringify(result.data));
  let tail: Uint8Array = CLOSE;
  if (result.page || result.facets) {
    let text = '';
    if (result.page) text += `,"page":${JSON.stringify(result.page)}`;
    // Facets already JSON (many values, written in pieces) are spliced in as they are.
    if (result.facets instanceof JsonBytes) tail = joinBytes([encoder.encode(`${text},"facets":`), result.facets.bytes, CLOSE]);
    else {
      if (result.facets) text += `,"facets":${JSON.stringify(result.facets)}`;
      tail = encoder.encode(`${text}}`);
    }
  }
  const spare = result.data instanceof JsonBytes ? result.data.spare : undefined;
  return { data, tail, warnings: result.warnings, ...(spare && { spare }) };
}

/** The tail of an answer without page or facets (detail, classification, meta…): only read, never written into. */
const CLOSE = encoder.encode('}');

const SOURCE_STATE = encoder.encode(',"sourceState":');

const newBytes = (size: number): Uint8Array => new Uint8Array(size);

function assemble(operation: OperationName, parts: AnswerParts, sourceStateJson: string, allocate = newBytes): Uint8Array {
  const head = headOf(operation);
  const { data, tail } = parts;
  // sourceState is ASCII-safe JSON text at most a few hundred bytes: encodeInto writes it in place.
  const stateMax = sourceStateJson.length * 3;
  const size = head.length + data.length + SOURCE_STATE.length + stateMax + tail.length;
  // Written around `data` in its own buffer when it has room for the rest (a catalog page of up to hundreds of KB is
  // then not copied again), else into a new one.
  const spare = parts.spare;
  const inPlace = spare !== undefined && spare.before >= head.length && spare.after >= size - head.length - data.length;
  const out = inPlace ? new Uint8Array(data.buffer, data.byteOffset - head.length, size) : allocate(size);
  out.set(head, 0);
  if (!inPlace) out.set(data, head.length);
  let at = head.length + data.length;
  out.set(SOURCE_STATE, at);
  at += SOURCE_STATE.length;
  at += encoder.encodeInto(sourceStateJson, out.subarray(at)).written;
  out.set(tail, at);
  at += tail.length;
  return out.subarray(0, at);
}
