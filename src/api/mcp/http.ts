import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  JSONRPCMessageSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
  type JSONRPCNotification,
  type JSONRPCRequest,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { isJsonContentType } from '../media.ts';
import { joinBytes } from '../../utils/join-bytes.ts';
import { cachedResponse, isPlainCall, keepResponse, plainCallKey, resultKey, type ResultCache } from './result-cache.ts';
import { createMcpServer, mcpScope, TOOL_BY_NAME, type McpOptions, type McpScope } from './server.ts';

/**
 * POST /mcp, the Streamable HTTP transport without sessions, for any host (the Node server and its fast lane, the
 * Worker): a body and the request's headers in, the status, headers and body of the answer out. Every POST is
 * answered with JSON (never an SSE stream) and nothing is kept between POSTs, so any instance can answer any request.
 * The host reads the body with its own bound first (64 KiB, the same as /v1/query).
 *
 * One SDK server answers every POST of the process: made per POST, its setup (the server, its handlers, a transport,
 * Web Request and Response objects) cost several times the tool call itself. Each POST's messages reach it through
 * one shared transport under ids of the transport's own, so that two clients' `"id": 1` never meet, and go back to
 * their POST under their own ids. The checks the SDK's transport makes of a POST (Accept, Content-Type,
 * MCP-Protocol-Version, one initialize alone) are made here the same way, with its status codes and error codes.
 */

/** At most this many JSON-RPC messages in one POST; each tool call of a batch runs after the one before. */
export const MAX_BATCH = 16;

/** The request headers read (the rest are no part of the protocol). */
export const MCP_REQUEST_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id'] as const;

/** An answer to a POST: its status, the headers of its own, and its JSON body (none for 202). */
export type McpAnswer = { status: number; headers: Readonly<Record<string, string>>; body: Uint8Array | null };

const encoder = new TextEncoder();
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** A JSON-RPC error that answers the whole POST (no request of it could be read), with the HTTP status for it. */
export function jsonRpcError(status: number, code: number, message: string, headers: Readonly<Record<string, string>> = {}): McpAnswer {
  return { status, headers, body: encoder.encode(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null })) };
}

/** The answer to a body over the host's bound: 413, the connection closed, as for /v1/query. */
export function tooLarge(limit: number): McpAnswer {
  return jsonRpcError(413, -32600, `Invalid Request: the request body is larger than ${limit / 1024} KiB`, { Connection: 'close' });
}

/** A POST's body read as JSON: its value, or the answer to bytes that are not JSON (UTF-8), -32700. */
export type McpPost = { value: unknown } | { error: McpAnswer };

export function readMcpPost(body: Uint8Array): McpPost {
  try {
    return { value: JSON.parse(strictUtf8.decode(body)) as unknown };
  } catch {
    return { error: jsonRpcError(400, -32700, 'Parse error: the body is not JSON (UTF-8)') };
  }
}

/** The POST's messages, or the error that answers it (-32600 for JSON that is not JSON-RPC). */
function messagesOf(value: unknown): { messages: JSONRPCMessage[]; batch: boolean } | { error: McpAnswer } {
  const batch = Array.isArray(value);
  const raw: unknown[] = batch ? (value as unknown[]) : [value];
  if (raw.length === 0) return { error: jsonRpcError(400, -32600, 'Invalid Request: an empty batch') };
  if (raw.length > MAX_BATCH) return { error: jsonRpcError(400, -32600, `Invalid Request: a batch must have at most ${MAX_BATCH} messages`) };
  const messages: JSONRPCMessage[] = [];
  // JSON that is not a JSON-RPC 2.0 message is an invalid request (-32600), not a parse error.
  for (const message of raw) {
    const parsed = JSONRPCMessageSchema.safeParse(message);
    if (!parsed.success) return { error: jsonRpcError(400, -32600, 'Invalid Request: not a JSON-RPC 2.0 request, notification or response') };
    messages.push(parsed.data);
  }
  return { messages, batch };
}

/**
 * What a message the SDK's schema has read is, by its members: a request has a method and an id, a notification a
 * method alone, and the rest are responses. (The SDK's own guards parse each message again with a schema apiece.)
 */
const isRequest = (m: JSONRPCMessage): m is JSONRPCRequest => 'method' in m && 'id' in m;
const isNotification = (m: JSONRPCMessage): m is JSONRPCNotification => 'method' in m && !('id' in m);
const isInitialize = (m: JSONRPCMessage) => isRequest(m) && m.method === 'initialize';

/** The checks of a POST's headers the SDK's transport makes, with its answers (406, 415, 400). */
function headerError(header: (name: string) => string | undefined, messages: readonly JSONRPCMessage[]): McpAnswer | null {
  const accept = header('accept');
  // Accept is a list: a substring check is what the SDK's transport makes.
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) {
    return jsonRpcError(406, -32000, 'Not Acceptable: Client must accept both application/json and text/event-stream');
  }
  if (!isJsonContentType(header('content-type'))) return jsonRpcError(415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
  if (messages.some(isInitialize)) {
    if (messages.length > 1) return jsonRpcError(400, -32600, 'Invalid Request: Only one initialization request is allowed');
    return null;
  }
  const version = header('mcp-protocol-version');
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    return jsonRpcError(400, -32000, `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`);
  }
  return null;
}

/**
 * The transport between the one server and every POST under way: a request goes in under an id of its own (a number
 * never used before in this process) and its response comes back to the POST that sent it, under the client's id.
 */
class SharedTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private lastId = 0;
  private readonly waiting = new Map<RequestId, { resolve: (message: JSONRPCMessage) => void; scope: McpScope }>();

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.onclose?.();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    // Only a request's response has somewhere to go: the server sends nothing else (no logging, progress or requests).
    if (!('id' in message) || message.id === undefined) return;
    const entry = this.waiting.get(message.id);
    if (!entry) return;
    this.waiting.delete(message.id);
    entry.resolve(message);
  }

  /** The scope of the request the server knows by `id`. */
  scopeOf(id: RequestId): McpScope | undefined {
    return this.waiting.get(id)?.scope;
  }

  /** Hands `request` to the server under an id of the transport's; resolves with its response, under the client's id. */
  ask(request: JSONRPCMessage & { id: RequestId }, scope: McpScope): Promise<JSONRPCMessage> {
    const id = ++this.lastId;
    const answered = new Promise<JSONRPCMessage>((resolve) => this.waiting.set(id, { resolve, scope }));
    this.onmessage?.({ ...request, id });
    return answered.then((response) => ({ ...response, id: request.id }) as JSONRPCMessage);
  }

  /** Hands a notification to the server (nothing is answered). */
  tell(notification: JSONRPCMessage): void {
    this.onmessage?.(notification);
  }
}

let shared: { transport: SharedTransport } | null = null;

/** The process's one server and transport, connected at the first POST. */
function sharedTransport(): SharedTransport {
  if (!shared) {
    const transport = new SharedTransport();
    const server = createMcpServer((id) => transport.scopeOf(id));
    // Connecting this transport settles at once (its start does nothing); the server lives as long as the process.
    void server.connect(transport);
    shared = { transport };
  }
  return shared.transport;
}

const JSON_HEADERS: Readonly<Record<string, string>> = {};

const OPEN = encoder.encode('[');
const COMMA = encoder.encode(',');
const CLOSE = encoder.encode(']');

/**
 * The answer to a POST that is one plain tools/call (result-cache.ts `isPlainCall`) whose result is kept for this
 * snapshot, with headers the SDK's transport accepts: the kept bytes with the request's id written in, made without
 * the SDK and without reading the arguments with the tool's schema again (they were read when the result was kept).
 * These are the bytes the SDK path sends for it (answerMcpPost), which it takes for every other POST: null here.
 */
export function keptAnswer(
  header: (name: string) => string | undefined,
  post: McpPost,
  budgetBytes: number,
  cache: ResultCache,
  /** Where the answer is written (the host's lent memory; new bytes when absent). */
  allocate?: (size: number) => Uint8Array,
): McpAnswer | null {
  if (!('value' in post)) return null;
  const call = post.value;
  if (!isPlainCall(call)) return null;
  if (headerError(header, [call as JSONRPCMessage]) !== null) return null;
  const key = plainCallKey(call, TOOL_BY_NAME, budgetBytes);
  const kept = key === null ? null : cachedResponse(cache, key, call.id, allocate);
  return kept === null ? null : { status: 200, headers: JSON_HEADERS, body: kept };
}

/**
 * Answers one POST (its body's bytes, or as readMcpPost read them). The checks are made in the SDK transport's order:
 * the body, Accept, Content-Type, then the protocol version (not for an initialize). A tool call whose finished
 * result is kept for this snapshot is answered from it (result-cache.ts), the same bytes the SDK would send; every
 * other request is the SDK's.
 */
export async function answerMcpPost(header: (name: string) => string | undefined, body: Uint8Array | McpPost, options: McpOptions): Promise<McpAnswer> {
  const post = body instanceof Uint8Array ? readMcpPost(body) : body;
  const cache = options.resultCache;
  const kept = cache ? keptAnswer(header, post, options.budgetBytes, cache) : null;
  if (kept) return kept;
  if ('error' in post) return post.error;
  const read = messagesOf(post.value);
  if ('error' in read) return read.error;
  const refused = headerError(header, read.messages);
  if (refused) return refused;
  const transport = sharedTransport();
  const scope = mcpScope(options);
  const asked: (Uint8Array | Promise<Uint8Array>)[] = [];
  for (const message of read.messages) {
    if (isRequest(message)) {
      const key = cache ? resultKey(message, TOOL_BY_NAME, options.budgetBytes) : null;
      const kept = key === null ? null : cachedResponse(cache!, key, message.id);
      if (kept) asked.push(kept);
      else if (key !== null) asked.push(transport.ask(message, scope).then((response) => keepResponse(cache!, key, response)));
      else asked.push(transport.ask(message, scope).then((response) => encoder.encode(JSON.stringify(response))));
    }
    // A cancellation names a request by the client's id, which no request of the server has: it is not passed on,
    // and every request of a POST is answered in full (a client that wants none of it closes the connection).
    else if (isNotification(message) && message.method !== 'notifications/cancelled') transport.tell(message);
    // A response (to a request the server never sends) has nothing to answer.
  }
  if (asked.length === 0) return { status: 202, headers: JSON_HEADERS, body: null };
  const answers = await Promise.all(asked);
  // Each answer's bytes are JSON.stringify of it, so a batch's are the array's as JSON.stringify writes it.
  const out = read.batch ? joinBytes([OPEN, ...answers.flatMap((a, i) => (i === 0 ? [a] : [COMMA, a])), CLOSE]) : answers[0]!;
  return { status: 200, headers: JSON_HEADERS, body: out };
}
