import { join } from 'node:path';
import type { ClearanceRecord } from '../../src/contract/index.ts';
import { compareSearch, type SearchFigures } from './compare-search.ts';
import { measureExport } from './measure-export.ts';
import { evictFromPageCache } from './page-cache.ts';
import { makeComparableQueries } from './queries.ts';
import { startServer } from './server.ts';

/**
 * The search extensions at one size (issue 12's targets): the engine's p50 and p99 on qualifier and sorted queries
 * against SQLite FTS5 on the same queries (answers compared), and the export's throughput and the server's memory
 * growth, as NDJSON and as CSV, each from a freshly started server (no record shard checked or cached yet): first with
 * the snapshot's record files dropped from the page cache ("cold", read from the disk), then with them in it ("warm",
 * as on a server that exported or served them before).
 */
export type ExportFigures = {
  format: 'ndjson' | 'csv';
  /** Whether the record files were read from the disk (cold) or from the page cache (warm). */
  pageCache: 'cold' | 'warm';
  records: number;
  bytes: number;
  seconds: number;
  recordsPerSecond: number;
  rssBeforeBytes: number;
  rssGrowthBytes: number;
};

export type ExtensionFigures = {
  search: SearchFigures | null;
  exports: ExportFigures[];
};

/** The targets, checked by the report at 1,000,000 records. */
export const EXTENSION_TARGETS = { engineP99Ms: 10, exportRecords: 100_000, exportRecordsPerSecond: 50_000, exportRssGrowthBytes: 50 * 1024 * 1024 };

type Options = {
  root: string;
  snapshotPath: string;
  snapshotDir: string;
  snapshotId: string;
  workDir: string;
  tmp: string;
  records: ClearanceRecord[];
  queries: number;
  rounds: number;
  /** The export's formats measured (both when absent). */
  exportFormats?: readonly ('ndjson' | 'csv')[];
  log: (line: string) => void;
};

export async function measureExtensions(o: Options): Promise<ExtensionFigures> {
  const queries = makeComparableQueries(o.records, o.queries, 510);
  o.log(`qualifier and sorted queries, ours against SQLite FTS5 (${queries.length} queries)`);
  const search = await compareSearch({
    root: o.root,
    snapshotDir: o.snapshotDir,
    snapshotId: o.snapshotId,
    workDir: o.workDir,
    tmp: o.tmp,
    queries,
    rounds: o.rounds,
    roundTimeoutMs: 10 * 60_000,
    buildTimeoutMs: 30 * 60_000,
    log: o.log,
  });
  const exports: ExportFigures[] = [];
  for (const format of o.exportFormats ?? (['ndjson', 'csv'] as const)) {
    for (const pageCache of ['cold', 'warm'] as const) {
      o.log(`export of up to ${EXTENSION_TARGETS.exportRecords.toLocaleString('en-US')} records as ${format}, ${pageCache}`);
      const server = await startServer(o.root, o.snapshotPath, o.tmp);
      try {
        // The search index loads on first use: load it first, so the figure is the export's own.
        const first = await fetch(`${server.url}/v1/export?limit=1&format=${format}`);
        await first.arrayBuffer();
        if (first.status !== 200) throw new Error(`the export answered ${first.status}`);
        if (pageCache === 'cold' && !evictFromPageCache(join(o.snapshotPath, 'records'))) {
          o.log('the record files cannot be dropped from the page cache here: no cold figure');
          continue;
        }
        await new Promise((r) => setTimeout(r, 500));
        const m = await measureExport(server.url, server.pid, { format, limit: EXTENSION_TARGETS.exportRecords });
        exports.push({
          format,
          pageCache,
          records: m.records,
          bytes: m.bytes,
          seconds: m.seconds,
          recordsPerSecond: m.recordsPerSecond,
          rssBeforeBytes: m.rssBefore,
          rssGrowthBytes: m.rssGrowth,
        });
      } finally {
        await server.stop();
      }
    }
  }
  return { search, exports };
}
