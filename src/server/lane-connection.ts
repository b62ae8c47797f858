import type { Socket } from 'node:net';
import type { OperationName } from '../contract/index.ts';
import type { QueryAnswer } from '../api/query-answer.ts';
import type { BytesAnswer } from '../api/routes.ts';
import { logPath } from '../api/log.ts';
import type { Snapshot } from '../snapshot/index.ts';
import { answerBytes, lentWireBytes, withHead, wireBytes, type AnswerBuffers, type Out } from './answer-buffers.ts';
import type { Logger } from './log.ts';
import { HELD, logBug, type QueryRun } from './query-handler.ts';
import { encodeAnswer, type EncodedAnswer } from './respond.ts';
import { MAX_HEAD_BYTES, NO_PATHS, parse, type LaneRequest, type TableRequest } from './request-parser.ts';

/** What the lane is told by the server (fast-lane.ts says what the lane does). */
export type FastLane = {
  /** The snapshot serving now; read once per request. */
  current: () => Snapshot | null;
  /** Answers a request; given the lane's `allocate`, so that answers are made in the lane's buffers. */
  runner: (allocate: (size: number) => Uint8Array) => QueryRun;
  /** The answer for a thrown value (a compression that failed). */
  fail: (err: unknown, operation: string | null, snapshot: Snapshot | null) => QueryAnswer;
  logger: Logger;
  /** True once the server is stopping: answers then close their connection. */
  draining: () => boolean;
  depth: number;
  maxWaiting: number;
  onRefused: (socket: Socket) => void;
  maxBodyBytes: number;
  /**
   * Bytes a connection's requests not yet answered and its unparsed bytes may hold before the lane stops reading it;
   * and bytes of its answers not yet taken by the kernel past which its next answers wait to be made.
   */
  bufferBytes: number;
  requestTimeoutMs: number;
  /** Paths whose GET and HEAD the lane answers too (with `answerRoute`, each with no body); none when absent. */
  getPaths?: ReadonlySet<string>;
  /** Paths whose POST the lane answers too (with `answerRoute`, with its body); none when absent. */
  postPaths?: ReadonlySet<string>;
  /**
   * The answer of a route of the table by its handler, run by the dispatcher as for Node's route (a failure is already
   * its error answer), and the snapshot it started on; `body` is a POST's, and `socket` the connection whose turn its
   * work waits for, and `allocate` the lane's memory a POST's answer may be made in. The lane encodes it as Node's
   * route does (`encodeAnswer`).
   */
  answerRoute?: (
    request: TableRequest,
    body: Uint8Array,
    socket: Socket,
    allocate: (size: number) => Uint8Array,
  ) => Promise<{ snapshot: Snapshot | null; answer: BytesAnswer }>;
};

/** How long a request cut between two reads may wait for its rest before Node's parser (and its timeouts) take it. */
const PARTIAL_WAIT_MS = 100;

/** What Node's HTTP server writes for a request it cannot read (its `badRequestResponse`). */
const BAD_REQUEST = Buffer.from('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n', 'latin1');

/** Bytes a waiting request keeps alive: the buffer its body is a view of, or a GET's URL. */
function heldBy(request: LaneRequest): number {
  return request.route === null || request.route.method === 'POST' ? request.body.buffer.byteLength : request.route.url.length;
}


/** An answer at least this large is written with the others of its tick (WriteBatch); a smaller one at once. */
export const BATCHED_ANSWER_BYTES = 32 * 1024;
/** Connections whose large answers are written at once when this many wait: the lane keeps 8 buffers of 128 KiB. */
const BATCH_CONNECTIONS = 8;

/**
 * Large answers (a catalog page, a search page of many records) are written together at the end of the tick that made them,
 * or as soon as BATCH_CONNECTIONS connections have one waiting, rather than each as soon as it is made. Written one
 * by one, far apart, each answer finds the client asleep and pays for the kernel waking it (sock_def_readable).
 * Written in a burst, the client is woken once and reads the rest awake. Small answers go at once: held for the tick,
 * they leave the client idle while the server works; at a few microseconds each, they keep it awake anyway.
 */
