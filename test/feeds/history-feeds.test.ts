import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker, type WorkerTarget } from '../../build/worker/local.ts';
import { ChangeSet, HISTORY_INDEX_PATH, HistoryIndex, historyMonthPath } from '../../src/contract/history.ts';
import { LAYOUT, MetaFile, type ClearanceRecord } from '../../src/contract/index.ts';
import { checkAtom, checkJsonFeed } from '../helpers/feed-check.ts';
import { buildFixture, FIXTURE_EPOCH, FIXTURE_SOURCES } from '../helpers/fixture-snapshot.ts';
import { startServer, type Running } from '../server/helpers.ts';
import { readModel } from '../helpers/lineage-model.ts';
import { ADDED, CHANGED, DAY, iso, NEW_APPLICANT, REMOVED, truthOf, twoBuilds } from './two-builds.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/**
 * Two builds into one published link, the second with one clearance added, one changed and one removed: the history,
 * GET /v1/changes, GET /v1/feed (Atom and JSON Feed, on the Node server and the Worker) and the static feeds name
 * exactly those three. What is expected comes from scanning both snapshots' record shards, not from the history.
 */
let work: string;
let out: string;
let edited: string[];
let first: Awaited<ReturnType<typeof buildFixture>>;
let second: Awaited<ReturnType<typeof buildFixture>>;
let before: Map<string, ClearanceRecord>;
let after: Map<string, ClearanceRecord>;
let node: Running;
let worker: WorkerTarget;

beforeAll(async () => {
  work = await testTempDir('feeds-');
  ({ out, edited, first, second, before, after } = await twoBuilds(work));
  [node, worker] = await Promise.all([startServer({ snapshotPath: out }), startWorker({ snapshotPath: out, storage: 'r2' })]);
}, 120_000);

afterAll(async () => {
  await Promise.all([node?.close(), worker?.close()]);
  if (work) await rm(work, { recursive: true, force: true });
});

const hosts = () => [
  { name: 'node', url: node.url },
  { name: 'worker', url: worker.url },
];

