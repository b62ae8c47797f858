import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { AnswerBuffers } from './answer-buffers.ts';
import { KEEP_ALIVE_MS, stallCheckMs } from './config.ts';
import { Connection, WriteBatch, type Counts, type FastLane } from './lane-connection.ts';
import { MAX_HEAD_BYTES } from './request-parser.ts';

export type { FastLane } from './lane-connection.ts';
export { AnswerBuffers } from './answer-buffers.ts';
export { BATCHED_ANSWER_BYTES } from './lane-connection.ts';
export { headerOf, MAX_HEAD_BYTES, type TableRequest } from './request-parser.ts';

/**
 * The fast lane: POST /v1/query (and GET of openFDA's device endpoints) answered straight from the socket's bytes,
 * below Node's HTTP layer.
 *
 * For small answers Node's HTTP layer (the parser's request and response objects, header validation, the writable
 * stream machinery) costs more than the operation itself, and a bare node:http server sending fixed bytes is below
 * the targets, so no trimming of our own code could reach them. Every connection starts here. Requests of the one shape API clients send (a whole
 * `POST /v1/query HTTP/1.1` with a Host, a Content-Length within the body limit, no Transfer-Encoding, Expect or
 * Upgrade, every header line well formed), and a GET or HEAD of openFDA's device endpoints with no body under the
 * same header rules, are read from the socket's bytes and answered with one write: the GET by its route's portable
 * handler and encoded by `encodeAnswer`, as Node's route answers it, so the bytes are the same. Anything
 * else (another path or method, a malformed or unusual request, one still incomplete after a moment) hands the
 * connection to Node's HTTP server for the rest of its life, from the first byte not answered here: Node's parser
 * then decides and answers exactly as it always did (400, 408, 413, 431, chunked bodies, 100-continue, the page and
 * the snapshot's files). Answers already under way on the lane are written before the hand-over, so they stay in
 * order.
 *
 * The pipelining bound is the one of pipelining.ts: at most `depth` requests of a connection are answered at once, the
 * next start once an answer has been handed to the kernel and the socket has drained, and a connection with more
 * than `maxWaiting` complete requests waiting is closed before any of them starts.
 *
 * And a connection's requests not yet answered (started or waiting) hold at most `bufferBytes`: past it the lane
 * stops reading the connection (as Node's parser stops reading while a request's body waits unread), so that a client
 * that pipelines large bodies and never reads its answers is held back by TCP instead of by the server's memory, and
 * reads again once answers have been made. A request starts only while the bodies of those under way stay within it
 * (one always may). A waiting body is copied out of the bytes it was read with when they are more than its own, so
 * that it never keeps a larger buffer alive, and a started one is let go once its answer is made.
 *
 * The answers a connection's client has not read are bounded the same way: a request whose turn comes while the
 * answers ahead of it, made and not yet taken by the kernel, pass `bufferBytes` is not answered then, and runs again
 * once they have gone out. A client that never reads thus leaves about one answer in the server's memory (the one
 * the kernel had no room for), not one for each request under way.
 *
 * Its parts, a file each: the request parser (request-parser.ts), the head writer (head-writer.ts), the buffers
 * answers are made in (answer-buffers.ts) and the connection that drives them (lane-connection.ts).
 */

export type FastLaneControl = {
  /** Closes the lane's connections that have nothing in flight (as the server's `closeIdleConnections`). */
  closeIdle(): void;
  /** Closes every connection of the lane. */
  closeAll(): void;
  /** Connections on the lane now, requests answered on it, and connections handed to Node (for tests). */
  readonly connections: number;
  readonly answered: number;
  /** Of those, GETs and HEADs. */
  readonly answeredGets: number;
  readonly handedOver: number;
  /** Times a connection stopped being read because its requests passed `bufferBytes`, and the most held. */
  readonly readPauses: number;
  readonly peakHeldBytes: number;
  /** Times a request's turn came while the answers ahead of it, not yet taken by the kernel, passed `bufferBytes`. */
  readonly heldAnswers: number;
};

/**
 * Puts the fast lane in front of Node's HTTP server: every connection the server accepts starts on the lane, and
 * Node's own connection handling (and any other 'connection' listener added before) runs only when the lane hands the
 * connection over.
 */
export function installFastLane(server: Server, lane: FastLane): FastLaneControl {
  const nodeListeners = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  const open = new Set<Connection>();
  const buffers = new AnswerBuffers();
  const run = lane.runner(buffers.allocate);
  const counts: Counts = { answered: 0, answeredGets: 0, handedOver: 0, readPauses: 0, peakHeldBytes: 0, heldAnswers: 0 };
  if (!(lane.bufferBytes >= MAX_HEAD_BYTES + lane.maxBodyBytes)) {
    throw new Error(`Expected \`pipelineBufferBytes\` to be at least ${MAX_HEAD_BYTES + lane.maxBodyBytes} (a whole request: its head and its largest body), got ${lane.bufferBytes}`);
  }
  const toNode = (socket: Socket) => {
    for (const listener of nodeListeners) listener.call(server, socket);
  };
  const batch = new WriteBatch();
  // Idle connections close after the keep-alive; a busy one on which nothing moved for two stall checks (config.ts) is
  // closed within the request timeout. The lane looks at every connection a quarter of the shorter of the two.
  const keepAliveMs = KEEP_ALIVE_MS;
  const checkMs = stallCheckMs(lane.requestTimeoutMs);
  const stallMs = 2 * checkMs;
  const watchEveryMs = Math.max(1, Math.floor(Math.min(keepAliveMs, checkMs) / 4));
  let watching: NodeJS.Timeout | null = null;
  const watch = () => {
    const now = performance.now();
    for (const c of open) c.watch(now, keepAliveMs, stallMs);
    if (open.size === 0 && watching) {
      clearInterval(watching);
      watching = null;
    }
  };
  server.on('connection', (socket: Socket) => {
    open.add(new Connection(socket, lane, run, buffers, counts, toNode, (c) => open.delete(c), batch));
    watching ??= setInterval(watch, watchEveryMs).unref();
  });
  return {
    closeIdle() {
      for (const c of open) if (c.closeIfIdle()) open.delete(c);
    },
    closeAll() {
      for (const c of open) c.socket.destroy();
      open.clear();
      if (watching) clearInterval(watching);
      watching = null;
    },
    get connections() {
      return open.size;
    },
    get answered() {
      return counts.answered;
    },
    get answeredGets() {
      return counts.answeredGets;
    },
    get handedOver() {
      return counts.handedOver;
    },
    get readPauses() {
      return counts.readPauses;
    },
    get peakHeldBytes() {
      return counts.peakHeldBytes;
    },
    get heldAnswers() {
      return counts.heldAnswers;
    },
  };
}