export class WriteBatch {
  private readonly ready = new Set<Connection>();
  private scheduled = false;

  add(connection: Connection): void {
    this.ready.add(connection);
    if (this.ready.size >= BATCH_CONNECTIONS) this.write();
    else if (!this.scheduled) {
      this.scheduled = true;
      // After the microtasks of the tick: the turn of request work that made this answer runs as one chain of them.
      process.nextTick(this.write);
    }
  }

  private readonly write = (): void => {
    this.scheduled = false;
    for (const connection of this.ready) {
      this.ready.delete(connection);
      connection.flush();
    }
  };
}

type Slot = {
  request: LaneRequest;
  /** Bytes its body keeps alive until its answer is made (0 after). */
  bytes: number;
  /**
   * Its turn came while the answers ahead of it passed the budget ('held'): it runs again ('again', until its turn
   * comes) once they have gone out.
   */
  held: 'no' | 'held' | 'again';
  snapshot: Snapshot | null;
  started: number;
  operation: OperationName | null;
  out: (Out & { status: number }) | null;
};

/** A started request's body once its answer is made: nothing of the bytes it was read with stays alive. */
const SPENT = Buffer.alloc(0);

/** One connection on the lane. */
export class Connection {
  private buf: Buffer | null = null;
  private readonly waiting: LaneRequest[] = [];
  /** Bytes the waiting requests' bodies keep alive (the buffers they are views of), and whether reading stopped. */
  private waitingBytes = 0;
  private readPaused = false;
  /** Bytes the bodies of started requests keep alive until their answers are made. */
  private startedBytes = 0;
  private awaitingDrain = false;
  /** Started and not yet written, in the order of their requests. */
  private readonly slots: Slot[] = [];
  private handingOver = false;
  private partialTimer: NodeJS.Timeout | null = null;
  private ended = false;
  /** The client ended with part of a request unsent. */
  private cutShort = false;
  private closing = false;
  /** When the lane's watch first saw the connection idle (-1: not idle since it last looked, or busy since). */
  private idleSince = -1;
  /** Bytes moved either way when the watch last saw them change (-1: busy since), and when that was. */
  private moved = -1;
  private movedAt = 0;
  /** The paths of the GETs and of the table's POSTs answered here. */
  private readonly getPaths: ReadonlySet<string>;
  private readonly postPaths: ReadonlySet<string>;

  constructor(
    readonly socket: Socket,
    private readonly lane: FastLane,
    private readonly run: QueryRun,
    private readonly buffers: AnswerBuffers,
    private readonly counts: Counts,
    private readonly toNode: (socket: Socket) => void,
    private readonly forget: (c: Connection) => void,
    private readonly batch: WriteBatch,
  ) {
    this.getPaths = lane.answerRoute ? (lane.getPaths ?? NO_PATHS) : NO_PATHS;
    this.postPaths = lane.answerRoute ? (lane.postPaths ?? NO_PATHS) : NO_PATHS;
    socket.on('data', this.onData);
    socket.on('end', this.onEnd);
    socket.on('error', noop);
    socket.once('close', this.onClose);
    socket.setNoDelay(true);
  }

  get idle(): boolean {
    return this.slots.length === 0 && this.waiting.length === 0 && this.buf === null && this.socket.writableLength === 0;
  }

  private readonly onData = (chunk: Buffer): void => {
    this.buf = this.buf === null ? chunk : Buffer.concat([this.buf, chunk]);
    this.parseAll();
    // What is left is part of a request: kept in a buffer of its own rather than as a view of a larger one.
    const buf = this.buf;
    if (buf !== null && buf.buffer.byteLength > buf.length && !this.handingOver) this.buf = own(buf);
    const held = this.held();
    if (held > this.counts.peakHeldBytes) this.counts.peakHeldBytes = held;
    // Started and waiting requests are always answered in time (or the connection is closed), so a connection stopped
    // here is read again; unparsed bytes alone never stop it: they are at most one request.
    if (held > this.lane.bufferBytes && (this.waiting.length > 0 || this.slots.length > 0) && !this.readPaused && !this.handingOver && !this.socket.destroyed) {
      this.readPaused = true;
      this.counts.readPauses++;
      this.socket.pause();
      // A request cut by the pause is not slow: its client was told to wait.
      if (this.partialTimer) {
        clearTimeout(this.partialTimer);
        this.partialTimer = null;
      }
    }
  };

