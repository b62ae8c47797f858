import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerExport } from '../api/export.ts';
import type { Snapshot } from '../snapshot/index.ts';

export { exportInputOf } from '../api/export.ts';

export type ExportDeps = {
  current: () => Snapshot | null;
  fail: (req: IncomingMessage, res: ServerResponse, err: unknown, snapshot?: Snapshot | null) => Promise<void> | void;
};

/**
 * GET /v1/export on Node (src/api/export.ts says what it answers): every match of a search, streamed as CSV or NDJSON
 * with back-pressure (a slow reader holds one batch, never the set). An error before the first byte is the usual
 * JSON error; after it, the connection is cut, so a truncated file never looks complete.
 */
export function exportHandler(deps: ExportDeps) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const snapshot = deps.current();
    try {
      const answer = await answerExport(req.url ?? '', snapshot, { lend: true });
      res.writeHead(200, answer.headers);
      if (req.method === 'HEAD') {
        res.end();
        return;
      }
      // Chunks are lent (src/operations/export.ts): the next reuses the memory of the one before, so each is handed
      // to the kernel (the write's callback) before the next is asked for.
      const closed = new Promise((resolve) => res.once('close', resolve));
      for await (const chunk of answer.chunks) {
        if (res.destroyed) return;
        await Promise.race([new Promise((resolve) => res.write(chunk, resolve)), closed]);
      }
      res.end();
    } catch (err) {
      await deps.fail(req, res, err, snapshot);
    }
  };
}
