import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ClearanceRecord } from '../../src/contract/index.ts';
import { buildFixture, FIXTURE_EPOCH, FIXTURE_SOURCES } from '../helpers/fixture-snapshot.ts';
import { PMN, writeEditedPmn } from '../sync/edit-fixture.ts';

/**
 * Two builds of the fixture into one published link, the second with one clearance added, one changed and one
 * removed, a day apart. What changed is known from the edit and from a scan of both snapshots' record shards, never
 * from the history the builds wrote.
 */
export const ADDED = 'K789999';
export const CHANGED = 'K770121';
export const REMOVED = 'K780485';
export const NEW_APPLICANT = 'Renamed Applicant, Inc.';
export const DAY = 86_400;
export const iso = (epoch: number) => new Date(epoch * 1000).toISOString();

/** Every record of a published snapshot, read from its shards directly. */
export async function scanRecords(dir: string): Promise<Map<string, ClearanceRecord>> {
  const out = new Map<string, ClearanceRecord>();
  for (const name of await readdir(join(dir, 'records'))) {
    if (!/^K\d{4}\.json$/.test(name)) continue;
    for (const r of JSON.parse(await readFile(join(dir, 'records', name), 'utf8')) as ClearanceRecord[]) out.set(r.kNumber, r);
  }
  return out;
}

/** Added, removed and changed (with the members that differ) between two scans. */
export function truthOf(before: Map<string, ClearanceRecord>, after: Map<string, ClearanceRecord>) {
  const added = [...after.keys()].filter((k) => !before.has(k)).sort();
  const removed = [...before.keys()].filter((k) => !after.has(k)).sort();
  const changed: { kNumber: string; fields: string[] }[] = [];
  for (const [k, a] of after) {
    const b = before.get(k);
    if (!b) continue;
    const fields = Object.keys(a).filter((f) => JSON.stringify((a as Record<string, unknown>)[f]) !== JSON.stringify((b as Record<string, unknown>)[f]));
    if (fields.length > 0) changed.push({ kNumber: k, fields });
  }
  return { added, removed, changed: changed.sort((x, y) => (x.kNumber < y.kNumber ? -1 : 1)) };
}

export type TwoBuilds = {
  out: string;
  /** The second build's sources (the edited PMN file in place of the fixture's). */
  edited: string[];
  first: Awaited<ReturnType<typeof buildFixture>>;
  second: Awaited<ReturnType<typeof buildFixture>>;
  before: Map<string, ClearanceRecord>;
  after: Map<string, ClearanceRecord>;
};

/** Builds the fixture at FIXTURE_EPOCH, then the edited fixture a day later, into `<work>/site/snapshot`. */
export async function twoBuilds(work: string): Promise<TwoBuilds> {
  const pmn = join(work, 'pmn-1976-1990-sample.txt');
  await writeEditedPmn(FIXTURE_SOURCES[1] as string, pmn, {
    set: { [CHANGED]: { [PMN.APPLICANT]: NEW_APPLICANT } },
    remove: [REMOVED],
    add: [{ kNumber: ADDED, from: 'K780578' }],
  });
  const edited = FIXTURE_SOURCES.map((s, i) => (i === 1 ? pmn : s));
  const out = join(work, 'site', 'snapshot');
  const first = await buildFixture({ out });
  const before = await scanRecords(first.dir);
  const second = await buildFixture({ out, sources: edited, epoch: FIXTURE_EPOCH + DAY });
  const after = await scanRecords(second.dir);
  return { out, edited, first, second, before, after };
}
