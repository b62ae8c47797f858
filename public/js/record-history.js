// A record's history in the data: when a build first saw it, and each change a build recorded (src/contract/history.ts
// describes the files). Both modes read the snapshot's own history/ files: the server serves the snapshot under
// snapshot/ as a static host does, and the files hold everything a record's history needs, so the same bytes answer
// in both and no route is needed for it.
import { fetchJson } from './snapshot-head.js';

/** K numbers grouped by time (records.json's shape) as K number → time. */
function flatten(groups) {
  const out = new Map();
  for (const [at, ks] of Object.entries(groups ?? {})) for (const k of ks) out.set(k, at);
  return out;
}

/** A change set the record's history lists: within the record's dates, and after where the kept history starts. */
const kept = (index, set, from, to) => !set.baseline && set.at >= from && set.at <= to && set.at > index.completeSince;

/**
 * The months a record's changes can be in: from when it was first seen (or where the kept history starts, for a
 * record of the baseline) to its last change. records.json names every record added or changed after the baseline,
 * so a record it does not name has no change to read.
 */
export function monthsToRead(index, firstSeenAt, lastChangedAt) {
  const newest = lastChangedAt ?? firstSeenAt;
  if (newest === null) return { from: null, to: null, paths: [] };
  const from = firstSeenAt ?? index.completeSince;
  const paths = [...new Set(index.sets.filter((s) => kept(index, s, from, newest)).map((s) => s.path))];
  return { from, to: newest, paths };
}

/**
 * One record's history from the loaded files: `firstSeenAt` (the baseline's time for a record that was in the data
 * when its history began), `completeSince` (no change before it is recorded) and its changes, oldest first.
 */
export function recordHistoryOf({ index, firstSeen, lastChanged }, sets, kNumber) {
  const firstSeenAt = firstSeen.get(kNumber) ?? null;
  const { from, to } = monthsToRead(index, firstSeenAt, lastChanged.get(kNumber) ?? null);
  const changes = [];
  if (from !== null) {
    for (const set of [...sets].filter((s) => kept(index, s, from, to)).sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0))) {
      for (const c of set.changes) if (c.kNumber === kNumber) changes.push({ at: set.at, kind: c.kind, fields: c.fields, values: c.values ?? {} });
    }
  }
  return {
    kNumber,
    firstSeenAt: firstSeenAt ?? index.baselineAt,
    inBaseline: firstSeenAt === null,
    baselineAt: index.baselineAt,
    completeSince: index.completeSince,
    changes,
  };
}

/**
 * A reader of record histories over a snapshot: the index and records.json once, each month file once, and only the
 * months a record's changes can be in. Resolves to null for a snapshot built before history was kept.
 */
export function recordHistoryReader(snapshotBase) {
  const url = (path) => new URL(path, snapshotBase).href;
  let head = null;
  const loadHead = () =>
    (head ??= Promise.all([fetchJson(url('history/index.json')), fetchJson(url('history/records.json'))])
      .then(([index, records]) => (index && records ? { index, firstSeen: flatten(records.firstSeen), lastChanged: flatten(records.lastChanged) } : null))
      .catch((err) => ((head = null), Promise.reject(err))));
  const months = new Map();
  const month = (path) => {
    if (!months.has(path)) {
      const load = fetch(url(path))
        .then((res) => {
          if (!res.ok) throw new Error(`The file ${path} of the history could not be loaded (HTTP ${res.status}).`);
          return res.text();
        })
        .then((text) => text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l)));
      load.catch(() => months.delete(path));
      months.set(path, load);
    }
    return months.get(path);
  };
  return async (kNumber) => {
    const loaded = await loadHead();
    if (!loaded) return null;
    const { paths } = monthsToRead(loaded.index, loaded.firstSeen.get(kNumber) ?? null, loaded.lastChanged.get(kNumber) ?? null);
    const sets = (await Promise.all(paths.map(month))).flat();
    return recordHistoryOf(loaded, sets, kNumber);
  };
}
