import { ChangeSet, HISTORY_INDEX_PATH, HISTORY_RECORDS_PATH, HistoryIndex, HistoryRecords } from '../contract/history.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';

/**
 * A snapshot's change history (src/contract/history.ts), read once per snapshot: the index and the record dates at
 * the first request that needs them, each month's change sets when a request reaches back to it.
 */
export type LoadedHistory = {
  index: HistoryIndex;
  firstSeenOf(kNumber: string): string;
  /** When the record last changed, else when it was first seen. */
  updatedOf(kNumber: string): string;
  /** K numbers first seen after the baseline, with that time. */
  firstSeen: ReadonlyMap<string, string>;
  /** The kept change sets whose time is after `since`, oldest first. */
  setsAfter(since: string): Promise<ChangeSet[]>;
};

const decoder = new TextDecoder();
const loaded = new WeakMap<Snapshot, Promise<LoadedHistory>>();

/**
 * A snapshot built before history was kept: its records count as first seen at its generation time, and its
 * history starts then with nothing in it (the next build's history starts from it the same way).
 */
function noHistory(snapshot: Snapshot): LoadedHistory {
  const at = snapshot.manifest.generatedAt;
  const index: HistoryIndex = { schemaVersion: 1, keepDays: 1, completeSince: at, baselineAt: at, sets: [], dropped: [] };
  return { index, firstSeen: new Map(), firstSeenOf: () => at, updatedOf: () => at, setsAfter: async () => [] };
}

async function load(snapshot: Snapshot): Promise<LoadedHistory> {
  if (!snapshot.fileEntry(HISTORY_INDEX_PATH) || !snapshot.fileEntry(HISTORY_RECORDS_PATH)) return noHistory(snapshot);
  const json = async (path: string): Promise<unknown> => JSON.parse(decoder.decode(await snapshot.readFile(path, true)));
  const [index, records] = await Promise.all([json(HISTORY_INDEX_PATH).then((v) => HistoryIndex.parse(v)), json(HISTORY_RECORDS_PATH).then((v) => HistoryRecords.parse(v))]);
  const flat = (groups: Record<string, string[]>) => {
    const map = new Map<string, string>();
    for (const [at, ks] of Object.entries(groups)) for (const k of ks) map.set(k, at);
    return map;
  };
  const firstSeen = flat(records.firstSeen);
  const lastChanged = flat(records.lastChanged);
  const months = new Map<string, Promise<ChangeSet[]>>();
  const month = (path: string): Promise<ChangeSet[]> => {
    let sets = months.get(path);
    if (!sets) {
      sets = snapshot.readFile(path, true).then((bytes) =>
        decoder
          .decode(bytes)
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => ChangeSet.parse(JSON.parse(l))),
      );
      sets.catch(() => months.delete(path));
      months.set(path, sets);
    }
    return sets;
  };
  return {
    index,
    firstSeen,
    firstSeenOf: (k) => firstSeen.get(k) ?? index.baselineAt,
    updatedOf: (k) => lastChanged.get(k) ?? firstSeen.get(k) ?? index.baselineAt,
    async setsAfter(since) {
      const paths = [...new Set(index.sets.filter((s) => s.at > since).map((s) => s.path))];
      const sets = (await Promise.all(paths.map(month))).flat();
      return sets.filter((s) => s.at > since).sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
    },
  };
}

/** The snapshot's history, loaded once. */
export function historyOf(snapshot: Snapshot): Promise<LoadedHistory> {
  let history = loaded.get(snapshot);
  if (!history) {
    history = load(snapshot);
    // A failed read (a damaged file) is not remembered: the next request tries again and reports it again.
    history.catch(() => loaded.delete(snapshot));
    loaded.set(snapshot, history);
  }
  return history;
}
