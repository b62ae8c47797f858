import { once } from 'node:events';
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
      const answer = await answerExport(req.url ?? '', snapshot);
      res.writeHead(200, answer.headers);
      if (req.method === 'HEAD') {
        res.end();
        return;
      }
      for await (const chunk of answer.chunks) {
        if (res.destroyed) return;
        if (!res.write(chunk)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
      }
      res.end();
    } catch (err) {
      await deps.fail(req, res, err, snapshot);
    }
  };
}
