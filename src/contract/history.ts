import { z } from 'zod';

/**
 * The change history a snapshot carries forward from the snapshots before it (`history/`). Each build reads the
 * history of the snapshot it replaces, keeps what verifies, drops change sets older than its keep window, and appends
 * its own change set when its records differ. Files, all listed in the manifest with their sha256:
 *
 * - `history/index.json`: the kept change sets (time and counts) and how far back the history is complete.
 * - `history/records.json`: when each record was first seen and last changed, for the records whose dates are not
 *   the baseline's. A record not named there was in the baseline (the first build) and never changed since: at
 *   1,000,000 records the file holds only the records added or changed after the baseline, a few bytes each.
 * - `history/changes/<YYYY-MM>.ndjson`: the change sets of one month, one per line, oldest first. One file a month
 *   keeps the file count of a year's history at 13 or 14, whatever the number of builds.
 */
export const HISTORY_SCHEMA_VERSION = 1;
export const HISTORY_INDEX_PATH = 'history/index.json';
export const HISTORY_RECORDS_PATH = 'history/records.json';
/** Change sets older than this many days are dropped by the next build (the build's `historyDays` option). */
export const DEFAULT_HISTORY_DAYS = 400;

export function historyMonthPath(at: string): string {
  return `history/changes/${at.slice(0, 7)}.ndjson`;
}

const KNumber = z.string().regex(/^K\d{6}$/);
const Time = z.iso.datetime();

export const CHANGE_KINDS = ['added', 'changed', 'removed'] as const;
export const ChangeKind = z.enum(CHANGE_KINDS);
export type ChangeKind = z.infer<typeof ChangeKind>;

/** What a removed record was, so a feed of removals can name it after the record has left the snapshot. */
export const RemovedRecord = z.strictObject({
  deviceName: z.string(),
  applicant: z.string().nullable(),
  productCode: z.string().nullable(),
  decisionDate: z.string().nullable(),
  decisionDescription: z.string().nullable(),
  advisoryCommittee: z.string().nullable(),
});
export type RemovedRecord = z.infer<typeof RemovedRecord>;

export const HistoryChange = z.strictObject({
  kNumber: KNumber,
  kind: ChangeKind,
  /** The record members that changed (changed), in the record's member order; empty for added and removed. */
  fields: z.array(z.string()),
  /** Each changed member's value before and after (changed only). */
  values: z.record(z.string(), z.strictObject({ from: z.unknown(), to: z.unknown() })).optional(),
  /** The record as it was (removed only). */
  was: RemovedRecord.optional(),
});
export type HistoryChange = z.infer<typeof HistoryChange>;

export const ChangeSet = z.strictObject({
  /** The build's generation time. */
  at: Time,
  /** The generation time of the snapshot this build compared with; null for a baseline. */
  previousAt: Time.nullable(),
  /**
   * A baseline records that the data starts here (the first build, or a build that could not compare with the
   * snapshot before it): its records are not listed as added.
   */
  baseline: z.boolean(),
  records: z.int().min(0),
  counts: z.strictObject({ added: z.int().min(0), changed: z.int().min(0), removed: z.int().min(0) }),
  /** In K number order. */
  changes: z.array(HistoryChange),
});
export type ChangeSet = z.infer<typeof ChangeSet>;

export const HistoryIndex = z.strictObject({
  schemaVersion: z.literal(HISTORY_SCHEMA_VERSION),
  keepDays: z.int().min(1),
  /** Every change after this time is in the kept change sets (changes before it were dropped or never recorded). */
  completeSince: Time,
  /** When the data's baseline was taken: a record not named in records.json was first seen then. */
  baselineAt: Time,
  sets: z.array(
    z.strictObject({
      at: Time,
      baseline: z.boolean(),
      path: z.string(),
      counts: ChangeSet.shape.counts,
    }),
  ),
  /** What this build could not carry forward from the history before it (damaged files), in plain words. */
  dropped: z.array(z.string()),
});
export type HistoryIndex = z.infer<typeof HistoryIndex>;

/** K numbers grouped by time: compact, and each K number appears at most once in each map. */
const ByTime = z.record(Time, z.array(KNumber));

export const HistoryRecords = z.strictObject({
  firstSeen: ByTime,
  lastChanged: ByTime,
});
export type HistoryRecords = z.infer<typeof HistoryRecords>;
