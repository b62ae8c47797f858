import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { INTERNAL_ERROR_MESSAGE } from '../errors.ts';
import type { McpBackend } from './backend.ts';
import { checkBudget, DEFAULT_BUDGET_BYTES } from './budget.ts';
import { readResource, RESOURCES } from './resources.ts';
import { errorResult } from './results.ts';
import type { ResultCache } from './result-cache.ts';
import { TOOLS, type Tool } from './tools.ts';

/** What an MCP server of ours is made from, resolved once by the host. */
export type McpOptions = {
  backend: McpBackend;
  /** Bytes each of a result's JSON and text stays within. */
  budgetBytes: number;
  /** Hears a tool's failure that is a bug (the client gets the generic internal_error sentence). */
  onBug?: (tool: string, err: unknown) => void;
  /** Where finished tool results are kept for the snapshot answering (result-cache.ts); none are kept when absent. */
  resultCache?: ResultCache;
};

export const SERVER_NAME = 'device-510k';
export const SERVER_VERSION = '0.1.0';

const INSTRUCTIONS =
  "Exact answers about every FDA 510(k) clearance since 1976 from a verified snapshot of FDA's files: search_clearances for records, count_by for exact counts by any field, review_time_stats for review times, get_clearance and get_classification for one record or product code, changes_since for what the nightly rebuilds changed. Totals and counts are exact, never estimated. Read device-510k://docs/query-syntax for the query language.";

/** The options with the defaults, checked: a host calls this where it reads its configuration. */
export function mcpOptions(backend: McpBackend, budgetBytes: number = DEFAULT_BUDGET_BYTES, onBug?: McpOptions['onBug']): McpOptions {
  return { backend, budgetBytes: checkBudget(budgetBytes), ...(onBug && { onBug }) };
}

/** JSON Schema of a zod schema as tools/list gives it (the draft MCP names, without zod's `$schema` line). */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): { type: 'object'; [k: string]: unknown } {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return { ...rest, type: 'object' };
}

let toolList: unknown[] | null = null;
/** tools/list's answer, made once per process: the schemas come from the contract and never change while it runs. */
function listTools() {
  toolList ??= TOOLS.map((t) => ({
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: jsonSchema(t.input, 'input'),
    outputSchema: jsonSchema(t.output, 'output'),
    annotations: { title: t.title, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  }));
  return toolList;
}

export const TOOL_BY_NAME: ReadonlyMap<string, Tool> = new Map(TOOLS.map((t) => [t.name, t]));

/**
 * A request of `method` with any params. The SDK parses a request with its handler's schema before the handler runs
 * and answers a failure as an internal error (-32603); params that are not what the method takes are the client's
 * mistake, -32602 (invalid params), so these handlers take any params and check them themselves (tools/call by the
 * SDK's own wrapper, which does answer -32602).
 */
const loose = <M extends string>(method: M) => z.object({ method: z.literal(method), params: z.unknown() }) as unknown as typeof ListToolsRequestSchema;
// Made once: a zod schema compiles itself on its first parse, which per request would cost more than the tool call.
const LOOSE_CALL = loose('tools/call');
const LOOSE_READ = loose('resources/read');

/**
 * The server never validates data against a JSON Schema a client sends (it asks nothing of the client: no
 * elicitation), so the SDK's default validator, an Ajv instance per server that compiles with `new Function` (refused
 * on Workers), is replaced by one that says so if it is ever asked.
 */
const NO_CLIENT_SCHEMAS: jsonSchemaValidator = {
  getValidator: () => () => ({ valid: false, data: undefined, errorMessage: 'this server validates no client-sent JSON Schema' }),
};

/**
 * What tool calls run with: the options of one stdio connection or of one HTTP POST, and a queue that runs its calls
 * one after another, so that a batch of calls in one POST is bounded like that many requests.
 */
export type McpScope = { readonly options: McpOptions; oneAtATime<T>(work: () => Promise<T>): Promise<T> };

export function mcpScope(options: McpOptions): McpScope {
  let queue: Promise<unknown> = Promise.resolve();
  return {
    options,
    oneAtATime<T>(work: () => Promise<T>): Promise<T> {
      const run = queue.then(work, work);
      queue = run.catch(() => undefined);
      return run;
    },
  };
}

/**
 * One MCP server over the SDK's protocol layer. `scopeOf` names the scope a request runs in, by its JSON-RPC id as
 * the server's transport gave it: for stdio one scope for the connection, for HTTP one per POST (a server made once
 * per process answers every POST, http.ts). The server keeps no state between requests that an answer depends on.
 */
export function createMcpServer(scopeOf: (requestId: RequestId) => McpScope | undefined): Server {
  const server = new Server(
    { name: SERVER_NAME, title: 'FDA 510(k) clearances', version: SERVER_VERSION },
    { capabilities: { tools: { listChanged: false }, resources: { listChanged: false } }, instructions: INSTRUCTIONS, jsonSchemaValidator: NO_CLIENT_SCHEMAS },
  );
  const scopeFor = (requestId: RequestId): McpScope => {
    const scope = scopeOf(requestId);
    if (!scope) throw new McpError(ErrorCode.InternalError, 'The request is no longer being answered.');
    return scope;
  };

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listTools() }) as never);
  server.setRequestHandler(LOOSE_CALL, (raw, extra) => {
    // The SDK's wrapper of tools/call has checked the params (-32602 when they are not a call) before this runs.
    const request = raw as unknown as z.infer<typeof CallToolRequestSchema>;
    const tool = TOOL_BY_NAME.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}; tools/list names the tools.`);
    const { options, oneAtATime } = scopeFor(extra.requestId);
    return oneAtATime(async () => {
      try {
        return await tool.run(request.params.arguments ?? {}, options);
      } catch (err) {
        options.onBug?.(tool.name, err);
        return errorResult({ code: 'internal_error', message: INTERNAL_ERROR_MESSAGE, details: [] });
      }
    }) as never;
  });
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [...RESOURCES] }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [] }));
  server.setRequestHandler(LOOSE_READ, async (raw, extra) => {
    const request = ReadResourceRequestSchema.safeParse(raw);
    if (!request.success) throw new McpError(ErrorCode.InvalidParams, 'Invalid resources/read request: params.uri must be a string');
    const uri = request.data.params.uri;
    const { options, oneAtATime } = scopeFor(extra.requestId);
    const read = await oneAtATime(() => readResource(uri, options.backend));
    // -32002 is the spec's code for a resource that does not exist.
    if (read === null) throw new McpError(-32002, `Resource not found: ${uri}; resources/list names the resources.`, { uri });
    if ('error' in read) throw new McpError(ErrorCode.InternalError, read.error, { uri });
    return { contents: [{ uri, mimeType: read.mimeType, text: read.text }] };
  });
  return server;
}
