import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../api/errors.ts';
import { answerMcpPost, localBackend, tooLarge } from '../mcp/index.ts';
import { ClientGone, MAX_BODY_BYTES, readBody } from './body.ts';
import { coreDeps, type QueryDeps } from './query-handler.ts';

/**
 * POST /mcp on Node's HTTP server (src/mcp/http.ts answers it): the body read with /v1/query's bound, each tool's
 * operation run in the connection's turn of the event loop as a query is, and the Response written out.
 */
export function mcpHandler(deps: QueryDeps, budgetBytes: number) {
  const core = coreDeps(deps);
  const onBug = (tool: string, err: unknown) => deps.logger.error('internal error', { path: '/mcp', tool, stack: err instanceof Error ? err.stack : String(err) });
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let response: Response;
    try {
      const body = await readBody(req);
      const backend = localBackend({ deps: core, current: deps.current, schedule: (work) => deps.turns.run(req.socket, work) });
      response = await answerMcpPost({ backend, budgetBytes, onBug }, `http://${req.headers.host ?? 'localhost'}${req.url ?? '/mcp'}`, headersOf(req), body);
    } catch (err) {
      if (err instanceof ClientGone) return;
      if (err instanceof ApiError && err.code === 'request_too_large') response = tooLarge(MAX_BODY_BYTES);
      else {
        deps.logger.error('internal error', { path: '/mcp', stack: err instanceof Error ? err.stack : String(err) });
        response = new Response(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }), { status: 500, headers: { 'Content-Type': 'application/json' } });
      }
    }
    if (res.headersSent || res.destroyed) return;
    const bytes = new Uint8Array(await response.arrayBuffer());
    const head: Record<string, string | number> = {};
    response.headers.forEach((value, name) => (head[name] = value));
    head['content-length'] = bytes.length;
    res.writeHead(response.status, head);
    res.end(bytes);
  };
}

function headersOf(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name === 'content-length' || name === 'transfer-encoding' || name === 'connection' || name === 'host') continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return headers;
}
