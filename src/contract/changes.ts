import { z } from 'zod';
import { LAYOUT } from './snapshot.ts';

/**
 * `changes.json` of a snapshot: the K numbers added, removed and changed since the previous snapshot, and which
 * members changed. It describes the last change of the records: a rebuild that changes no record keeps the log it
 * had, so the same inputs still give the same files, and the log never empties itself on a quiet night.
 */
export const CHANGES_PATH = LAYOUT.changes;
export const CHANGES_SCHEMA_VERSION = 1;

const KNumber = z.string().regex(/^K\d{6}$/);

export const ChangedRecord = z.strictObject({
  kNumber: KNumber,
  /** Record members whose value differs, in the record's member order. */
  fields: z.array(z.string()).min(1),
});
export type ChangedRecord = z.infer<typeof ChangedRecord>;

export const ChangeLog = z.strictObject({
  schemaVersion: z.literal(CHANGES_SCHEMA_VERSION),
  /** The snapshot compared with; null when there was none, and then every record counts as added. */
  previous: z
    .strictObject({
      snapshotId: z.string().regex(/^[0-9a-f]{16}$/),
      sourceRevision: z.string().regex(/^sha256:[0-9a-f]{64}$/),
      generatedAt: z.iso.datetime(),
    })
    .nullable(),
  counts: z.strictObject({
    records: z.int().min(0),
    added: z.int().min(0),
    removed: z.int().min(0),
    changed: z.int().min(0),
  }),
  /** How many changed records each member changed in. */
  fieldCounts: z.record(z.string(), z.int().min(1)),
  /** Record shards (`records/K1234.json`) whose bytes differ from the previous snapshot's, added or gone. */
  shards: z.array(z.string()),
  added: z.array(KNumber),
  removed: z.array(KNumber),
  changed: z.array(ChangedRecord),
});
export type ChangeLog = z.infer<typeof ChangeLog>;
