import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ClearanceRecord } from '../../src/contract/index.ts';
import { buildFixture, FIXTURE_EPOCH, FIXTURE_SOURCES } from '../helpers/fixture-snapshot.ts';
import { ADDED, CHANGED, DAY, iso, REMOVED, scanRecords, truthOf, twoBuilds, type TwoBuilds } from '../feeds/two-builds.ts';
import { browserSkipReason, launchChromium, type Browser } from './chromium.ts';
import { collectErrors, startHost, type Host } from './page-helpers.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/**
 * The record view's history after two builds into one published link (one clearance added, one changed, one removed),
 * in server mode (Node and the Worker) and static mode. What the page must show is worked out from the builds' times
 * and a scan of both snapshots' record shards, never from the history files the page reads.
 */
const skip = browserSkipReason();
if (skip) console.warn(`Browser tests skipped: ${skip}`);

/** What the page shows of a record's history, read from the DOM. */
type Shown = {
  firstSeen: string | null;
  inBaseline: boolean;
  changes: { kind: string; at: string; fields: string[] }[];
  noChanges: boolean;
  completeSince: string | null;
  text: string;
};

async function shownHistory(page: Page, base: string, kNumber: string): Promise<Shown> {
  await page.goto(`${base}#record=${kNumber}`);
  await page.waitForSelector('#record-history[data-loaded="true"]', { timeout: 20_000 });
  return page.evaluate(() => {
    const box = document.getElementById('record-history')!;
    const first = box.querySelector<HTMLElement>('.first-seen');
    return {
      firstSeen: first?.dataset.at ?? null,
      inBaseline: first?.textContent?.startsWith('In the data since') ?? false,
      changes: Array.from(box.querySelectorAll<HTMLElement>('.changes > li')).map((li) => ({
        kind: li.dataset.kind ?? '',
        at: li.dataset.at ?? '',
        fields: Array.from(li.querySelectorAll('li')).map((f) => f.textContent ?? ''),
      })),
      noChanges: box.querySelector('.no-changes') !== null,
      completeSince: box.querySelector<HTMLElement>('.complete-since')?.dataset.at ?? null,
      text: box.textContent ?? '',
    };
  });
}

const inWords = (at: string) => `${at.slice(0, 10)} ${at.slice(11, 16)} UTC`;
const LABELS: Record<string, string> = { applicant: 'Applicant', deviceName: 'Device name', decisionDate: 'Decision date', productCode: 'Product code' };
const quoted = (v: unknown) => (v === null || v === undefined || v === '' ? 'no value' : `“${String(v)}”`);

/** The history a record must show, from the scans: first seen, and each change with its members' old and new values. */
function expectedHistory(kNumber: string, builds: { at: string; records: Map<string, ClearanceRecord> }[]) {
  const changes: { kind: string; at: string; fields: string[] }[] = [];
  let firstSeen: string | null = null;
  for (let i = 0; i < builds.length; i++) {
    const now = builds[i]!;
    if (i === 0) {
      if (now.records.has(kNumber)) firstSeen = now.at;
      continue;
    }
    const truth = truthOf(builds[i - 1]!.records, now.records);
    const was = builds[i - 1]!.records.get(kNumber) as Record<string, unknown> | undefined;
    const is = now.records.get(kNumber) as Record<string, unknown> | undefined;
    if (truth.added.includes(kNumber)) {
      changes.push({ kind: 'added', at: now.at, fields: [] });
      firstSeen = now.at;
    }
    if (truth.removed.includes(kNumber)) changes.push({ kind: 'removed', at: now.at, fields: [] });
    const changed = truth.changed.find((c) => c.kNumber === kNumber);
    if (changed) {
      changes.push({ kind: 'changed', at: now.at, fields: changed.fields.map((f) => `${LABELS[f] ?? f} changed from ${quoted(was![f])} to ${quoted(is![f])}.`) });
    }
  }
  return { firstSeen, changes };
}

