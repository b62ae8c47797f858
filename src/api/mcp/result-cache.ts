import type { JSONRPCMessage, JSONRPCRequest, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { AnswerCache } from '../../utils/answer-cache.ts';
import { joinBytes } from '../../utils/join-bytes.ts';
import type { Tool } from './tools.ts';

/**
 * Finished tool results kept as the bytes the SDK sent, so that a tool call asked again is answered like a search
 * asked again of /v1/query: a map lookup, then bytes. Building a result (reading the operation's answer back as
 * values, cutting it to the budget, rendering its text, the SDK's checks of the request and of the result, the JSON
 * of the response) costs several times the cached operation under it.
 *
 * Entries go in the host's answer cache (the same byte bound, one map per snapshot, so a new snapshot starts empty),
 * keyed by the tool, its arguments as its schema reads them, and the byte budget. Only what the SDK itself answered
 * is kept, and only when the answer is exactly `{"result":…,"jsonrpc":"2.0","id":…}`: a hit is those bytes with the
 * request's id written in, byte for byte what the SDK would send again. A call the cache may answer is one the SDK
 * would hand to the tool unchanged: `tools/call` with only `name` and `arguments` in its params (anything else, such
 * as `_meta` or `task`, is the SDK's to read), of a tool marked `cacheable`, with arguments its schema accepts. Error
 * results are never kept (they are cheap, and some depend on more than the snapshot: a deadline, a damaged file).
 */
export type ResultCache = { readonly answers: AnswerCache; readonly snapshot: object };

const encoder = new TextEncoder();
const HEAD = encoder.encode('{"result":');
const BEFORE_ID = encoder.encode(',"jsonrpc":"2.0","id":');
const END = encoder.encode('}');
const NOTHING = new Uint8Array(0);

/** The cache key of a tools/call the cache may answer (see above), or null when the SDK must read it. */
export function resultKey(request: JSONRPCRequest, tools: ReadonlyMap<string, Tool>, budgetBytes: number): string | null {
  if (request.method !== 'tools/call') return null;
  const params = request.params as Record<string, unknown> | undefined;
  if (typeof params !== 'object' || params === null) return null;
  for (const member in params) if (member !== 'name' && member !== 'arguments') return null;
  const { name, arguments: args } = params;
  if (typeof name !== 'string') return null;
  const tool = tools.get(name);
  if (!tool?.cacheable) return null;
  if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) return null;
  const parsed = tool.input.safeParse(args ?? {});
  if (!parsed.success) return null;
  return AnswerCache.keyOf(`mcp:${name}`, [budgetBytes, parsed.data]);
}

/** A tools/call request in the one shape the kept-result path reads (keptAnswer in http.ts); any other goes to the SDK. */
export type PlainCall = { jsonrpc: '2.0'; id: RequestId; method: 'tools/call'; params: { name: string; arguments?: Record<string, unknown> } };

const own = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Whether `value` (JSON.parse of a POST's body) is one tools/call request the SDK's message schema reads as itself,
 * member for member: exactly `jsonrpc` "2.0", an `id` (a string, or an integer the schema's `.int()` accepts: a safe
 * one), `method` and `params`, whose members are `name` (a string) and, when present, `arguments` (an object). A
 * `_meta`, a task, any other member, or a batch is none of these: the SDK reads it.
 */
export function isPlainCall(value: unknown): value is PlainCall {
  if (!own(value)) return false;
  let members = 0;
  for (const _ in value) members++;
  if (members !== 4 || value.jsonrpc !== '2.0' || value.method !== 'tools/call') return false;
  const id = value.id;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return false;
  const params = value.params;
  if (!own(params) || typeof params.name !== 'string') return false;
  let paramMembers = 0;
  for (const _ in params) paramMembers++;
  if (params.arguments === undefined) return paramMembers === 1;
  return paramMembers === 2 && own(params.arguments);
}

/**
 * The result keys of calls already read, by their arguments as the client spelled them (JSON.stringify of the
 * parsed arguments, with the tool and the budget): the same spelling reads the same way with the tool's schema, so a
 * call asked again skips that parse. Bounded by its characters; emptied when full (an entry costs one parse to make).
 */
const KEY_MEMO_MAX_CHARS = 4 * 1024 * 1024;
const keyMemo = new Map<string, string | null>();
let keyMemoChars = 0;

/** resultKey of a plain call, read once per spelling of its arguments (see keyMemo). */
export function plainCallKey(call: PlainCall, tools: ReadonlyMap<string, Tool>, budgetBytes: number): string | null {
  const spelled = `${call.params.name}\u0000${budgetBytes}\u0000${JSON.stringify(call.params.arguments ?? null)}`;
  const known = keyMemo.get(spelled);
  if (known !== undefined) return known;
  const key = resultKey(call, tools, budgetBytes);
  const chars = spelled.length + (key?.length ?? 0);
  if (keyMemoChars + chars > KEY_MEMO_MAX_CHARS) {
    keyMemo.clear();
    keyMemoChars = 0;
  }
  keyMemo.set(spelled, key);
  keyMemoChars += chars;
  return key;
}

/**
 * The response to a request of id `id` whose result is `result` (JSON bytes), as JSON.stringify of it writes it; in
 * memory from `allocate` when given.
 */
function responseBytes(result: Uint8Array, id: RequestId, allocate?: (size: number) => Uint8Array): Uint8Array {
  const pieces = [HEAD, result, BEFORE_ID, encoder.encode(JSON.stringify(id)), END];
  if (!allocate) return joinBytes(pieces);
  let size = 0;
  for (const piece of pieces) size += piece.length;
  const out = allocate(size);
  let at = 0;
  for (const piece of pieces) {
    out.set(piece, at);
    at += piece.length;
  }
  return out;
}

/** The kept response to the call under `key`, with `id` written in (in memory from `allocate` when given); null when none is kept. */
export function cachedResponse(cache: ResultCache, key: string, id: RequestId, allocate?: (size: number) => Uint8Array): Uint8Array | null {
  const kept = cache.answers.get(cache.snapshot, key);
  return kept ? responseBytes(kept.data, id, allocate) : null;
}

/**
 * The bytes of the SDK's `response` to the call under `key`, keeping its result when it may be kept: a success, in
 * the member order that splicing the id reproduces.
 */
export function keepResponse(cache: ResultCache, key: string, response: JSONRPCMessage): Uint8Array {
  const members = Object.keys(response);
  const r = response as { result?: { isError?: unknown }; jsonrpc: string; id?: RequestId };
  const spliceable =
    members.length === 3 && members[0] === 'result' && members[1] === 'jsonrpc' && members[2] === 'id' && r.jsonrpc === '2.0' && r.id !== undefined && r.result?.isError !== true;
  if (!spliceable) return encoder.encode(JSON.stringify(response));
  const result = encoder.encode(JSON.stringify(r.result));
  cache.answers.set(cache.snapshot, key, { data: result, tail: NOTHING, warnings: undefined });
  return responseBytes(result, r.id as RequestId);
}