  /** Bytes this connection holds for requests not answered yet: their bodies, started or waiting, and what is not parsed yet. */
  private held(): number {
    return this.startedBytes + this.waitingBytes + (this.buf === null ? 0 : this.buf.buffer.byteLength);
  }

  /** Reads the connection again once what it holds is back within the budget. */
  private resumeReading(): void {
    if (!this.readPaused || this.handingOver || this.socket.destroyed || this.held() > this.lane.bufferBytes) return;
    this.readPaused = false;
    this.socket.resume();
    // A request cut by the pause gets its moment for its rest from now.
    if (this.buf !== null) this.partialTimer ??= setTimeout(() => this.handOver(), PARTIAL_WAIT_MS);
  }

  private parseAll(): void {
    while (this.buf !== null && !this.handingOver && !this.socket.destroyed) {
      const parsed = parse(this.buf, this.lane.maxBodyBytes, this.getPaths, this.postPaths);
      if (parsed === 'node') return this.handOver();
      if (parsed === 'more') {
        // A request cut between two reads usually has its rest in the next one; a client that takes longer is slow
        // or hostile, and Node's parser, with its header and request timeouts, takes it from here.
        this.partialTimer ??= setTimeout(() => this.handOver(), PARTIAL_WAIT_MS);
        this.markBusy();
        return;
      }
      if (this.partialTimer) {
        clearTimeout(this.partialTimer);
        this.partialTimer = null;
      }
      this.buf = parsed.used === this.buf.length ? null : this.buf.subarray(parsed.used);
      this.take(parsed.request);
    }
  }

  private take(request: LaneRequest): void {
    if (this.closing) return;
    if (request.close) this.closing = true;
    this.markBusy();
    // A request read whole in one piece is a view of that piece, head and all, and is used as it is; one cut out
    // of bytes read together with others is copied, so that its answer's wait does not keep them all alive.
    const copied = request.body.buffer.byteLength > request.body.length + MAX_HEAD_BYTES;
    if (this.waiting.length === 0 && this.canStart(copied ? request.body.length : heldBy(request))) {
      if (copied) request.body = own(request.body);
      this.start(request);
    } else if (this.waiting.length < this.lane.maxWaiting) {
      // A body read with other requests' bytes is a view of them all: copied, it keeps only its own alive.
      if (request.body.buffer.byteLength > request.body.length) request.body = own(request.body);
      this.waiting.push(request);
      this.waitingBytes += heldBy(request);
    } else {
      this.waiting.length = 0;
      this.waitingBytes = 0;
      this.buf = null;
      this.socket.destroy();
      this.lane.onRefused(this.socket);
    }
  }

  /**
   * Whether a request whose body keeps `bytes` alive may start now: fewer than `depth` are under way, the socket has
   * room, and the bodies of those under way stay within `bufferBytes` (one request always may).
   */
  private canStart(bytes: number): boolean {
    if (this.slots.length >= this.lane.depth || this.socket.writableNeedDrain || this.socket.destroyed) return false;
    return this.slots.length === 0 || this.startedBytes + bytes <= this.lane.bufferBytes;
  }

  private start(request: LaneRequest): void {
    const bytes = heldBy(request);
    this.startedBytes += bytes;
    if (request.route !== null) return this.startRoute(request, request.route, bytes);
    const slot: Slot = { request, bytes, held: 'no', snapshot: this.lane.current(), started: performance.now(), operation: null, out: null };
    this.slots.push(slot);
    this.runSlot(slot);
  }

  /**
   * Whether `slot`'s answer must wait to be made: the answers ahead of it, made and not yet taken by the kernel, pass
   * `bufferBytes`, or one ahead of it was held and is not made yet (its turn, taken again, may come after this one's).
   * A client that does not read its answers then holds at most about one answer in the server's memory (the one the
   * kernel had no room for) instead of one for each request under way; the rest are made as it reads.
   */
  private mustWait(slot: Slot): boolean {
    let ahead = this.socket.writableLength;
    for (const s of this.slots) {
      if (s === slot) break;
      if (s.held !== 'no') return true;
      if (s.out !== null) ahead += s.out.bytes.length;
    }
    return ahead >= this.lane.bufferBytes;
  }

