import { describe, expect, it } from 'vitest';

type Set = { at: string; baseline: boolean; path: string };
type Index = { completeSince: string; baselineAt: string; sets: Set[] };
type ChangeSet = { at: string; changes: { kNumber: string; kind: string; fields: string[]; values?: Record<string, unknown> }[] };
type Module = {
  monthsToRead(index: Index, firstSeenAt: string | null, lastChangedAt: string | null): { from: string | null; to: string | null; paths: string[] };
  recordHistoryOf(loaded: { index: Index; firstSeen: Map<string, string>; lastChanged: Map<string, string> }, sets: ChangeSet[], kNumber: string): unknown;
};
const { monthsToRead, recordHistoryOf } = (await import('../../public/js/record-history.js' as string)) as Module;

/**
 * Which month files the page reads for a record's history, and what it makes of them, on hand-made histories: a
 * baseline in January, then a change set on the 1st of February, March and April.
 */
const at = (month: number) => `2026-0${month}-01T02:00:00.000Z`;
const path = (month: number) => `history/changes/2026-0${month}.ndjson`;
const index: Index = {
  completeSince: at(1),
  baselineAt: at(1),
  sets: [{ at: at(1), baseline: true, path: path(1) }, ...[2, 3, 4].map((m) => ({ at: at(m), baseline: false, path: path(m) }))],
};

describe('the months a record history reads', () => {
  it.each([
    ['a record of the baseline that never changed', null, null, []],
    ['a record of the baseline changed in March', null, at(3), [path(2), path(3)]],
    ['a record added in March, never changed', at(3), null, [path(3)]],
    ['a record added in February and changed in April', at(2), at(4), [path(2), path(3), path(4)]],
  ])('%s', (_, firstSeen, lastChanged, paths) => {
    expect(monthsToRead(index, firstSeen, lastChanged).paths).toEqual(paths);
  });
});

describe('a record history from the files', () => {
  const sets: ChangeSet[] = [
    { at: at(2), changes: [{ kNumber: 'K000002', kind: 'added', fields: [] }] },
    { at: at(3), changes: [{ kNumber: 'K000001', kind: 'changed', fields: ['applicant'], values: { applicant: { from: 'A', to: 'B' } } }, { kNumber: 'K000002', kind: 'changed', fields: ['deviceName'], values: { deviceName: { from: 'x', to: 'y' } } }] },
  ];
  const loaded = { index, firstSeen: new Map([['K000002', at(2)]]), lastChanged: new Map([['K000001', at(3)], ['K000002', at(3)]]) };

  it('lists only the record\'s own changes, oldest first, with first seen and where the history starts', () => {
    expect(recordHistoryOf(loaded, [...sets].reverse(), 'K000002')).toEqual({
      kNumber: 'K000002',
      firstSeenAt: at(2),
      inBaseline: false,
      baselineAt: at(1),
      completeSince: at(1),
      changes: [
        { at: at(2), kind: 'added', fields: [], values: {} },
        { at: at(3), kind: 'changed', fields: ['deviceName'], values: { deviceName: { from: 'x', to: 'y' } } },
      ],
    });
  });

  it('a change older than the kept history is not listed: the history starts after it', () => {
    const later = { ...loaded, index: { ...index, completeSince: at(3), sets: index.sets.filter((s) => s.at > at(3)) } };
    expect(recordHistoryOf(later, sets.slice(1), 'K000001')).toMatchObject({ inBaseline: true, firstSeenAt: at(1), completeSince: at(3), changes: [] });
  });
});