describe.skipIf(skip !== null)("the record view's history after two builds", () => {
  let work: string;
  let builds: TwoBuilds;
  let unchanged: string;
  let browser: Browser;
  const first = iso(FIXTURE_EPOCH);
  const second = iso(FIXTURE_EPOCH + DAY);

  beforeAll(async () => {
    work = await testTempDir('record-history-');
    builds = await twoBuilds(work);
    // A record in both builds with the same members: the scan's truth, not the history, says it did not change.
    const truth = truthOf(builds.before, builds.after);
    unchanged = [...builds.after.keys()].sort().find((k) => builds.before.has(k) && !truth.changed.some((c) => c.kNumber === k))!;
    browser = await launchChromium();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  test('the edit is exactly one added, one changed and one removed record (by a scan of both snapshots)', () => {
    expect(truthOf(builds.before, builds.after)).toEqual({ added: [ADDED], removed: [REMOVED], changed: [{ kNumber: CHANGED, fields: ['applicant'] }] });
    expect(unchanged).toMatch(/^K\d{6}$/);
  });

  test.each([
    ['server', 'node'],
    ['server', 'worker'],
    ['static', 'node'],
  ] as const)('in %s mode (%s): first seen, each change with its fields and values, and where the history starts', async (mode, via) => {
    const host: Host = await startHost(mode, builds.out, { via });
    const page = await browser.context.newPage();
    const errors: string[] = [];
    collectErrors(page, errors);
    try {
      const scans = [{ at: first, records: builds.before }, { at: second, records: builds.after }];
      for (const k of [ADDED, CHANGED, unchanged]) {
        const shown = await shownHistory(page, host.url, k);
        const expected = expectedHistory(k, scans);
        expect(await page.evaluate(() => document.documentElement.dataset.mode)).toBe(mode);
        expect({ k, firstSeen: shown.firstSeen, inBaseline: shown.inBaseline, changes: shown.changes }).toEqual({
          k,
          firstSeen: expected.firstSeen,
          inBaseline: expected.firstSeen === first,
          changes: expected.changes,
        });
        expect(shown.noChanges).toBe(expected.changes.length === 0);
        expect(shown.completeSince).toBe(first);
        expect(shown.text).toContain(`The history kept starts ${inWords(first)}`);
        expect(shown.text).not.toContain('Not given');
      }
      expect((await shownHistory(page, host.url, unchanged)).text).toContain(`No changes recorded since ${inWords(first)}.`);
      expect((await shownHistory(page, host.url, ADDED)).text).toContain(`First seen in the data ${inWords(second)}.`);
      expect(errors).toEqual([]);
      // The removed record is gone from the data: the page says so and shows no history. (A static host answers
      // 404 for its shard, which the browser logs; that is how a missing record is told.)
      await page.goto(`${host.url}#record=${REMOVED}`);
      await page.waitForFunction((k) => document.getElementById('record')?.textContent?.includes(`There is no 510(k) clearance ${k}`), REMOVED, { timeout: 20_000 });
      expect(await page.locator('#record-history').count()).toBe(0);
    } finally {
      await page.close();
      await host.close();
    }
  }, 120_000);

  test('after a build over a damaged history, the page says the history starts later and shows the changes kept', async () => {
    const copy = join(work, 'damaged', 'snapshot');
    await cp(join(work, 'site'), join(work, 'damaged'), { recursive: true, verbatimSymlinks: false });
    const month = join(copy, `history/changes/${first.slice(0, 7)}.ndjson`);
    const text = await readFile(month, 'utf8');
    await writeFile(month, text.replace(ADDED, 'K789998'));
    // Back to the fixture's own sources: the edit undone (the added record removed, the removed one added back).
    const third = iso(FIXTURE_EPOCH + 3 * DAY);
    const next = await buildFixture({ out: copy, sources: FIXTURE_SOURCES, epoch: FIXTURE_EPOCH + 3 * DAY });
    const restored = await scanRecords(next.dir);
    const host = await startHost('static', copy);
    const page = await browser.context.newPage();
    try {
      // The change sets of the damaged month are dropped: the history starts at the end of what was lost.
      const since = iso(FIXTURE_EPOCH + DAY);
      const expected = expectedHistory(CHANGED, [{ at: second, records: builds.after }, { at: third, records: restored }]);
      const shown = await shownHistory(page, host.url, CHANGED);
      expect(shown.changes).toEqual(expected.changes);
      expect(shown.completeSince).toBe(since);
      expect(shown.text).toContain(`The history kept starts ${inWords(since)}; changes before then are not recorded.`);
      const back = await shownHistory(page, host.url, REMOVED);
      expect([back.firstSeen, back.inBaseline, back.changes]).toEqual([third, false, [{ kind: 'added', at: third, fields: [] }]]);
    } finally {
      await page.close();
      await host.close();
    }
  }, 120_000);
});