  /** Asked as `slot`'s turn comes: whether its answer waits (it is then held), else it is made now. */
  private holds(slot: Slot): boolean {
    if (this.mustWait(slot)) return true;
    slot.held = 'no';
    return false;
  }

  private runSlot(slot: Slot): void {
    const request = slot.request;
    void this
      .run(slot.snapshot, request.body, request.contentType, this.socket, (operation) => (slot.operation = operation), () => this.holds(slot))
      .then((answer) => {
        if (answer === HELD) return this.hold(slot);
        this.startedBytes -= slot.bytes;
        slot.bytes = 0;
        request.body = SPENT;
        return answer === null ? undefined : this.finish(slot, answer, slot.snapshot);
      })
      .catch((err: unknown) => {
        // Nothing above throws by design; if something did, the connection cannot be answered in order any more.
        this.lane.logger.error('internal error', { method: 'POST', path: '/v1/query', stack: err instanceof Error ? err.stack : String(err) });
        this.socket.destroy();
      });
  }

  /**
   * A request of a route of the table (a GET or HEAD, a POST to /mcp): its route's answer, encoded as Node's route
   * encodes it, in one write. A failure (the handler threw, or compressing failed) becomes the error Node's route
   * sends for it.
   */
  private startRoute(request: LaneRequest, get: TableRequest, bytes: number): void {
    // Its answer is made at once (never held): a GET's is a kept answer's shared pieces or a small error, a POST's is
    // within the MCP byte budget; what the request holds (a GET's URL, a POST's body) counts until then.
    const slot: Slot = { request, bytes, held: 'no', snapshot: null, started: performance.now(), operation: null, out: null };
    this.slots.push(slot);
    const lane = this.lane;
    const made = async (): Promise<{ out: Out; status: number }> => {
      const buffers = this.buffers;
      const { snapshot, answer } = await lane.answerRoute!(get, request.body, this.socket, buffers.allocate);
      let status = answer.status;
      let encoded: EncodedAnswer;
      // An answer made in the lane's memory (a kept MCP result) goes out from there, its head written before it.
      const lent = answer.body instanceof Uint8Array && buffers.owns(answer.body) ? answer.body : null;
      try {
        encoded = await encodeAnswer(answer.body, answer.headers ?? {}, request.acceptEncoding);
      } catch (err) {
        // Only compressing can fail here: the answer becomes the error it is, as on Node's route.
        const failure = lane.fail(err, answer.operation ?? null, snapshot);
        logBug(lane.logger, failure, get.method, get.path);
        encoded = await encodeAnswer(failure.body, failure.headers, request.acceptEncoding);
        status = failure.status;
      }
      const close = request.close || lane.draining();
      if (lent !== null && encoded.pieces.length === 1 && encoded.pieces[0] === lent && get.method !== 'HEAD') return { out: lentWireBytes(status, encoded, close, buffers), status };
      // Compressed (new bytes), or not sent: the lent memory is free.
      if (lent !== null) buffers.release(lent.buffer);
      return { out: wireBytes(status, encoded, close, get.method === 'HEAD'), status };
    };
    made().then(
      ({ out, status }) => {
        this.startedBytes -= slot.bytes;
        slot.bytes = 0;
        request.body = SPENT;
        this.ready(slot, out, status);
      },
      (err: unknown) => {
        // An error answer that could not be made: nothing is left to answer in order with, as on the POST path.
        lane.logger.error('internal error', { method: get.method, path: get.path, stack: err instanceof Error ? err.stack : String(err) });
        this.socket.destroy();
      },
    );
  }

