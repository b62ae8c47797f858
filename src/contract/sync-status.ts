import { z } from 'zod';

/**
 * What the server needs from the nightly sync's state file. The sync owns the file's full schema; the server
 * reads only these members and ignores the rest, so either side can grow without breaking the other.
 */
const Timestamp = z.iso.datetime({ offset: true });
const SyncStateFile = z.looseObject({
  snapshot: z.string().optional(),
  lastAttemptAt: Timestamp.nullable().optional(),
  lastSuccessfulSyncAt: Timestamp.nullable().optional(),
  lastFailure: z.looseObject({ at: Timestamp, reason: z.string() }).nullable().optional(),
});

export type SyncStatus = {
  lastAttemptAt: string | null;
  lastSuccessfulSyncAt: string | null;
  lastFailure: { at: string; reason: string } | null;
};

export const OTHER_LINK = 'it is the sync state of';

/** The state in a file's text, or a sentence saying why it is not usable (also: it is the state of another link). */
export function parseSyncState(text: string, snapshot?: string): SyncStatus | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'not valid JSON';
  }
  const parsed = SyncStateFile.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return `${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`;
  }
  const d = parsed.data;
  if (snapshot !== undefined && d.snapshot !== undefined && d.snapshot !== snapshot) return `${OTHER_LINK} ${d.snapshot}, not of ${snapshot}`;
  // Offsets are allowed in the file; the server reports UTC, as the contract's timestamps are.
  const utc = (t: string | null | undefined): string | null => (t ? new Date(t).toISOString() : null);
  return {
    lastAttemptAt: utc(d.lastAttemptAt),
    lastSuccessfulSyncAt: utc(d.lastSuccessfulSyncAt),
    lastFailure: d.lastFailure ? { at: utc(d.lastFailure.at) as string, reason: d.lastFailure.reason } : null,
  };
}
