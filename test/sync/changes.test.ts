import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changedFields, changeLogOf, changeSummary, diffRecords } from '../../build/changes/diff.ts';
import { ChangeLog, CHANGES_PATH } from '../../src/contract/changes.ts';
import { LAYOUT, MetaFile, type ClearanceFields, type ClearanceRecord } from '../../src/contract/index.ts';
import { makeRecord } from '../helpers/records.ts';
import { buildFixture, FIXTURE_SOURCES } from '../helpers/fixture-snapshot.ts';
import { PMN, writeEditedPmn } from './edit-fixture.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

const base: Partial<ClearanceFields> = {
  deviceName: 'KNEE AID',
  applicant: 'Zimmer, Inc.',
  productCode: 'IQI',
  decisionDate: '1976-07-26',
  decisionDescription: 'Substantially Equivalent',
  receivedDate: '1976-05-26',
  advisoryCommittee: 'Physical Medicine',
  classificationCommittee: 'Physical Medicine',
  statementOrSummary: null,
  submissionType: 'Traditional',
  thirdParty: false,
  expeditedReview: null,
  countryCode: 'US',
};
const rec = (k: string, f: Partial<ClearanceFields> = {}): ClearanceRecord => makeRecord(k, { ...base, ...f });

describe('diffRecords', () => {
  it.each([
    { name: 'identical lists', prev: [rec('K760001'), rec('K760002')], next: [rec('K760001'), rec('K760002')], expected: { added: [], removed: [], changed: [] } },
    { name: 'an added record', prev: [rec('K760001')], next: [rec('K760001'), rec('K760002')], expected: { added: ['K760002'], removed: [], changed: [] } },
    { name: 'a removed record', prev: [rec('K760001'), rec('K760002')], next: [rec('K760002')], expected: { added: [], removed: ['K760001'], changed: [] } },
    {
      name: 'a changed applicant',
      prev: [rec('K760001')],
      next: [rec('K760001', { applicant: 'Zimmer, Inc' })],
      expected: { added: [], removed: [], changed: [{ kNumber: 'K760001', fields: ['applicant'] }] },
    },
    {
      name: 'a renamed device (title follows the name)',
      prev: [rec('K760003')],
      next: [rec('K760003', { deviceName: 'ARCH SUPPORT', decisionDate: null })],
      expected: { added: [], removed: [], changed: [{ kNumber: 'K760003', fields: ['title', 'deviceName', 'decisionDate', 'reviewDays'] }] }, // reviewDays follows the dates
    },
    {
      name: 'all three at once, in K-number order',
      prev: [rec('K760001'), rec('K760003'), rec('K760005')],
      next: [rec('K760002'), rec('K760003', { thirdParty: true }), rec('K760004')],
      expected: { added: ['K760002', 'K760004'], removed: ['K760001', 'K760005'], changed: [{ kNumber: 'K760003', fields: ['thirdParty'] }] },
    },
    { name: 'nothing before', prev: [], next: [rec('K760001')], expected: { added: ['K760001'], removed: [], changed: [] } },
  ])('$name', ({ prev, next, expected }) => {
    expect(diffRecords(prev, next)).toEqual(expected);
  });

  it('never reports the identity members', () => {
    expect(changedFields(rec('K760001'), rec('K760001'))).toEqual([]);
  });
});

describe('changeSummary', () => {
  const previous = { snapshotId: '0123456789abcdef', sourceRevision: `sha256:${'a'.repeat(64)}`, generatedAt: '2026-08-17T02:00:00.000Z' };
  it.each([
    {
      previous: null,
      diffs: [{ added: ['K760001', 'K760002'], removed: [], changed: [] }],
      sentence: 'Change log: there was no earlier snapshot to compare with, so all 2 clearances count as added (changes.json).',
    },
    {
      previous,
      diffs: [],
      sentence: 'Change log: no clearance added, removed or changed since snapshot 0123456789abcdef of 2026-08-17.',
    },
    {
      previous,
      diffs: [
        { added: ['K760009'], removed: [], changed: [{ kNumber: 'K760001', fields: ['applicant'] }] },
        { added: [], removed: ['K770001'], changed: [{ kNumber: 'K770002', fields: ['applicant', 'decisionDate'] }] },
      ],
      sentence:
        'Change log: since snapshot 0123456789abcdef of 2026-08-17, 1 clearance added, 1 removed and 2 changed (applicant 2, decisionDate 1); changes.json lists them.',
    },
  ])('says $sentence', ({ previous: p, diffs, sentence }) => {
    const log = changeLogOf({ previous: p, records: 10, shards: [], diffs });
    expect(ChangeLog.parse(log)).toEqual(log);
    expect(changeSummary(log)).toBe(sentence);
  });
});