  private finish(slot: Slot, answer: QueryAnswer, snapshot: Snapshot | null): void | Promise<void> {
    logBug(this.lane.logger, answer, 'POST', '/v1/query');
    const close = slot.request.close || this.lane.draining();
    const out = answerBytes(slot.request.acceptEncoding, answer, close, this.buffers);
    if (!(out instanceof Promise)) return this.ready(slot, out, answer.status);
    return out.then(
      (made) => this.ready(slot, made, answer.status),
      (err: unknown) => {
        // An answer that could not be compressed becomes the error it is, sent as it is.
        const failed = this.lane.fail(err, answer.operation, snapshot);
        logBug(this.lane.logger, failed, 'POST', '/v1/query');
        this.ready(slot, withHead(failed, failed.body, 'identity', close, this.buffers), failed.status);
      },
    );
  }

  private hold(slot: Slot): void {
    slot.held = 'held';
    this.counts.heldAnswers++;
    this.wakeHeld();
  }

  /**
   * Runs again, in order, the held requests whose answers ahead have gone out. Those ahead of a held one wait longer
   * than it, so the first that must still wait ends the look; it is looked at again when the socket drains or the
   * answers ahead of it are written.
   */
  private wakeHeld(): void {
    if (this.socket.destroyed) return;
    let first = true;
    for (const slot of this.slots) {
      if (slot.held === 'no') continue;
      if (slot.held === 'again') return;
      // Only the first held one can go: those after it wait for its answer.
      if (!first || this.mustWait(slot)) {
        if (this.socket.writableNeedDrain) this.waitDrain();
        return;
      }
      first = false;
      slot.held = 'again';
      this.runSlot(slot);
    }
  }

  private waitDrain(): void {
    if (this.awaitingDrain) return;
    this.awaitingDrain = true;
    this.socket.once('drain', this.onDrain);
  }

  private readonly onDrain = (): void => {
    this.awaitingDrain = false;
    this.pump();
  };

  private ready(slot: Slot, out: Out, status: number): void {
    slot.out = { ...out, status };
    if (out.size >= BATCHED_ANSWER_BYTES) this.batch.add(this);
    else this.flush();
  }

  /** Writes the answers that are ready, in order, and starts the requests waiting when the socket has room. */
  flush(): void {
    const socket = this.socket;
    while (this.slots.length > 0 && this.slots[0]!.out !== null) {
      const slot = this.slots.shift()!;
      const out = slot.out!;
      const aborted = socket.destroyed;
      if (!aborted) {
        this.counts.answered++;
        if (slot.request.route !== null && slot.request.route.method !== 'POST') this.counts.answeredGets++;
        // A lent buffer comes back at once when the kernel took all of it. A large answer often waits in the stream
        // for part of it (a burst of catalog pages fills the socket's buffer): its buffer comes back when the rest has
        // gone, or the write failed, instead of being left to the collector while the next answer takes a new one. A
        // small answer seldom waits, and a callback for each would cost them all.
        if (out.lent !== null && out.bytes.length >= BATCHED_ANSWER_BYTES) {
          const giveBack = this.buffers.giveBackOnce(out.lent);
          socket.write(out.bytes, giveBack);
          if (socket.writableLength === 0) giveBack();
        } else if (out.pieces) {
          // Corked, the head and the pieces leave in one writev.
          socket.cork();
          socket.write(out.bytes);
          for (const piece of out.pieces) socket.write(piece);
          socket.uncork();
        } else {
          socket.write(out.bytes);
          if (out.lent !== null && socket.writableLength === 0) this.buffers.release(out.lent);
        }
      }
      this.lane.logger.request({
        method: slot.request.route?.method ?? 'POST',
        path: slot.request.route ? logPath(slot.request.route.path) : '/v1/query',
        operation: slot.operation,
        status: out.status,
        ms: Math.round((performance.now() - slot.started) * 100) / 100,
        ...(aborted && { aborted: true as const }),
      });
      if (out.close) {
        this.waiting.length = 0;
        this.waitingBytes = 0;
        this.slots.length = 0;
        this.buf = null;
        this.handingOver = false;
        socket.end();
        return;
      }
    }
    if (socket.destroyed) return;
    if (socket.writableNeedDrain) {
      this.waitDrain();
      return;
    }
    this.pump();
  }

