import { z } from 'zod';
import { Sha256Hex } from './snapshot.ts';

/**
 * `.sync/state.json`, written by the nightly sync and read by the server for `sourceState`. The server reads
 * lastAttemptAt, lastSuccessfulSyncAt and lastFailure only; the rest is the sync's own memory (validators for
 * conditional requests, row counts to catch a collapsing file).
 */
const Timestamp = z.iso.datetime();

export const SyncFileState = z.strictObject({
  etag: z.string().nullable(),
  lastModified: z.string().nullable(),
  bytes: z.int().min(0),
  sha256: Sha256Hex,
  /** Data rows of the text file inside the zip (the header line not counted). */
  rows: z.int().min(0),
  /** Bytes the zip's entries that the build reads inflate to; absent in states written before it was kept. */
  entryBytes: z.int().min(0).optional(),
});
export type SyncFileState = z.infer<typeof SyncFileState>;

export const SyncFailure = z.strictObject({ at: Timestamp, reason: z.string().min(1) });
export type SyncFailure = z.infer<typeof SyncFailure>;

export const SyncOutcome = z.enum(['built', 'unchanged', 'failed']);
export type SyncOutcome = z.infer<typeof SyncOutcome>;

export const SyncHistoryEntry = z.strictObject({
  at: Timestamp,
  outcome: SyncOutcome,
  /** One sentence: what was downloaded and built, or why it failed. */
  detail: z.string(),
});
export type SyncHistoryEntry = z.infer<typeof SyncHistoryEntry>;

export const SyncState = z.strictObject({
  /**
   * The snapshot link this state belongs to, as an absolute path; a server serving another link ignores the state.
   * Absent in states written before it was kept.
   */
  snapshot: z.string().min(1).optional(),
  lastAttemptAt: Timestamp.nullable(),
  /** When every source was last fetched (or found unchanged) and verified, and the snapshot matched them. */
  lastSuccessfulSyncAt: Timestamp.nullable(),
  /** The failure since the last success; null once a sync succeeds again (the history keeps it). */
  lastFailure: SyncFailure.nullable(),
  files: z.record(z.string(), SyncFileState),
  /** The newest attempts first, at most SYNC_HISTORY_LIMIT. */
  history: z.array(SyncHistoryEntry).default([]),
});
export type SyncState = z.infer<typeof SyncState>;

export const SYNC_HISTORY_LIMIT = 30;

/**
 * The name of the sync's folder beside a snapshot link of the given name: `.sync` beside the default link
 * `snapshot`, `.sync-<name>` beside any other, so two links in one folder never share a state.
 */
export function syncDirName(linkName: string): string {
  return linkName === 'snapshot' ? '.sync' : `.sync-${linkName}`;
}

export const EMPTY_SYNC_STATE: SyncState = {
  lastAttemptAt: null,
  lastSuccessfulSyncAt: null,
  lastFailure: null,
  files: {},
  history: [],
};
