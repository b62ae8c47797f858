import {
  ChangeSet,
  HISTORY_INDEX_PATH,
  HISTORY_RECORDS_PATH,
  HISTORY_SCHEMA_VERSION,
  HistoryIndex,
  HistoryRecords,
  historyMonthPath,
  type HistoryChange,
} from '../../src/contract/history.ts';
import type { ClearanceRecord } from '../../src/contract/index.ts';
import type { Comparison } from '../changes/changes.ts';
import type { PreviousSnapshot } from '../changes/previous.ts';
import type { SnapshotWriter } from '../write/writer.ts';

/** The history as this build carries it forward: kept change sets, and the dates of records that are not the baseline's. */
export type History = {
  index: HistoryIndex;
  sets: ChangeSet[];
  /** Month files carried over as they were read (verified), with how many sets each held: rewritten only when that changes. */
  carried: Map<string, { bytes: Uint8Array; first: string; last: string; sets: number }>;
  firstSeen: Map<string, string>;
  lastChanged: Map<string, string>;
};

export type HistoryResult = { history: History; summary: string };

const decoder = new TextDecoder();
const DAY_MS = 86_400_000;

/** What the history before this build holds, keeping every file that verifies and naming those that do not. */
type Before = { index: HistoryIndex | null; sets: ChangeSet[]; records: HistoryRecords | null; damagedUpTo: string | null; carried: History['carried'] };

/**
 * Bounds on the previous history's files, checked against the manifest's sizes before a byte is read, as downloads
 * are bounded: a file (a month of change sets, the index, the records' dates) is at most HISTORY_FILE_MAX_BYTES, all
 * of them HISTORY_MAX_BYTES. A year of FDA's changes is a few megabytes; a file past its bound is dropped as one that
 * does not verify, so a re-signed snapshot with a huge history cannot make the build hold it.
 */
export const HISTORY_FILE_MAX_BYTES = 16 * 1024 * 1024;
export const HISTORY_MAX_BYTES = 64 * 1024 * 1024;

async function readPrevious(previous: PreviousSnapshot, dropped: string[]): Promise<Before> {
  const listed = new Set(previous.manifest.files.map((f) => f.path));
  const sizes = new Map(previous.manifest.files.map((f) => [f.path, f.bytes]));
  let held = 0;
  /** The file's bytes, refused past the bounds before any is read. */
  const read = async (path: string): Promise<Uint8Array> => {
    const bytes = sizes.get(path) ?? 0;
    if (bytes > HISTORY_FILE_MAX_BYTES) throw new Error(`it is ${bytes} bytes, more than the ${HISTORY_FILE_MAX_BYTES} a history file may be`);
    if (held + bytes > HISTORY_MAX_BYTES) throw new Error(`the history's files before it already hold ${held} bytes, and all of them may hold ${HISTORY_MAX_BYTES}`);
    held += bytes;
    return previous.readFile(path);
  };
  const json = async (path: string): Promise<unknown> => JSON.parse(decoder.decode(await read(path)));
  const why = (err: unknown) => (err instanceof Error ? err.message.split('\n')[0] : String(err));

  let index: HistoryIndex | null = null;
  if (listed.has(HISTORY_INDEX_PATH)) {
    try {
      index = HistoryIndex.parse(await json(HISTORY_INDEX_PATH));
    } catch (err) {
      dropped.push(`${HISTORY_INDEX_PATH} did not verify (${why(err)}); the history was rebuilt from the files that did`);
    }
  }
  let records: HistoryRecords | null = null;
  if (listed.has(HISTORY_RECORDS_PATH)) {
    try {
      records = HistoryRecords.parse(await json(HISTORY_RECORDS_PATH));
    } catch (err) {
      dropped.push(`${HISTORY_RECORDS_PATH} did not verify (${why(err)}); first-seen and last-change dates were rebuilt from the kept change sets`);
    }
  }
  const sets: ChangeSet[] = [];
  const carried: History['carried'] = new Map();
  let damagedUpTo: string | null = null;
  const months = [...listed].filter((p) => /^history\/changes\/\d{4}-\d{2}\.ndjson$/.test(p)).sort();
  for (const path of months) {
    try {
      const bytes = await read(path);
      const lines = decoder.decode(bytes).split('\n').filter((l) => l !== '');
      // The bytes matched the manifest's sha256, so a build wrote them after checking each set against ChangeSet:
      // parsing them as JSON is enough (checking a year of change sets again each night would cost more than the rest).
      const month = lines.map((l) => JSON.parse(l) as ChangeSet);
      if (month.some((set) => typeof set?.at !== 'string' || !Array.isArray(set.changes))) throw new Error('a line is not a change set');
      sets.push(...month);
      carried.set(path, { bytes, first: month[0]?.at ?? '', last: month.at(-1)?.at ?? '', sets: month.length });
    } catch (err) {
      dropped.push(`${path} did not verify (${why(err)}); its change sets were dropped`);
      // Changes of that month are lost: the history is complete only after its end.
      const month = path.slice('history/changes/'.length, -'.ndjson'.length);
      const [y, m] = month.split('-').map(Number) as [number, number];
      const end = new Date(Date.UTC(y, m, 1)).toISOString();
      if (damagedUpTo === null || end > damagedUpTo) damagedUpTo = end;
    }
  }
  sets.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  return { index, sets, records, damagedUpTo, carried };
}