describe('two builds into one published link', () => {
  it('the fixture edit is exactly one added, one changed and one removed record (by a scan of both snapshots)', () => {
    expect(truthOf(before, after)).toEqual({ added: [ADDED], removed: [REMOVED], changed: [{ kNumber: CHANGED, fields: ['applicant'] }] });
  });

  it('the first build records one baseline, not every record as added', async () => {
    const index = HistoryIndex.parse(JSON.parse(await readFile(join(first.dir, HISTORY_INDEX_PATH), 'utf8')));
    expect(index.sets).toEqual([{ at: iso(FIXTURE_EPOCH), baseline: true, path: historyMonthPath(iso(FIXTURE_EPOCH)), counts: { added: 0, changed: 0, removed: 0 } }]);
    expect(first.manifest.files.map((f) => f.path)).toEqual(expect.arrayContaining([HISTORY_INDEX_PATH, 'history/records.json', historyMonthPath(iso(FIXTURE_EPOCH))]));
  });

  it.each(['node', 'worker'])('GET /v1/changes on %s lists exactly the three changes, with the old and new values', async (name) => {
    const url = hosts().find((h) => h.name === name)!.url;
    const res = await fetch(`${url}/v1/changes?since=${iso(FIXTURE_EPOCH)}`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { sets: ChangeSet[]; completeSince: string };
    expect(body.completeSince).toBe(iso(FIXTURE_EPOCH));
    expect(body.sets).toHaveLength(1);
    const set = ChangeSet.parse({ ...body.sets[0], changes: body.sets[0]!.changes });
    expect(set.at).toBe(iso(FIXTURE_EPOCH + DAY));
    expect(set.changes.map((c) => [c.kNumber, c.kind, c.fields])).toEqual([
      [CHANGED, 'changed', ['applicant']],
      [REMOVED, 'removed', []],
      [ADDED, 'added', []],
    ]);
    const changed = set.changes.find((c) => c.kind === 'changed')!;
    expect(changed.values).toEqual({ applicant: { from: before.get(CHANGED)!.applicant, to: NEW_APPLICANT } });
    expect(set.changes.find((c) => c.kind === 'removed')!.was?.deviceName).toBe(before.get(REMOVED)!.deviceName);

    const nd = await fetch(`${url}/v1/changes?since=2026-01-01&format=ndjson`);
    expect(nd.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const lines = (await nd.text()).trim().split('\n').map((l) => JSON.parse(l) as { kNumber: string; kind: string });
    expect(lines.map((l) => `${l.kind} ${l.kNumber}`)).toEqual([`changed ${CHANGED}`, `removed ${REMOVED}`, `added ${ADDED}`]);

    const none = await fetch(`${url}/v1/changes?since=${iso(FIXTURE_EPOCH + DAY)}`);
    expect(((await none.json()) as { sets: unknown[] }).sets).toEqual([]);
  });

  it.each(['node', 'worker'])('GET /v1/changes on %s with a since before the history: every set kept, and where the history starts', async (name) => {
    const url = hosts().find((h) => h.name === name)!.url;
    // Both builds' times, read from the snapshots' manifests rather than from the history under test.
    const builds = [first.manifest.generatedAt, second.manifest.generatedAt];
    for (const format of ['json', 'ndjson']) {
      const res = await fetch(`${url}/v1/changes?since=2025-12-31&format=${format}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-history-starts')).toBe(iso(FIXTURE_EPOCH));
      if (format === 'ndjson') {
        const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l) as { kNumber: string; kind: string; at: string });
        expect(lines.map((l) => `${l.kind} ${l.kNumber}`)).toEqual([`changed ${CHANGED}`, `removed ${REMOVED}`, `added ${ADDED}`]);
        continue;
      }
      const body = (await res.json()) as { sets: ChangeSet[]; completeSince: string; historyStartsAfterSince?: boolean; since: string };
      expect(body.since).toBe('2025-12-31T00:00:00.000Z');
      expect(body.completeSince).toBe(iso(FIXTURE_EPOCH));
      expect(body.historyStartsAfterSince).toBe(true);
      expect(body.sets.map((s) => [s.at, s.baseline])).toEqual([[builds[0], true], [builds[1], false]]);
    }
    // A since within the history has neither the member nor the header.
    const within = await fetch(`${url}/v1/changes?since=${iso(FIXTURE_EPOCH)}`);
    expect(within.headers.get('x-history-starts')).toBeNull();
    expect(Object.keys((await within.json()) as object)).toEqual(['snapshot', 'since', 'completeSince', 'sets']);
  });

  it.each([
    ['since=yesterday', 'since', 'must be a date'],
    ['since=2026-02-30', 'since', 'must be a date'],
    ['', 'since', 'is required'],
    ['since=2026-01-01&format=xml', 'format', 'must be "json" or "ndjson"'],
    ['since=2026-01-01&until=2026-02-01', 'until', 'is not a parameter of GET /v1/changes'],
  ])('GET /v1/changes?%s is a 400 naming %s', async (qs, path, words) => {
    for (const { url } of hosts()) {
      const res = await fetch(`${url}/v1/changes?${qs}`);
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { code: string; message: string; details: { path: string; message: string }[] } };
      expect(body.error.code).toBe('invalid_input');
      expect(body.error.details[0]!.path).toBe(path);
      expect(body.error.message).toContain(words);
    }
  });

  it.each(['node', 'worker'])('GET /v1/feed on %s: valid Atom, the added record first, the changed one updated at the second build', async (name) => {
    const url = hosts().find((h) => h.name === name)!.url;
    const res = await fetch(`${url}/v1/feed`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/atom+xml; charset=utf-8');
    const { feed, problems } = checkAtom(await res.text());
    expect(problems).toEqual([]);
    expect(feed.entries).toHaveLength(50);
    expect(feed.updated).toBe(iso(FIXTURE_EPOCH + DAY).replace('.000Z', 'Z'));
    // Only the added record was first seen after the baseline; the rest follow by decision date, newest first.
    expect(feed.entries[0]!.id).toBe(`tag:device-510k,2026:clearance/${ADDED}`);
    const rest = [...after.values()].filter((r) => r.kNumber !== ADDED).sort((a, b) => ((b.decisionDate ?? '') < (a.decisionDate ?? '') ? -1 : (b.decisionDate ?? '') > (a.decisionDate ?? '') ? 1 : a.kNumber < b.kNumber ? 1 : -1));
    expect(feed.entries.slice(1).map((e) => e.id.split('/')[1])).toEqual(rest.slice(0, 49).map((r) => r.kNumber));
    const top = feed.entries[0]!;
    const record = after.get(ADDED)!;
    expect(top.title).toBe(`${record.deviceName} — ${record.applicant}`);
    expect(top.published).toBe(`${record.decisionDate}T00:00:00Z`);
    expect(top.links).toEqual([
      { rel: 'alternate', href: `${url}/#record=${ADDED}` },
      { rel: 'related', href: `https://www.accessdata.fda.gov/scripts/cdrh/cfdocs/cfpmn/pmn.cfm?ID=${ADDED}` },
    ]);
    expect(feed.links.find((l) => l.rel === 'self')?.href).toBe(`${url}/v1/feed`);

    const byApplicant = checkAtom(await (await fetch(`${url}/v1/feed?applicant=${encodeURIComponent(NEW_APPLICANT)}`)).text());
    expect(byApplicant.problems).toEqual([]);
    expect(byApplicant.feed.entries.map((e) => [e.id.split('/')[1], e.updated])).toEqual([[CHANGED, iso(FIXTURE_EPOCH + DAY).replace('.000Z', 'Z')]]);

    const code = record.productCode!;
    const byCode = checkAtom(await (await fetch(`${url}/v1/feed?productCode=${code}`)).text());
    expect(byCode.feed.title).toMatch(new RegExp(`^510\\(k\\) clearances: ${code} · `));
    expect(byCode.feed.entries.map((e) => e.id.split('/')[1])).toEqual(
      [ADDED, ...[...after.values()].filter((r) => r.productCode === code && r.kNumber !== ADDED).sort((a, b) => ((a.decisionDate ?? '') < (b.decisionDate ?? '') ? 1 : -1)).map((r) => r.kNumber)].slice(0, 50),
    );

    const removed = checkAtom(await (await fetch(`${url}/v1/feed?kind=removed`)).text());
    expect(removed.problems).toEqual([]);
    expect(removed.feed.entries.map((e) => e.id)).toEqual([`tag:device-510k,2026:clearance/${REMOVED}/removed`]);
    expect(removed.feed.entries[0]!.title).toContain(before.get(REMOVED)!.deviceName);
  });

  it.each(['node', 'worker'])('GET /v1/feed?format=json on %s is a JSON Feed 1.1 with the same entries', async (name) => {
    const url = hosts().find((h) => h.name === name)!.url;
    const res = await fetch(`${url}/v1/feed?format=json&limit=3`);
    expect(res.headers.get('content-type')).toBe('application/feed+json; charset=utf-8');
    const feed = (await res.json()) as { items: { id: string; external_url: string; date_modified: string }[] };
    expect(checkJsonFeed(feed)).toEqual([]);
    expect(feed.items).toHaveLength(3);
    expect(feed.items[0]!.id).toBe(`tag:device-510k,2026:clearance/${ADDED}`);
    expect(feed.items[0]!.external_url).toBe(`https://www.accessdata.fda.gov/scripts/cdrh/cfdocs/cfpmn/pmn.cfm?ID=${ADDED}`);
  });

  it.each(['node', 'worker'])('GET /v1/feed on %s answers a conditional request with 304', async (name) => {
    const url = hosts().find((h) => h.name === name)!.url;
    const res = await fetch(`${url}/v1/feed?productCode=DQY`);
    const etag = res.headers.get('etag');
    const lastModified = res.headers.get('last-modified');
    expect(etag).toMatch(/^"[0-9a-f]{16}-[0-9a-f]{32}(-gzip|-br)?"$/);
    expect(lastModified).toBe(new Date((FIXTURE_EPOCH + DAY) * 1000).toUTCString());
    expect((await fetch(`${url}/v1/feed?productCode=DQY`, { headers: { 'If-None-Match': etag! } })).status).toBe(304);
    expect((await fetch(`${url}/v1/feed?productCode=DQY`, { headers: { 'If-Modified-Since': lastModified! } })).status).toBe(304);
    expect((await fetch(`${url}/v1/feed?productCode=DQY`, { headers: { 'If-None-Match': '"other"' } })).status).toBe(200);
    expect((await fetch(`${url}/v1/feed?productCode=DQZ`, { headers: { 'If-None-Match': etag! } })).status).toBe(200);
  });

  it.each(['node', 'worker'])('GET /v1/feed?predicate= on %s: the clearances that name the device, by the edge files, newest first', async (name) => {
    const url = hosts().find((h) => h.name === name)!.url;
    // The edge files read as text: the records of the second build that name each device, by any kind of edge.
    const model = readModel(FIXTURE_SOURCES[4] as string);
    const citing = new Map<string, ClearanceRecord[]>();
    for (const r of after.values()) {
      for (const to of new Set((model.forward.get(r.kNumber) ?? []).map((e) => e.to))) citing.set(to, [...(citing.get(to) ?? []), r]);
    }
    const [device, records] = [...citing].sort((a, b) => b[1].length - a[1].length || (a[0] < b[0] ? -1 : 1))[0]!;
    expect(records.length).toBeGreaterThan(1);
    // None was first seen after the baseline: decision date descending (undated last), then K number descending.
    const want = [...records]
      .sort((a, b) => (a.decisionDate === b.decisionDate ? (a.kNumber < b.kNumber ? 1 : -1) : a.decisionDate === null ? 1 : b.decisionDate === null ? -1 : a.decisionDate < b.decisionDate ? 1 : -1))
      .map((r) => r.kNumber);
    const res = await fetch(`${url}/v1/feed?predicate=${device.toLowerCase()}`);
    expect(res.status).toBe(200);
    const { feed, problems } = checkAtom(await res.text());
    expect(problems).toEqual([]);
    expect(feed.title).toBe(`510(k) clearances: naming ${device}`);
    expect(feed.entries.map((e) => e.id.split('/')[1])).toEqual(want.slice(0, 50));
    // With a query beside it: both apply, as in any search's feed.
    const first = after.get(want[0]!)!;
    const both = (await (await fetch(`${url}/v1/feed?format=json&predicate=${device}&productCode=${first.productCode}`)).json()) as { title: string; items: { id: string }[] };
    expect(both.items.map((i) => i.id.split('/')[1])).toEqual(want.filter((k) => after.get(k)!.productCode === first.productCode));
    expect(both.title.startsWith(`510(k) clearances: naming ${device} · ${first.productCode} · `)).toBe(true);
  });

  it.each([
    ['format=rss', 'format'],
    ['limit=501', 'limit'],
    ['limit=0', 'limit'],
    ['kind=gone', 'kind'],
    ['sort=kNumber:asc', 'sort'],
    ['yearFrom=1990&yearTo=1980', 'yearTo'],
    ['kind=removed&query=stent', 'query'],
    ['colour=red', 'colour'],
    ['predicate=123456', 'predicate'],
    ['predicate=K000001&predicate=K000002', 'predicate'],
    ['kind=removed&predicate=K000001', 'predicate'],
  ])('GET /v1/feed?%s is a 400 naming %s', async (qs, path) => {
    for (const { url } of hosts()) {
      const res = await fetch(`${url}/v1/feed?${qs}`);
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { code: string; details: { path: string }[] } };
      expect(body.error.code).toBe('invalid_input');
      expect(body.error.details[0]!.path).toBe(path);
    }
  });

  it('the static feeds name the added record first and the removed one alone', async () => {
    const newest = checkAtom(await readFile(join(second.dir, 'feeds/new.atom'), 'utf8'));
    expect(newest.problems).toEqual([]);
    expect(newest.feed.entries[0]!.id).toBe(`tag:device-510k,2026:clearance/${ADDED}`);
    expect(newest.feed.entries.filter((e) => e.id.endsWith(REMOVED))).toEqual([]);
    const json = JSON.parse(await readFile(join(second.dir, 'feeds/new.json'), 'utf8')) as { items: { id: string }[] };
    expect(checkJsonFeed(json)).toEqual([]);
    expect(json.items.map((i) => i.id)).toEqual(newest.feed.entries.map((e) => e.id));
    const removed = checkAtom(await readFile(join(second.dir, 'feeds/removed.atom'), 'utf8'));
    expect(removed.problems).toEqual([]);
    expect(removed.feed.entries.map((e) => e.id)).toEqual([`tag:device-510k,2026:clearance/${REMOVED}/removed`]);
    // One feed per review panel of the records, and the added record first in its panel's.
    const panels = new Set([...after.values()].map((r) => r.advisoryCommittee).filter((p) => p !== null));
    const files = second.manifest.files.map((f) => f.path).filter((p) => /^feeds\/panel\/[^/]+\.atom$/.test(p));
    expect(files).toHaveLength(panels.size);
    let found = false;
    for (const path of files) {
      const { feed, problems } = checkAtom(await readFile(join(second.dir, path), 'utf8'));
      expect(problems).toEqual([]);
      if (feed.title.includes(`${after.get(ADDED)!.advisoryCommittee} panel`)) {
        expect(feed.entries[0]!.id).toBe(`tag:device-510k,2026:clearance/${ADDED}`);
        found = true;
      }
    }
    expect(found).toBe(true);
  });
});

describe('builds after the second', () => {
  it('a third build with no change adds nothing to the history', async () => {
    const copy = join(work, 'third', 'snapshot');
    await cp(join(work, 'site'), join(work, 'third'), { recursive: true, verbatimSymlinks: false });
    const third = await buildFixture({ out: copy, sources: edited, epoch: FIXTURE_EPOCH + 2 * DAY });
    for (const f of second.manifest.files.filter((f) => f.path.startsWith('history/'))) {
      expect(third.manifest.files.find((g) => g.path === f.path), f.path).toEqual(f);
    }
    expect(third.manifest.files.filter((f) => f.path.startsWith('history/')).length).toBe(second.manifest.files.filter((f) => f.path.startsWith('history/')).length);
    expect(third.history).toEqual({ sets: 2, completeSince: iso(FIXTURE_EPOCH), dropped: [] });
  });

  it('a build over a damaged history still builds, keeps what verifies and says what it dropped', async () => {
    const copy = join(work, 'damaged', 'snapshot');
    await cp(join(work, 'site'), join(work, 'damaged'), { recursive: true, verbatimSymlinks: false });
    // Same length, still JSON: only the manifest's sha256 tells. The month file holds both change sets.
    const month = join(copy, historyMonthPath(iso(FIXTURE_EPOCH)));
    const text = await readFile(month, 'utf8');
    expect(text).toContain(ADDED);
    await writeFile(month, text.replace(ADDED, 'K789998'));
    const next = await buildFixture({ out: copy, sources: FIXTURE_SOURCES, epoch: FIXTURE_EPOCH + 3 * DAY });
    expect(next.history.dropped).toEqual([expect.stringMatching(/^history\/changes\/2026-01\.ndjson did not verify .*its change sets were dropped$/)]);
    // The changes back to the fixture are still recorded: the edit undone.
    const index = HistoryIndex.parse(JSON.parse(await readFile(join(next.dir, HISTORY_INDEX_PATH), 'utf8')));
    expect(index.sets.map((s) => [s.at, s.counts])).toEqual([[iso(FIXTURE_EPOCH + 3 * DAY), { added: 1, changed: 1, removed: 1 }]]);
    expect(index.completeSince).toBe(iso(FIXTURE_EPOCH + DAY));
    expect(index.dropped).toEqual(next.history.dropped);
    // The records' first-seen dates verified: the undone removal is new again, the undone addition is gone.
    const records = JSON.parse(await readFile(join(next.dir, 'history/records.json'), 'utf8')) as { firstSeen: Record<string, string[]> };
    expect(records.firstSeen).toEqual({ [iso(FIXTURE_EPOCH + 3 * DAY)]: [REMOVED] });
    const meta = MetaFile.parse(JSON.parse(await readFile(join(next.dir, LAYOUT.meta), 'utf8')));
    expect(meta.sourceNotes.join(' ')).toContain('dropped: history/changes/2026-01.ndjson did not verify');
  }, 60_000);
});
