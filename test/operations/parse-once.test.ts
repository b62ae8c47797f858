import { beforeAll, describe, expect, it, vi } from 'vitest';
import * as grammar from '../../src/search/grammar.ts';
import { answerExport } from '../../src/api/export-answer.ts';
import { answerQuery, type QueryDeps } from '../../src/api/query-answer.ts';
import { sourceStateOf } from '../../src/api/source-state.ts';
import { openSnapshotDirectory } from '../../src/node/index.ts';
import { BUILT_IN_CURSOR_SECRET, CursorCodec } from '../../src/operations/cursor.ts';
import { OPERATION_REGISTRY } from '../../src/operations/registry.ts';
import type { Snapshot } from '../../src/snapshot/index.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';

// Every call of the grammar's parser is counted; it still parses.
vi.mock('../../src/search/grammar.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/search/grammar.ts')>();
  return { ...original, parseQuery: vi.fn(original.parseQuery) };
});
const parses = vi.mocked(grammar.parseQuery);

/**
 * A query is parsed once, where it enters (the search operation's `prepare`, GET /v1/export), and the parse travels
 * down: the engine's section plan, its match and its page do not parse it again.
 */
let snapshot: Snapshot;
const deps: QueryDeps = {
  operations: OPERATION_REGISTRY,
  cursors: new CursorCodec(BUILT_IN_CURSOR_SECRET),
  now: () => new Date(),
  sourceState: (s, now) => sourceStateOf({ manifest: s?.manifest ?? null, sync: null, now, maxAgeHours: 48 }),
  sourceStateJson: (s, now) => JSON.stringify(sourceStateOf({ manifest: s?.manifest ?? null, sync: null, now, maxAgeHours: 48 })),
};

beforeAll(async () => {
  snapshot = await openSnapshotDirectory(await buildFixtureSnapshot());
});

const base = { applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10 };
const body = (input: Record<string, unknown>) => new TextEncoder().encode(JSON.stringify({ version: 1, operation: 'device-510k.search', input: { ...base, ...input } }));

describe('a search request parses its query once', () => {
  it.each([
    ['plain words', { query: 'catheter' }],
    ['no words', { query: '' }],
    ['qualifiers', { query: 'device:catheter decided:2000..2030' }],
    ['OR and a phrase, sorted', { query: '"infusion pump" OR catheter', sort: 'decisionDate:asc' }],
    ['words with facets and stats', { query: 'system -pump', facets: [{ field: 'deviceClass' }], stats: true }],
  ])('%s', async (_name, input) => {
    parses.mockClear();
    const answer = await answerQuery(deps, snapshot, body(input), 'application/json');
    expect(answer.status).toBe(200);
    expect(parses).toHaveBeenCalledTimes(1);
    expect(parses).toHaveBeenCalledWith(input.query);
  });

  it('a query that breaks the grammar is invalid_input at input.query, parsed once', async () => {
    parses.mockClear();
    const answer = await answerQuery(deps, snapshot, body({ query: 'decided:someday' }), 'application/json');
    expect(answer.status).toBe(400);
    const error = JSON.parse(new TextDecoder().decode(answer.body)).error;
    expect(error.code).toBe('invalid_input');
    expect(error.details.map((d: { path: string }) => d.path)).toEqual(['input.query']);
    expect(parses).toHaveBeenCalledTimes(1);
  });

  it('an export parses its query once', async () => {
    parses.mockClear();
    const answer = await answerExport('/v1/export?query=device%3Acatheter&format=ndjson&sort=kNumber%3Aasc', snapshot);
    let lines = 0;
    for await (const chunk of answer.chunks) lines += new TextDecoder().decode(chunk).split('\n').filter(Boolean).length;
    expect(lines).toBeGreaterThan(0);
    expect(lines).toBe(Number(answer.headers['X-Total-Count']));
    expect(parses).toHaveBeenCalledTimes(1);
  });
});
