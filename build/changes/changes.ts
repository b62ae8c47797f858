import { ChangeLog, CHANGES_PATH } from '../../src/contract/changes.ts';
import { LAYOUT, recordShardId, recordShardPath, type ClearanceRecord } from '../../src/contract/index.ts';
import type { SnapshotWriter } from '../write/writer.ts';
import { changeLogOf, changeSummary, diffRecords, type RecordDiff } from './diff.ts';
import { openPreviousSnapshot, type PreviousSnapshot } from './previous.ts';
import { CorruptFile } from '../../src/snapshot/index.ts';

/** This build's records against the published snapshot's, with the records as they were (for the history). */
export type Comparison = {
  previousAt: string;
  added: string[];
  removed: ClearanceRecord[];
  changed: { before: ClearanceRecord; after: ClearanceRecord; fields: string[] }[];
};

export type ChangeLogResult = {
  log: ChangeLog;
  summary: string;
  /** The snapshot replaced, when one could be opened. */
  previous: PreviousSnapshot | null;
  /** What changed since it; null when there was none or it could not be compared with (a damaged shard). */
  comparison: Comparison | null;
};

/**
 * Writes `changes.json`: what changed between the snapshot published at `out` and `records` (kNumber ascending),
 * whose shards the writer has already been given. Shards whose sha256 is the same in both snapshots hold the same
 * records and are not read; only shards that differ, appeared or vanished are compared record by record.
 */
export async function writeChangeLog(options: {
  out: string;
  records: readonly ClearanceRecord[];
  writer: SnapshotWriter;
}): Promise<ChangeLogResult> {
  const { records, writer } = options;
  const isShard = (path: string) => /^records\/[^/]+\.json$/.test(path) && path !== LAYOUT.recordIndex;
  const nextShards = new Map(writer.files().filter((f) => isShard(f.path)).map((f) => [f.path, f.sha256]));
  const previous = await openPreviousSnapshot(options.out);

  const fresh = (): ChangeLog =>
    changeLogOf({
      previous: null,
      records: records.length,
      shards: [...nextShards.keys()].sort(),
      diffs: [{ added: records.map((r) => r.kNumber), removed: [], changed: [] }],
    });

  let log: ChangeLog;
  let comparison: Comparison | null = null;
  if (previous === null) {
    log = fresh();
  } else {
    const prevShards = new Map(previous.manifest.files.filter((f) => isShard(f.path)).map((f) => [f.path, f.sha256]));
    const differing = [...new Set([...prevShards.keys(), ...nextShards.keys()])]
      .filter((p) => prevShards.get(p) !== nextShards.get(p))
      .sort();
    if (differing.length === 0 && previous.changes !== null) {
      // Same records as the published snapshot: keep its log, so a rebuild of the same inputs changes no byte.
      log = previous.changes;
      comparison = { previousAt: previous.manifest.generatedAt, added: [], removed: [], changed: [] };
    } else {
      const byShard = shardRanges(records);
      const diffs: RecordDiff[] = [];
      const found: Comparison = { previousAt: previous.manifest.generatedAt, added: [], removed: [], changed: [] };
      try {
        for (const path of differing) {
          const before = prevShards.has(path) ? await previous.readShard(path) : [];
          const range = byShard.get(path);
          const after = range ? records.slice(range[0], range[1]) : [];
          const diff = diffRecords(before, after);
          diffs.push(diff);
          const was = new Map(before.map((r) => [r.kNumber, r]));
          const now = new Map(after.map((r) => [r.kNumber, r]));
          found.added.push(...diff.added);
          for (const k of diff.removed) found.removed.push(was.get(k) as ClearanceRecord);
          for (const c of diff.changed) found.changed.push({ before: was.get(c.kNumber) as ClearanceRecord, after: now.get(c.kNumber) as ClearanceRecord, fields: c.fields });
        }
        comparison = found;
        const m = previous.manifest;
        log = changeLogOf({
          previous: { snapshotId: m.snapshotId, sourceRevision: m.sourceRevision, generatedAt: m.generatedAt },
          records: records.length,
          shards: differing,
          diffs,
        });
      } catch (err) {
        // A damaged shard of the old snapshot: comparing with it would be wrong, comparing with nothing is safe.
        if (!(err instanceof CorruptFile)) throw err;
        log = fresh();
        comparison = null;
      }
    }
  }
  writer.writeJson(CHANGES_PATH, ChangeLog, log);
  return { log, summary: changeSummary(log), previous, comparison };
}

/** Where each shard's records sit in the sorted list: [start, end). */
function shardRanges(records: readonly ClearanceRecord[]): Map<string, [number, number]> {
  const ranges = new Map<string, [number, number]>();
  let start = 0;
  for (let i = 1; i <= records.length; i++) {
    const id = recordShardId((records[start] as ClearanceRecord).kNumber);
    if (i === records.length || recordShardId((records[i] as ClearanceRecord).kNumber) !== id) {
      ranges.set(recordShardPath(id), [start, i]);
      start = i;
    }
  }
  return ranges;
}
