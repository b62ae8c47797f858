import type { ServerResponse } from 'node:http';
import type { HostRoutes } from '../api/dispatch.ts';
import { ApiError } from '../api/errors.ts';
import type { SnapshotSource } from '../node/index.ts';
import { exportHandler, type ExportDeps } from './export-handler.ts';
import type { QueryDeps } from './query-handler.ts';
import { snapshotFile } from './static.ts';

export type HostRouteOptions = {
  deps: QueryDeps;
  snapshots: SnapshotSource;
  fileMemoryMaxBytes: number;
  /** GET /v1/export's bounds: its slots and the record table cache its exports share (export-handler.ts). */
  exports: Pick<ExportDeps, 'slots' | 'tables' | 'onFlow' | 'batchSize'>;
};

/**
 * Node's own code for the routes of the table that a host answers its own way: the snapshot's files, read from the
 * snapshot's folder and checked as they are sent (static.ts), and the export, whose stream Node bounds (a slot per
 * export, batches in the connection's turn, compression as the client accepts; export-handler.ts). The Worker runs
 * the table's export handler, and its platform bounds each request.
 */
export function nodeRoutes(options: HostRouteOptions): HostRoutes<ServerResponse, void> {
  const { deps, snapshots } = options;
  const exportAll = exportHandler({ current: () => snapshots.current, turns: deps.turns, cursors: deps.cursors, ...options.exports });
  return {
    export: (res, _rest, tools) => exportAll(res.req, res, (err, snapshot) => tools.fail(err, snapshot)),
    'snapshot-files': (res, rest, tools) => {
      const snapshot = snapshots.current;
      if (!snapshot) return tools.fail(new ApiError('source_unavailable', 'No valid snapshot is loaded; try again once one has been published.'), null);
      snapshotFile(
        snapshot,
        rest,
        res.req,
        res,
        () => void tools.notFound(snapshots.current),
        (err) => void tools.fail(err, snapshot),
        options.fileMemoryMaxBytes,
      );
    },
  };
}