  private pump(): void {
    this.wakeHeld();
    while (this.waiting.length > 0 && this.canStart(heldBy(this.waiting[0]!))) {
      const request = this.waiting.shift()!;
      this.waitingBytes -= heldBy(request);
      this.start(request);
    }
    this.resumeReading();
    if (this.slots.length > 0 || this.waiting.length > 0) return;
    if (this.handingOver) return this.handOverNow();
    if (this.ended) {
      this.endNow();
      return;
    }
  }

  /** Node's parser takes the connection once the answers under way here are written. */
  private handOver(): void {
    if (this.partialTimer) {
      clearTimeout(this.partialTimer);
      this.partialTimer = null;
    }
    if (this.handingOver || this.socket.destroyed) return;
    this.handingOver = true;
    this.socket.pause();
    if (this.slots.length === 0 && this.waiting.length === 0) this.handOverNow();
  }

  private handOverNow(): void {
    const socket = this.socket;
    socket.off('data', this.onData);
    socket.off('end', this.onEnd);
    socket.off('error', noop);
    socket.off('close', this.onClose);
    socket.off('drain', this.onDrain);
    this.forget(this);
    if (this.buf !== null) socket.unshift(this.buf);
    this.buf = null;
    this.counts.handedOver++;
    this.toNode(socket);
    // Node's parser reads what was given back once the socket flows again.
    process.nextTick(() => socket.resume());
  }

  /** The client is done sending: what it asked is answered, then the connection ends (Node's HTTP server does so too). */
  private readonly onEnd = (): void => {
    this.ended = true;
    if (this.buf !== null && !this.handingOver) {
      // A request the client will never finish. Its bytes cannot go to Node's parser now (a socket's end, once read,
      // is not read again), so the lane does what that parser does when told of the end: a 400 if nothing was
      // written on the connection yet, and the connection closed.
      if (this.partialTimer) {
        clearTimeout(this.partialTimer);
        this.partialTimer = null;
      }
      this.buf = null;
      this.cutShort = true;
    }
    if (this.slots.length === 0 && this.waiting.length === 0 && !this.handingOver) this.endNow();
  };

  /** Ends a connection whose client is done sending, once its answers are written. */
  private endNow(): void {
    if (this.cutShort && this.socket.bytesWritten === 0) this.socket.end(BAD_REQUEST);
    else this.socket.end();
  }

  /** A request came or is coming: the idle and stall clocks start again (two stores, no timer to re-arm per request). */
  private markBusy(): void {
    this.idleSince = -1;
    this.moved = -1;
  }

  /**
   * The lane's look at the connection, every `watchEveryMs`: closes it when it has been idle for `keepAliveMs` (as
   * Node closes a keep-alive connection), or when it is busy and no byte has moved either way for `stallMs` (a client
   * that stopped reading its answers, as http-server.ts closes it). Clocks kept by a look every so often rather than a
   * socket timeout re-armed between busy and idle on every request: that was 2% of a small answer's time.
   */
  watch(now: number, keepAliveMs: number, stallMs: number): void {
    const socket = this.socket;
    if (this.idle) {
      this.moved = -1;
      if (this.idleSince < 0) this.idleSince = now;
      else if (now - this.idleSince >= keepAliveMs) socket.destroy();
      return;
    }
    this.idleSince = -1;
    const moved = socket.bytesRead + socket.bytesWritten;
    if (moved !== this.moved) {
      this.moved = moved;
      this.movedAt = now;
    } else if (now - this.movedAt >= stallMs) socket.destroy();
  }

  private readonly onClose = (): void => {
    if (this.partialTimer) clearTimeout(this.partialTimer);
    this.waiting.length = 0;
    this.waitingBytes = 0;
    this.buf = null;
    this.forget(this);
  };

  /** Closes the connection when it has nothing in flight; true when it did. */
  closeIfIdle(): boolean {
    if (!this.idle) return false;
    this.socket.destroy();
    return true;
  }
}

function noop(): void {}

export type Counts = { answered: number; answeredGets: number; handedOver: number; readPauses: number; peakHeldBytes: number; heldAnswers: number };

/** A copy of `bytes` in an ArrayBuffer of its own (not one of Node's shared pools, which a small copy would use). */
function own(bytes: Buffer): Buffer {
  const copy = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(copy);
  return copy;
}
