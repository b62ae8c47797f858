import { describe, expect, it } from 'vitest';
import { FACET_FIELDS } from '../../src/contract/index.ts';
import { answerQuery, type QueryDeps } from '../../src/api/query-answer.ts';
import { SourceStateJson, sourceStateOf } from '../../src/api/source-state.ts';
import { CursorCodec } from '../../src/operations/cursor.ts';
import { OPERATION_REGISTRY } from '../../src/operations/registry.ts';
import { openSnapshotDirectory } from '../../src/node/index.ts';
import { createTurns } from '../../src/server/turns.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';

/**
 * A search runs in slices in its connection's turn: a meta request that arrives while a search counting every facet
 * is running is answered before that search is, and a search whose deadline passes stops at its next slice.
 * Order of events only: no time is measured.
 */
const stateJson = new SourceStateJson();
const deps = (deadline?: QueryDeps['deadline']): QueryDeps => ({
  operations: OPERATION_REGISTRY,
  cursors: new CursorCodec(),
  now: () => new Date('2026-01-01T00:00:00Z'),
  sourceState: (snapshot, now, warnings) => sourceStateOf({ manifest: snapshot?.manifest ?? null, sync: null, now, maxAgeHours: 48, warnings }),
  sourceStateJson: (snapshot, now, warnings) => stateJson.json({ manifest: snapshot?.manifest ?? null, sync: null, now, maxAgeHours: 48, warnings }),
  ...(deadline && { deadline }),
});
const body = (operation: string, input: unknown) => new TextEncoder().encode(JSON.stringify({ version: 1, operation, input }));
const everyFacet = (page: number) =>
  body('device-510k.search', {
    query: '',
    applicant: null,
    productCode: null,
    yearFrom: null,
    yearTo: null,
    page,
    pageSize: 10,
    facets: FACET_FIELDS.map((field) => ({ field, size: null })),
  });

describe('search in turns', () => {
  it('answers a meta request that arrives during a long search before the search', async () => {
    const snapshot = await openSnapshotDirectory(await buildFixtureSnapshot());
    // Every pause gives the turn up (slices of 0 ms), so the order does not hang on how fast the machine is.
    const turns = createTurns(1000, setImmediate, () => performance.now(), 0);
    const events: string[] = [];
    // Load the index first, so the search below runs only in its turns.
    await answerQuery(deps(), snapshot, everyFacet(1), 'application/json');
    let pauses = 0;
    let meta: Promise<unknown> | null = null;
    const search = turns.run({}, (pause) =>
      answerQuery(deps(), snapshot, everyFacet(2), 'application/json', undefined, async () => {
        // The meta request comes in while the search is between its slices.
        if (++pauses === 1) meta = turns.run({}, () => answerQuery(deps(), snapshot, body('device-510k.meta', {}), 'application/json')).then((a) => void events.push(`meta ${a.status}`));
        await pause();
      }),
    ).then((a) => void events.push(`search ${a.status} after ${pauses} slices`));
    await search;
    await meta;
    expect(pauses).toBeGreaterThan(FACET_FIELDS.length);
    expect(events[0]).toBe('meta 200');
    expect(events[1]).toMatch(/^search 200 after \d+ slices$/);
  });

  it('stops the search at its next slice once its deadline has rejected it', async () => {
    const snapshot = await openSnapshotDirectory(await buildFixtureSnapshot());
    await answerQuery(deps(), snapshot, everyFacet(1), 'application/json');
    let expire: (err: Error) => void = () => {};
    let running: Promise<unknown> = Promise.resolve();
    // A deadline the test makes pass: it rejects the answer when told to.
    const deadline: QueryDeps['deadline'] = <T>(work: Promise<T>) =>
      new Promise<T>((resolve, reject) => {
        expire = reject;
        running = work;
        work.then(resolve, reject);
      });
    let pauses = 0;
    let afterDeadline = 0;
    let expired = false;
    const answer = await answerQuery(deps(deadline), snapshot, everyFacet(3), 'application/json', undefined, async () => {
      if (expired) afterDeadline++;
      if (++pauses === 3) {
        expired = true;
        expire(new Error('device-510k.search did not finish within 30000 ms'));
      }
      // Let the rejection reach the operation before its next slice.
      for (let i = 0; i < 5; i++) await Promise.resolve();
    });
    expect(answer.status).toBe(500);
    // The operation's own work settles too, stopped rather than finished.
    expect(await running.then(() => 'finished', () => 'stopped')).toBe('stopped');
    expect(pauses).toBe(3);
    expect(afterDeadline).toBe(0);
  });
});