function byTime(groups: Record<string, string[]>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [at, ks] of Object.entries(groups)) for (const k of ks) out.set(k, at);
  return out;
}

function grouped(map: ReadonlyMap<string, string>): Record<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const [k, at] of map) {
    let list = groups.get(at);
    if (!list) groups.set(at, (list = []));
    list.push(k);
  }
  const out: Record<string, string[]> = {};
  for (const at of [...groups.keys()].sort()) out[at] = (groups.get(at) as string[]).sort();
  return out;
}

/** This build's change set from the comparison, K numbers ascending. */
export function changeSetOf(at: string, records: number, comparison: Comparison): ChangeSet {
  const changes: HistoryChange[] = [];
  for (const k of comparison.added) changes.push({ kNumber: k, kind: 'added', fields: [] });
  for (const r of comparison.removed) {
    const was = {
      deviceName: r.deviceName,
      applicant: r.applicant,
      productCode: r.productCode,
      decisionDate: r.decisionDate,
      decisionDescription: r.decisionDescription,
      advisoryCommittee: r.advisoryCommittee,
    };
    changes.push({ kNumber: r.kNumber, kind: 'removed', fields: [], was });
  }
  for (const c of comparison.changed) {
    const before = c.before as unknown as Record<string, unknown>;
    const after = c.after as unknown as Record<string, unknown>;
    const values: Record<string, { from: unknown; to: unknown }> = {};
    for (const f of c.fields) values[f] = { from: before[f] ?? null, to: after[f] ?? null };
    changes.push({ kNumber: c.after.kNumber, kind: 'changed', fields: [...c.fields], values });
  }
  changes.sort((a, b) => (a.kNumber < b.kNumber ? -1 : a.kNumber > b.kNumber ? 1 : 0));
  return {
    at,
    previousAt: comparison.previousAt,
    baseline: false,
    records,
    counts: { added: comparison.added.length, changed: comparison.changed.length, removed: comparison.removed.length },
    changes,
  };
}

function baselineSet(at: string, records: number): ChangeSet {
  return { at, previousAt: null, baseline: true, records, counts: { added: 0, changed: 0, removed: 0 }, changes: [] };
}

/**
 * Carries the history forward: the previous snapshot's history (what verifies of it), less the change sets older
 * than `keepDays` before `generatedAt`, plus this build's change set when its records differ (none when they do not,
 * so a build of the same records adds nothing). A first build, or one that could not compare with the snapshot
 * before it, records one baseline set rather than every record as added.
 */
