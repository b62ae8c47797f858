import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { createMcpServer, type McpOptions } from './server.ts';

/**
 * POST /mcp, the Streamable HTTP transport without sessions, for any host with Web Requests (the Node server, the
 * Worker): a body in, a Response out. Each request gets a server and a transport of its own, answered with JSON
 * (never an SSE stream), and both are let go with the answer: nothing is kept between requests, so any instance can
 * answer any request. The host reads the body with its own bound first (64 KiB, the same as /v1/query).
 */

/** At most this many JSON-RPC messages in one POST; each tool call of a batch runs after the one before. */
export const MAX_BATCH = 16;

const HEADERS = { 'Content-Type': 'application/json', 'Access-Control-Allow-Origin': '*' };

/** The request headers the transport reads (the rest are no part of the protocol). */
export const MCP_REQUEST_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'] as const;

/** A JSON-RPC error that answers the whole POST (no request of it could be read), with the HTTP status for it. */
export function jsonRpcError(status: number, code: number, message: string, headers: Readonly<Record<string, string>> = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), { status, headers: { ...HEADERS, ...headers } });
}

/** The answer to a body over the host's bound: 413, the connection closed, as for /v1/query. */
export function tooLarge(limit: number): Response {
  return jsonRpcError(413, -32600, `Invalid Request: the request body is larger than ${limit / 1024} KiB`, { Connection: 'close' });
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** What the POST's body parses to, or the error that answers it (-32700 for bytes that are not JSON). */
function parseBody(body: Uint8Array): { value: unknown } | { error: Response } {
  let value: unknown;
  try {
    value = JSON.parse(strictUtf8.decode(body));
  } catch {
    return { error: jsonRpcError(400, -32700, 'Parse error: the body is not JSON (UTF-8)') };
  }
  const messages = Array.isArray(value) ? value : [value];
  if (messages.length === 0) return { error: jsonRpcError(400, -32600, 'Invalid Request: an empty batch') };
  if (messages.length > MAX_BATCH) return { error: jsonRpcError(400, -32600, `Invalid Request: a batch must have at most ${MAX_BATCH} messages`) };
  // JSON that is not a JSON-RPC 2.0 message is an invalid request (-32600), not a parse error.
  for (const message of messages) {
    if (!JSONRPCMessageSchema.safeParse(message).success) return { error: jsonRpcError(400, -32600, 'Invalid Request: not a JSON-RPC 2.0 request, notification or response') };
  }
  return { value };
}

/**
 * Answers one POST. `url` and `headers` are the request's (the transport checks Accept, Content-Type and
 * MCP-Protocol-Version, and answers 406, 415 or 400 as the spec says).
 */
export async function answerMcpPost(options: McpOptions, url: string, headers: Headers, body: Uint8Array): Promise<Response> {
  const parsed = parseBody(body);
  if ('error' in parsed) return parsed.error;
  const server = createMcpServer(options);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  try {
    await server.connect(transport);
    // The body is already read and parsed: the request the transport sees has none, so no length of one.
    const seen = new Headers();
    for (const name of MCP_REQUEST_HEADERS) {
      const value = headers.get(name);
      if (value !== null) seen.set(name, value);
    }
    const response = await transport.handleRequest(new Request(url, { method: 'POST', headers: seen }), { parsedBody: parsed.value });
    const out = new Headers(response.headers);
    out.set('Access-Control-Allow-Origin', '*');
    return new Response(response.body, { status: response.status, headers: out });
  } finally {
    void server.close();
  }
}
