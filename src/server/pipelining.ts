import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
type Waiting = { queue: [IncomingMessage, ServerResponse][]; active: number };

/** What the bound does besides holding requests back: a connection past `maxWaiting` is closed, and said so. */
export type PipelineLimits = { depth: number; maxWaiting: number; onRefused?: (socket: Socket) => void };

/**
 * At most `depth` requests of one connection are answered at once. Node parses every pipelined request that has
 * arrived and would start them all, queueing their answers in memory until the client reads: a client that sends
 * hundreds of requests and never reads would grow the server without bound. Here the rest wait, unanswered, until an
 * answer of the same connection has been handed to the kernel and the socket holds nothing unsent; while they wait,
 * Node stops reading the socket (its own back-pressure once answers queue up), so the client is held back by TCP.
 *
 * TCP only holds back what the server has not read yet, and Node reads and parses a socket's bytes in chunks of up to
 * 64 KiB: a few hundred small pipelined requests arrive in one read, and each one parsed is a request and a response
 * object kept until it is answered, so a few such clients would hold the server's memory. So at most `maxWaiting` requests
 * of a connection wait; one more and the connection is closed at once, its requests unanswered. Browsers and HTTP
 * libraries do not pipeline that deep; a client that does is refused rather than served at everyone else's cost.
 */
export function limitPipelining(limits: PipelineLimits, handle: Handler): Handler & { busy: (socket: Socket) => boolean } {
  const { depth, maxWaiting, onRefused } = limits;
  if (!Number.isInteger(depth) || depth < 1) throw new Error(`Expected \`pipelineDepth\` to be an integer from 1 and up, got ${depth}`);
  if (!Number.isInteger(maxWaiting) || maxWaiting < 0) throw new Error(`Expected \`pipelineMaxWaiting\` to be an integer from 0 and up, got ${maxWaiting}`);
  const connections = new WeakMap<Socket, Waiting>();
  const start = (state: Waiting, req: IncomingMessage, res: ServerResponse) => {
    state.active++;
    // A response emits 'close' once it has been handed to the kernel, or when its connection is gone.
    res.once('close', () => {
      state.active--;
      const next = state.queue.shift();
      if (!next) return;
      // An answer the kernel did not take yet (the client is not reading) holds the next one back until the socket
      // drains: a connection that does not read gets no more work, and holds at most `depth` answers in memory.
      const socket = req.socket;
      if (socket.writableNeedDrain && !socket.destroyed) socket.once('drain', () => start(state, next[0], next[1]));
      else start(state, next[0], next[1]);
    });
    handle(req, res);
  };
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    let state = connections.get(socket);
    if (!state) {
      const fresh: Waiting = { queue: [], active: 0 };
      connections.set(socket, fresh);
      // Requests still waiting when the connection goes have no one to answer.
      socket.once('close', () => {
        fresh.queue.length = 0;
      });
      state = fresh;
    }
    if (state.active < depth) start(state, req, res);
    else if (state.queue.length < maxWaiting) state.queue.push([req, res]);
    else if (!socket.destroyed) {
      state.queue.length = 0;
      withoutStacksOnClose(socket);
      socket.destroy();
      onRefused?.(socket);
    }
  };
  /** Whether a connection has a request being answered or waiting (as opposed to idle between requests). */
  const busy = (socket: Socket): boolean => {
    const state = connections.get(socket);
    return state !== undefined && (state.active > 0 || state.queue.length > 0);
  };
  return Object.assign(handler, { busy });
}

/**
 * When a connection closes, Node ends every request it parsed and has not answered with an "aborted" error, and
 * formats each error's stack trace (the stream's destroy reads `err.stack`). A connection refused here holds
 * hundreds of parsed requests, and capturing and formatting a stack trace for each is time of the event loop that
 * every other client waits through, for traces no one reads. Stack traces are off
 * while that connection's 'close' listeners run (Node's own first among them), and back to what they were after.
 */
export function withoutStacksOnClose(socket: Socket): void {
  let limit: number | undefined;
  socket.prependOnceListener('close', () => {
    limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
  });
  socket.once('close', () => {
    if (limit !== undefined) Error.stackTraceLimit = limit;
  });
}
