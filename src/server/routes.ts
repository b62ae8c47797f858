import type { IncomingMessage, ServerResponse } from 'node:http';
import { readNodeBody } from '../api/body.ts';
import { createDispatcher, type Dispatcher, type HostRequest } from '../api/dispatch.ts';
import { GONE } from '../api/routes.ts';
import { nodeRoutes, type HostRouteOptions } from './host-routes.ts';
import { logWhenDone, noteOperation } from './log.ts';
import { coreDeps } from './query-handler.ts';
import { sendAnswer } from './respond.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
type Middleware = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

export type RouteOptions = HostRouteOptions & {
  /** The browser page's files, or null for a bare API. */
  serveStatic: Middleware | null;
};

/**
 * The API on Node: the dispatcher of src/api/dispatch.ts over Node's request and response (the response is the
 * host's handle on a request; `res.req` is its request). What is Node's own: the body read from the request stream,
 * the query run in the connection's turn (turns.ts), answers sent compressed as the client accepts (respond.ts), the
 * page's files when nothing else serves a path, and the request's log line once its answer is sent.
 */
export function mountRoutes(options: RouteOptions): { handle: Handler; dispatcher: Dispatcher<ServerResponse, void> } {
  const { deps, snapshots, serveStatic } = options;
  const dispatcher = createDispatcher<ServerResponse, void>({
    deps: coreDeps(deps),
    lendsChunks: true,
    snapshot: () => snapshots.current,
    problem: () => snapshots.problem,
    io: (res) => ({
      body: () => readNodeBody(res.req),
      turn: <T>(work: (pause?: () => Promise<void>) => Promise<T>) =>
        deps.turns.run<T | typeof GONE>(res.req.socket, (pause) => (res.req.socket.destroyed ? Promise.resolve(GONE) : work(pause))),
      onOperation: (operation) => noteOperation(res, operation),
    }),
    own: nodeRoutes(options),
    send: sendAnswer,
    gone: () => {},
    cut: (res) => void res.destroy(),
    // sirv answers a file it has and calls `next` for the rest.
    fallback: (res) => (serveStatic ? new Promise<null>((resolve) => serveStatic(res.req, res, () => resolve(null))) : null),
    logError: (message, fields) => deps.logger.error(message, fields),
  });
  const handle: Handler = (req, res) => {
    logWhenDone(deps.logger, req, res);
    void dispatcher.dispatch(res, hostRequest(req));
  };
  return { handle, dispatcher };
}

/** What the dispatcher reads of a Node request. */
export function hostRequest(req: IncomingMessage): HostRequest {
  return {
    method: req.method ?? '',
    url: req.url ?? '',
    get origin() {
      return originOf(req.headers.host ?? '');
    },
    header: (name) => headerOf(req, name),
  };
}

/** The origin of links in answers: the Host header's when it is a plain host[:port], else localhost's. */
export function originOf(host: string): string {
  return `http://${/^[\w.-]+(:\d+)?$|^\[[0-9a-fA-F:.]+\](:\d+)?$/.test(host) ? host : 'localhost'}`;
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}
