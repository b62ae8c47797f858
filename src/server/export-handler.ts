import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerExport } from '../api/export-answer.ts';
import { ApiError } from '../api/errors.ts';
import { pickEncoding } from '../api/media.ts';
import type { CursorCodec } from '../operations/cursor.ts';
import type { ExportTables } from '../operations/export-tables.ts';
import type { Snapshot } from '../snapshot/index.ts';
import type { ExportSlots } from './export-slots.ts';
import { newExportFlow, pumpExport, type ExportFlow } from './export-stream.ts';
import type { Turns } from './turns.ts';

export { exportInputOf } from '../api/export-answer.ts';

/** Seconds a client refused for want of a slot is told to wait (Retry-After): about one export of the bundled data. */
export const EXPORT_RETRY_AFTER_S = 5;

export type ExportDeps = {
  current: () => Snapshot | null;
  /** Where the export's preparation and each slice of a batch's reads and rows wait for their turn of the event loop. */
  turns: Turns;
  slots: ExportSlots;
  cursors: CursorCodec;
  tables: ExportTables;
  /** Told of each export's flow when it starts (tests and measurements watch what it holds). */
  onFlow?: (flow: ExportFlow) => void;
  /** Records a batch (tests: a small fixture then spans several batches). */
  batchSize?: number;
};

/**
 * GET /v1/export on Node (src/api/export-answer.ts says what it answers): every match of a search, streamed as CSV or NDJSON,
 * compressed with br or gzip when the client accepts one (as JSON answers are), with back-pressure (export-stream.ts).
 * An error before the first byte is the usual JSON error; after it, the connection is cut, so a truncated file never
 * looks complete.
 *
 * Bounds: at most `slots.limit` exports at once (then 503 `overloaded` with Retry-After); the preparation (the search
 * and its order) and every batch, a slice of its reads or rows at a time, run in the connection's turns of the event
 * loop (turns.ts), so exports share the loop with other requests (a read from a local disk is synchronous); a client
 * that stops reading holds its slot until the connection's stall limit cuts it (REQUEST_TIMEOUT_MS: no byte moved
 * either way for that long, http-server.ts), which frees the slot.
 */
export function exportHandler(deps: ExportDeps) {
  /** `fail`: the error answer for a thrown value (the dispatcher's), or the cut connection once the headers are out. */
  return async (req: IncomingMessage, res: ServerResponse, fail: (err: unknown, snapshot: Snapshot | null) => Promise<void>): Promise<void> => {
    const snapshot = deps.current();
    const release = deps.slots.tryTake();
    if (release === null) {
      const message = `This server streams at most ${deps.slots.limit} exports at once and all are in use; try again in ${EXPORT_RETRY_AFTER_S} seconds.`;
      await fail(new ApiError('overloaded', message, { headers: { 'Retry-After': String(EXPORT_RETRY_AFTER_S) } }), snapshot);
      return;
    }
    const owner = req.socket;
    let chunks: AsyncIterator<Uint8Array> | null = null;
    try {
      // Each slice of a batch (its reads, its rows) waits for the connection's turn.
      const turn = () => deps.turns.run(owner, () => Promise.resolve());
      const options = { lend: true, turn, cursors: deps.cursors, tables: deps.tables, ...(deps.batchSize ? { batchSize: deps.batchSize } : {}) };
      const answer = await deps.turns.run(owner, (pause) => answerExport(req.url ?? '', snapshot, { ...options, pause }));
      const encoding = pickEncoding(req.headers['accept-encoding']);
      const headers: Record<string, string> = { ...answer.headers, Vary: 'Accept-Encoding' };
      if (encoding !== 'identity') headers['Content-Encoding'] = encoding;
      res.writeHead(200, headers);
      if (req.method === 'HEAD') {
        res.end();
        return;
      }
      const flow = newExportFlow();
      deps.onFlow?.(flow);
      const iterator = answer.chunks[Symbol.asyncIterator]();
      chunks = iterator;
      await pumpExport(() => iterator.next(), res, encoding, flow);
    } catch (err) {
      await fail(err, snapshot);
    } finally {
      release();
      // Lets the export's generator go (its buffers) when the client left before the end.
      await chunks?.return?.(undefined).catch(() => undefined);
    }
  };
}