export async function carryHistory(options: {
  previous: PreviousSnapshot | null;
  comparison: Comparison | null;
  records: readonly ClearanceRecord[];
  generatedAt: string;
  keepDays: number;
}): Promise<History> {
  const { previous, comparison, generatedAt, keepDays } = options;
  const dropped: string[] = [];
  const before: Before = previous ? await readPrevious(previous, dropped) : { index: null, sets: [], records: null, damagedUpTo: null, carried: new Map() };
  let sets = before.sets;
  let firstSeen: Map<string, string>;
  let lastChanged: Map<string, string>;
  if (before.records) {
    firstSeen = byTime(before.records.firstSeen);
    lastChanged = byTime(before.records.lastChanged);
  } else {
    firstSeen = new Map();
    lastChanged = new Map();
    for (const set of sets) {
      for (const c of set.changes) {
        if (c.kind === 'added') firstSeen.set(c.kNumber, set.at);
        else if (c.kind === 'changed') lastChanged.set(c.kNumber, set.at);
      }
    }
  }
  const hadHistory = before.index !== null || sets.length > 0;
  let baselineAt = before.index?.baselineAt ?? sets.find((s) => s.baseline)?.at ?? (previous && hadHistory ? previous.manifest.generatedAt : generatedAt);
  let completeSince = before.index?.completeSince ?? sets[0]?.previousAt ?? sets[0]?.at ?? baselineAt;
  if (before.damagedUpTo !== null && before.damagedUpTo > completeSince) {
    completeSince = before.damagedUpTo > (previous?.manifest.generatedAt ?? generatedAt) ? (previous?.manifest.generatedAt ?? generatedAt) : before.damagedUpTo;
  }
  if (!before.index && !before.records && sets.length === 0 && previous) {
    // The snapshot replaced had no history (an older build): its records are this history's baseline.
    baselineAt = comparison ? previous.manifest.generatedAt : generatedAt;
    completeSince = baselineAt;
  }

  // The keep window: sets older than it are dropped, and the history is complete only after the newest of them.
  const cutoff = new Date(Date.parse(generatedAt) - keepDays * DAY_MS).toISOString();
  const expired = sets.filter((s) => s.at < cutoff);
  if (expired.length > 0) {
    sets = sets.filter((s) => s.at >= cutoff);
    const newest = expired[expired.length - 1] as ChangeSet;
    if (newest.at > completeSince) completeSince = newest.at;
  }

  if (previous === null && !hadHistory) {
    sets.push(baselineSet(generatedAt, options.records.length));
    baselineAt = generatedAt;
    completeSince = generatedAt;
  } else if (comparison === null) {
    // The records before could not be compared with: what changed is unknown, so the history starts again here.
    sets.push(baselineSet(generatedAt, options.records.length));
    completeSince = generatedAt;
    dropped.push('the records of the snapshot replaced could not be compared with (a damaged record shard), so this build starts the history again as a baseline');
  } else if (comparison.added.length + comparison.removed.length + comparison.changed.length > 0) {
    const set = changeSetOf(generatedAt, options.records.length, comparison);
    sets.push(set);
    for (const c of set.changes) {
      if (c.kind === 'added') {
        firstSeen.set(c.kNumber, generatedAt);
        lastChanged.delete(c.kNumber);
      } else if (c.kind === 'changed') {
        lastChanged.set(c.kNumber, generatedAt);
      } else {
        firstSeen.delete(c.kNumber);
        lastChanged.delete(c.kNumber);
      }
    }
  }

  const index: HistoryIndex = {
    schemaVersion: HISTORY_SCHEMA_VERSION,
    keepDays,
    completeSince,
    baselineAt,
    sets: sets.map((s) => ({ at: s.at, baseline: s.baseline, path: historyMonthPath(s.at), counts: s.counts })),
    dropped,
  };
  return { index, sets, carried: before.carried, firstSeen, lastChanged };
}

/** Writes the history's files: the index, the record dates, and one NDJSON file of change sets a month. */
export function writeHistory(history: History, writer: SnapshotWriter): void {
  writer.writeJson(HISTORY_INDEX_PATH, HistoryIndex, history.index);
  writer.writeJson(HISTORY_RECORDS_PATH, HistoryRecords, { firstSeen: grouped(history.firstSeen), lastChanged: grouped(history.lastChanged) });
  const months = new Map<string, ChangeSet[]>();
  for (const set of history.sets) {
    const path = historyMonthPath(set.at);
    let sets = months.get(path);
    if (!sets) months.set(path, (sets = []));
    sets.push(set);
  }
  const encoder = new TextEncoder();
  for (const [path, sets] of months) {
    const carried = history.carried.get(path);
    // A month whose sets are the ones read keeps its bytes: only the month a build adds to (or prunes) is written anew.
    if (carried && carried.sets === sets.length && carried.first === sets[0]?.at && carried.last === sets.at(-1)?.at) {
      writer.writeBytes(path, carried.bytes);
      continue;
    }
    const lines = sets.map((set) => JSON.stringify(ChangeSet.parse(set)));
    writer.writeBytes(path, encoder.encode(`${lines.join('\n')}\n`));
  }
}

/** The sentence meta.sourceNotes carries about the history. */
export function historySummary(history: History): string {
  const { index } = history;
  // No date here: meta.json stays the same for the same records (history/index.json says how far back it goes).
  const base = `History: ${index.sets.length} change set${index.sets.length === 1 ? '' : 's'} kept (at most ${index.keepDays} days; history/index.json)`;
  return index.dropped.length === 0 ? `${base}.` : `${base}; dropped: ${index.dropped.join('; ')}.`;
}