describe('changes.json in a build', () => {
  const readJson = async (path: string) => JSON.parse(await readFile(path, 'utf8'));
  let work: string;
  let edited: string;
  beforeAll(async () => {
    work = await testTempDir('changes-');
    edited = join(work, 'pmn-1976-1990-sample.txt');
    const pmn = FIXTURE_SOURCES[1] as string;
    await writeEditedPmn(pmn, edited, {
      set: { K770121: { [PMN.APPLICANT]: 'Renamed Applicant, Inc.' }, K801094: { [PMN.DEVICENAME]: 'A NEW NAME' } },
      remove: ['K780485'],
      add: [{ kNumber: 'K789999', from: 'K780578' }],
    });
  });
  afterAll(async () => {
    await rm(work, { recursive: true, force: true });
  });

  it('compares with nothing when a shard it must read from the published snapshot fails its sha256', async () => {
    const first = await buildFixture({ out: join(work, 'damaged', 'snapshot') });
    // Same length, still JSON, different bytes: only the manifest's sha256 tells.
    const shard = join(first.dir, 'records/K7701.json');
    const text = await readFile(shard, 'utf8');
    expect(text).toContain('"K770121"');
    await writeFile(shard, text.replace('"K770121"', '"K770122"'));
    const sources = FIXTURE_SOURCES.map((s, i) => (i === 1 ? edited : s));
    const second = await buildFixture({ out: first.out, sources, epoch: 1_800_000_000 });
    const log = ChangeLog.parse(await readJson(join(second.dir, CHANGES_PATH)));
    expect(log.previous).toBeNull();
    expect(log.counts.added).toBe(second.manifest.counts.records);
  });

  it('lists added, removed and changed K numbers since the published snapshot, reads only differing shards, and says so in meta', async () => {
    const first = await buildFixture({ out: join(work, 'a', 'snapshot') });
    const firstLog = ChangeLog.parse(await readJson(join(first.dir, CHANGES_PATH)));
    expect(firstLog.previous).toBeNull();
    expect(firstLog.counts.added).toBe(first.manifest.counts.records);
    expect(first.manifest.files.map((f) => f.path)).toContain(CHANGES_PATH);

    // An unchanged shard is never read: garbage in one of the published snapshot's must not matter.
    await writeFile(join(first.dir, 'records/K7602.json'), 'not json');
    const sources = FIXTURE_SOURCES.map((s, i) => (i === 1 ? edited : s));
    const second = await buildFixture({ out: first.out, sources, epoch: 1_800_000_000 });
    const log = ChangeLog.parse(await readJson(join(second.dir, CHANGES_PATH)));
    expect(log.previous).toEqual({ snapshotId: first.manifest.snapshotId, sourceRevision: first.manifest.sourceRevision, generatedAt: first.manifest.generatedAt });
    expect(log.added).toEqual(['K789999']);
    expect(log.removed).toEqual(['K780485']);
    expect(log.changed).toEqual([
      { kNumber: 'K770121', fields: ['applicant'] },
      { kNumber: 'K801094', fields: ['title', 'deviceName'] },
    ]);
    expect(log.shards).toEqual(['records/K7701.json', 'records/K7804.json', 'records/K7899.json', 'records/K8010.json']);
    expect(log.counts).toEqual({ records: first.manifest.counts.records, added: 1, removed: 1, changed: 2 });

    const meta = MetaFile.parse(await readJson(join(second.dir, LAYOUT.meta)));
    expect(meta.sourceNotes.at(-1)).toBe(
      `Change log: since snapshot ${first.manifest.snapshotId} of 2026-01-01, 1 clearance added, 1 removed and 2 changed (applicant 1, deviceName 1, title 1); changes.json lists them.`,
    );

    // Every record shard the log does not name kept its bytes.
    const shardSha = (m: typeof first.manifest) => new Map(m.files.filter((f) => /^records\/K/.test(f.path)).map((f) => [f.path, f.sha256]));
    const [a, b] = [shardSha(first.manifest), shardSha(second.manifest)];
    const moved = [...new Set([...a.keys(), ...b.keys()])].filter((p) => a.get(p) !== b.get(p)).sort();
    expect(moved).toEqual(log.shards);

    // A rebuild of the same inputs changes no record, so it keeps the log and every file's bytes.
    const third = await buildFixture({ out: first.out, sources, epoch: 1_800_000_000 });
    expect(await readFile(join(third.dir, CHANGES_PATH))).toEqual(await readFile(join(second.dir, CHANGES_PATH)));
    expect(third.manifest.snapshotId).toBe(second.manifest.snapshotId);
  });
});
