import type { ChangedRecord, ChangeLog } from '../../src/contract/changes.ts';
import { CHANGES_SCHEMA_VERSION } from '../../src/contract/changes.ts';
import type { ClearanceRecord } from '../../src/contract/index.ts';

/** Pure comparison of record lists; the reader hands in the previous snapshot's shards, the build its records. */

export type RecordDiff = { added: string[]; removed: string[]; changed: ChangedRecord[] };

/** Members that name the record rather than describe it: they cannot differ between two records of one K number. */
const IDENTITY = new Set(['id', 'kNumber']);

/** Compares two lists in kNumber ascending order by a merge join; the result is in kNumber order too. */
export function diffRecords(previous: readonly ClearanceRecord[], next: readonly ClearanceRecord[]): RecordDiff {
  const out: RecordDiff = { added: [], removed: [], changed: [] };
  let i = 0;
  let j = 0;
  while (i < previous.length || j < next.length) {
    const a = previous[i];
    const b = next[j];
    if (b === undefined || (a !== undefined && a.kNumber < b.kNumber)) {
      out.removed.push((a as ClearanceRecord).kNumber);
      i++;
    } else if (a === undefined || b.kNumber < a.kNumber) {
      out.added.push(b.kNumber);
      j++;
    } else {
      const fields = changedFields(a, b);
      if (fields.length > 0) out.changed.push({ kNumber: b.kNumber, fields });
      i++;
      j++;
    }
  }
  return out;
}

/** The members whose values differ, in the new record's member order (then any the new record no longer has). */
export function changedFields(a: ClearanceRecord, b: ClearanceRecord): string[] {
  const before = a as unknown as Record<string, unknown>;
  const after = b as unknown as Record<string, unknown>;
  const fields: string[] = [];
  for (const key of Object.keys(after)) {
    if (IDENTITY.has(key)) continue;
    if (JSON.stringify(before[key]) !== JSON.stringify(after[key])) fields.push(key);
  }
  for (const key of Object.keys(before)) if (!(key in after)) fields.push(key);
  return fields;
}

export type ChangeLogInput = {
  previous: ChangeLog['previous'];
  records: number;
  shards: readonly string[];
  diffs: readonly RecordDiff[];
};

/** Joins per-shard diffs (given in shard order) into the log, with the counts that summarize it. */
export function changeLogOf(input: ChangeLogInput): ChangeLog {
  const added = input.diffs.flatMap((d) => d.added);
  const removed = input.diffs.flatMap((d) => d.removed);
  const changed = input.diffs.flatMap((d) => d.changed);
  const fieldCounts: Record<string, number> = {};
  for (const c of changed) for (const f of c.fields) fieldCounts[f] = (fieldCounts[f] ?? 0) + 1;
  return {
    schemaVersion: CHANGES_SCHEMA_VERSION,
    previous: input.previous,
    counts: { records: input.records, added: added.length, removed: removed.length, changed: changed.length },
    fieldCounts: Object.fromEntries(Object.entries(fieldCounts).sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1))),
    shards: [...input.shards],
    added,
    removed,
    changed,
  };
}

/** The sentence meta.sourceNotes carries about the change log. */
export function changeSummary(log: ChangeLog): string {
  const n = (v: number) => v.toLocaleString('en-US');
  const { added, removed, changed } = log.counts;
  if (log.previous === null) {
    return `Change log: there was no earlier snapshot to compare with, so all ${n(added)} clearances count as added (changes.json).`;
  }
  const since = `since snapshot ${log.previous.snapshotId} of ${log.previous.generatedAt.slice(0, 10)}`;
  if (added + removed + changed === 0) return `Change log: no clearance added, removed or changed ${since}.`;
  const parts = [`${n(added)} clearance${added === 1 ? '' : 's'} added`, `${n(removed)} removed`, `${n(changed)} changed`];
  const fields = Object.entries(log.fieldCounts)
    .map(([f, c]) => `${f} ${n(c)}`)
    .join(', ');
  return `Change log: ${since}, ${parts[0]}, ${parts[1]} and ${parts[2]}${fields ? ` (${fields})` : ''}; changes.json lists them.`;
}
