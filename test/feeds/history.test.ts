import { describe, expect, it } from 'vitest';
import type { Comparison } from '../../build/changes/changes.ts';
import type { PreviousSnapshot } from '../../build/changes/previous.ts';
import { carryHistory, writeHistory, type History } from '../../build/history/history.ts';
import type { SnapshotWriter } from '../../build/write/writer.ts';
import { ChangeSet, HistoryIndex, HistoryRecords } from '../../src/contract/history.ts';
import type { ClearanceRecord, Manifest } from '../../src/contract/index.ts';
import { makeRecord } from '../helpers/records.ts';

/** The history stage night after night over files kept in memory: the previous night's files are the next one's input. */
function night(files: Map<string, Uint8Array>, generatedAt: string, damaged: ReadonlySet<string> = new Set()): PreviousSnapshot {
  const manifest = { generatedAt, files: [...files.keys()].map((path) => ({ path, bytes: 0, sha256: '' })) } as unknown as Manifest;
  return {
    dir: '',
    manifest,
    changes: null,
    readShard: async () => [],
    readFile: async (path) => {
      if (damaged.has(path)) throw new Error(`${path} does not match its sha256 in the manifest`);
      return files.get(path) as Uint8Array;
    },
  };
}

function written(history: History): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  const writer = {
    writeJson: (path: string, schema: { parse(v: unknown): unknown }, value: unknown) => files.set(path, new TextEncoder().encode(JSON.stringify(schema.parse(value)))),
    writeBytes: (path: string, bytes: Uint8Array) => files.set(path, bytes),
  } as unknown as SnapshotWriter;
  writeHistory(history, writer);
  return files;
}

const day = (n: number) => new Date(Date.UTC(2026, 0, 1 + n, 2)).toISOString();
const rec = (k: string, applicant = 'Acme') => makeRecord(k, { deviceName: `Device ${k}`, applicant });
const records = (n: number) => Array.from({ length: n }, (_, i) => rec(`K76${String(i).padStart(4, '0')}`));
const added = (previousAt: string, k: string): Comparison => ({ previousAt, added: [k], removed: [], changed: [] });
const parse = (files: Map<string, Uint8Array>, path: string) => JSON.parse(new TextDecoder().decode(files.get(path)));

async function nights(count: number, keepDays: number): Promise<{ history: History; files: Map<string, Uint8Array> }> {
  let history = await carryHistory({ previous: null, comparison: null, records: records(3), generatedAt: day(0), keepDays });
  let files = written(history);
  for (let n = 1; n < count; n++) {
    history = await carryHistory({ previous: night(files, day(n - 1)), comparison: added(day(n - 1), `K90000${n}`), records: records(3), generatedAt: day(n), keepDays });
    files = written(history);
  }
  return { history, files };
}

describe('the history carried from build to build', () => {
  it('keeps one set a night with changes, and records when each added record was first seen', async () => {
    const { history, files } = await nights(4, 400);
    expect(history.sets.map((s) => [s.at, s.baseline, s.counts.added])).toEqual([
      [day(0), true, 0],
      [day(1), false, 1],
      [day(2), false, 1],
      [day(3), false, 1],
    ]);
    expect(HistoryRecords.parse(parse(files, 'history/records.json')).firstSeen).toEqual({ [day(1)]: ['K900001'], [day(2)]: ['K900002'], [day(3)]: ['K900003'] });
    expect(HistoryIndex.parse(parse(files, 'history/index.json')).completeSince).toBe(day(0));
  });

  it('drops sets older than the keep window, and is then complete only after the newest dropped', async () => {
    const { history } = await nights(5, 2);
    // Night 4 keeps what is at most two days old: nights 2, 3 and 4.
    expect(history.sets.map((s) => s.at)).toEqual([day(2), day(3), day(4)]);
    expect(history.index.completeSince).toBe(day(1));
    // First-seen dates outlive the window: they belong to the records, not to the change sets.
    expect(history.firstSeen.get('K900001')).toBe(day(1));
  });

  it('rebuilds the record dates from the kept change sets when records.json does not verify, and says so', async () => {
    const { files } = await nights(3, 400);
    const history = await carryHistory({ previous: night(files, day(2), new Set(['history/records.json'])), comparison: added(day(2), 'K900009'), records: records(3), generatedAt: day(3), keepDays: 400 });
    expect(history.index.dropped).toEqual([expect.stringMatching(/^history\/records\.json did not verify .*rebuilt from the kept change sets$/)]);
    expect([...history.firstSeen]).toEqual([
      ['K900001', day(1)],
      ['K900002', day(2)],
      ['K900009', day(3)],
    ]);
  });

  it('records a changed record with its values before and after, and a removed one with what it was', async () => {
    const before = rec('K760001', 'Old Name');
    const after = rec('K760001', 'New Name');
    const gone = rec('K760002');
    const first = written(await carryHistory({ previous: null, comparison: null, records: [before, gone], generatedAt: day(0), keepDays: 400 }));
    const comparison: Comparison = { previousAt: day(0), added: [], removed: [gone], changed: [{ before, after, fields: ['applicant'] }] };
    const history = await carryHistory({ previous: night(first, day(0)), comparison, records: [after] as ClearanceRecord[], generatedAt: day(1), keepDays: 400 });
    const set = ChangeSet.parse(history.sets.at(-1));
    expect(set.changes).toEqual([
      { kNumber: 'K760001', kind: 'changed', fields: ['applicant'], values: { applicant: { from: 'Old Name', to: 'New Name' } } },
      { kNumber: 'K760002', kind: 'removed', fields: [], was: { deviceName: 'Device K760002', applicant: 'Acme', productCode: null, decisionDate: null, decisionDescription: null, advisoryCommittee: null } },
    ]);
    expect(history.lastChanged.get('K760001')).toBe(day(1));
  });
});
