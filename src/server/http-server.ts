import { createServer, ServerResponse, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { MAX_BODY_BYTES } from '../api/body.ts';
import { checkStall, KEEP_ALIVE_MS, stallCheckMs } from './config.ts';
import type { FastLaneControl } from './fast-lane.ts';

type Handler = ((req: IncomingMessage, res: ServerResponse) => void) & { busy?: (socket: Socket) => boolean };

/**
 * The HTTP server and its time limits. `headersTimeoutMs` and `requestTimeoutMs` bound how long a client may take
 * to send its request (408 past them); `requestTimeoutMs` also bounds how long a connection may go without moving a
 * byte either way (a client that stops reading its answers).
 */
export function createHttpServer(limits: { headersTimeoutMs: number; requestTimeoutMs: number }, handle: Handler, closing: () => boolean = () => false): Server {
  /**
   * Once the server is stopping, an answer closes its connection: decided when its head is written (every head, an
   * implicit one too, goes through writeHead), so that a request already under way when the server began to stop is
   * answered with `Connection: close` as well, written where Node writes its own (after Date), as the fast lane does.
   */
  class Response extends ServerResponse {}
  const writeHead = ServerResponse.prototype.writeHead;
  Response.prototype.writeHead = function (this: ServerResponse, ...args: unknown[]) {
    if (closing()) this.shouldKeepAlive = false;
    return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
  } as ServerResponse['writeHead'];
  const server = createServer({
    ServerResponse: Response as typeof ServerResponse,
    keepAliveTimeout: KEEP_ALIVE_MS,
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    // Node checks the two timeouts on this interval (30 s by default), which would let a short limit run long.
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4))),
  });
  // The two limits above end once a request has arrived. A client that then stops reading keeps its socket and the
  // answers queued for it for good; drop the connection once nothing has moved either way for as long. Node's own
  // socket timeout cannot do it alone: it skips its first expiry while a write is pending, so a stalled reader would
  // keep its connection for twice the limit. Here the timeout fires every third of the limit, and a connection that
  // moved no byte over two of them in a row (between two and three thirds of the limit) is closed.
  const third = stallCheckMs(limits.requestTimeoutMs);
  const movedAt = new WeakMap<Socket, number>();
  server.timeout = third;
  server.on('timeout', (socket: Socket) => {
    // Idle between requests (the keep-alive timeout): closed at once, as Node would.
    if (handle.busy && !handle.busy(socket) && socket.writableLength === 0) {
      socket.destroy();
      return;
    }
    movedAt.set(socket, checkStall(socket, movedAt.get(socket) ?? -1));
    if (!socket.destroyed) socket.setTimeout(third);
  });
  server.on('request', handle);
  // `Expect: 100-continue`: a client waits for a 100 before it sends its body. Only a body the server will read is
  // invited: a declared length over the limit gets its 413 straight away instead of a 100 and then a 413.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (req.method === 'POST' && req.url === '/v1/query' && !(declared > MAX_BODY_BYTES)) continueWhenNext(res);
    handle(req, res);
  });
  // No 'clientError' listener on purpose: Node's own handler answers each client error with its status (431 for
  // headers over maxHeaderSize, 408 when a timeout above cuts a slow client, 400 for garbage), writes nothing into an
  // answer already under way, and destroys the socket; a listener of ours would have to redo all of that.
  return server;
}

/**
 * Writes a response's `100 Continue` once the response is the one its connection is answering. A pipelined request's
 * response waits without a socket until the answers before it are sent; a 100 written then is queued behind the
 * response's own head, which Node puts first when the answer is made, and so lands inside the answer
 * (`…Content-Length: N\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n{…`). Node gives the response its socket (the 'socket'
 * event) when its turn comes; an answer already made by then (its body came without waiting for the 100) goes out
 * without one, as a final answer may.
 */
function continueWhenNext(res: ServerResponse): void {
  if (res.socket) {
    res.writeContinue();
    return;
  }
  res.once('socket', () => {
    if (!res.headersSent) res.writeContinue();
  });
}

/** Stops taking connections and lets requests in flight finish, cutting what is left after `graceMs`. */
export function closeGracefully(server: Server, graceMs: number, lane: FastLaneControl | null = null): Promise<void> {
  if (!server.listening) return Promise.resolve();
  return new Promise<void>((resolve) => {
    // Idle keep-alive connections would hold close() open; requests in flight finish and then go idle too.
    const closeIdle = () => {
      server.closeIdleConnections();
      lane?.closeIdle();
    };
    const sweep = setInterval(closeIdle, 50);
    const deadline = setTimeout(() => {
      server.closeAllConnections();
      lane?.closeAll();
    }, graceMs);
    server.close(() => {
      clearInterval(sweep);
      clearTimeout(deadline);
      resolve();
    });
    closeIdle();
  });
}
