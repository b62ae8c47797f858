import { describe, expect, it } from 'vitest';
import type { Manifest } from '../../src/contract/index.ts';
import { pathOf } from '../../src/api/issues.ts';
import { isJsonContentType, pickEncoding } from '../../src/api/media.ts';
import { failedLastSync, sourceStateOf } from '../../src/api/source-state.ts';
import { cacheControlFor } from '../../src/server/static.ts';

/** The server's pure parts, with tables of cases: content negotiation, sourceState, error paths, cache headers. */

describe('pickEncoding', () => {
  it.each([
    [undefined, 'identity'],
    ['', 'identity'],
    ['br', 'br'],
    ['gzip', 'gzip'],
    ['gzip, br', 'br'],
    ['gzip;q=1, br;q=0.5', 'gzip'],
    ['br;q=0, gzip', 'gzip'],
    ['br;q=0, gzip;q=0', 'identity'],
    ['*', 'br'],
    ['*;q=0', 'identity'],
    ['*, br;q=0', 'gzip'],
    ['deflate', 'identity'],
    ['x-gzip', 'gzip'],
    ['BR', 'br'],
  ])('%j → %s', (header, expected) => {
    expect(pickEncoding(header)).toBe(expected);
  });
});

describe('isJsonContentType', () => {
  it.each([
    ['application/json', true],
    ['application/json; charset=utf-8', true],
    ['APPLICATION/JSON ; charset=UTF-8', true],
    [' application/json', true],
    [undefined, false],
    ['', false],
    ['text/json', false],
    ['application/jsonp', false],
    ['application/ld+json', false],
    ['text/plain; application/json', false],
  ])('%j → %s', (header, expected) => {
    expect(isJsonContentType(header)).toBe(expected);
  });
});

describe('sourceStateOf', () => {
  const manifest = {
    sourceRevision: `sha256:${'a'.repeat(64)}`,
    generatedAt: '2026-08-10T00:00:00.000Z',
    lastSuccessfulSyncAt: null,
    decisionDateMax: '2026-08-07',
    sources: [{ name: 'data/fda/510k/x/pmn7680.txt' }],
  } as unknown as Manifest;
  const now = new Date('2026-08-20T12:00:00.000Z');
  const base = { manifest, sync: null, now, maxAgeHours: 48 };

  it('no sync: unknown, with the evidence the contract gives as its example', () => {
    expect(sourceStateOf(base)).toEqual({
      mode: 'corpus',
      availability: 'available',
      freshness: 'unknown',
      freshnessEvidence: 'built from bundled files; no sync recorded; newest decision 2026-08-07',
      sourceRevision: manifest.sourceRevision,
      snapshotGeneratedAt: manifest.generatedAt,
      lastSuccessfulSyncAt: null,
      servedAt: '2026-08-20T12:00:00.000Z',
      warnings: [],
    });
  });

  it.each([
    ['2026-08-20T11:00:00.000Z', 'current'],
    ['2026-08-18T12:00:00.000Z', 'current'],
    ['2026-08-18T11:59:59.999Z', 'stale'],
    ['2026-01-01T00:00:00.000Z', 'stale'],
  ])('last sync %s → %s', (at, freshness) => {
    const state = sourceStateOf({ ...base, sync: { lastAttemptAt: at, lastSuccessfulSyncAt: at, lastFailure: null } });
    expect(state.freshness).toBe(freshness);
    expect(state.lastSuccessfulSyncAt).toBe(at);
    expect(state.warnings).toHaveLength(freshness === 'stale' ? 1 : 0);
  });

  it('takes the newer of the manifest and the state file', () => {
    const older = '2026-08-01T00:00:00.000Z';
    const newer = '2026-08-20T00:00:00.000Z';
    const m = { ...manifest, lastSuccessfulSyncAt: newer } as Manifest;
    expect(sourceStateOf({ ...base, manifest: m, sync: { lastAttemptAt: older, lastSuccessfulSyncAt: older, lastFailure: null } }).lastSuccessfulSyncAt).toBe(newer);
    expect(sourceStateOf({ ...base, manifest: { ...manifest, lastSuccessfulSyncAt: older } as Manifest, sync: { lastAttemptAt: newer, lastSuccessfulSyncAt: newer, lastFailure: null } }).lastSuccessfulSyncAt).toBe(newer);
  });

  it('no snapshot: unavailable, with nulls', () => {
    expect(sourceStateOf({ ...base, manifest: null })).toMatchObject({ availability: 'unavailable', freshness: 'unknown', sourceRevision: null, snapshotGeneratedAt: null, lastSuccessfulSyncAt: null });
  });

  it('adds the operation warnings after its own', () => {
    const at = '2026-01-01T00:00:00.000Z';
    const state = sourceStateOf({ ...base, sync: { lastAttemptAt: at, lastSuccessfulSyncAt: at, lastFailure: null }, warnings: ['Cursor sentence.'] });
    expect(state.warnings).toHaveLength(2);
    expect(state.warnings[1]).toBe('Cursor sentence.');
  });

  it.each([
    [{ lastAttemptAt: '2026-08-20T00:00:00Z', lastSuccessfulSyncAt: '2026-08-19T00:00:00Z', lastFailure: { at: '2026-08-20T00:00:00Z', reason: 'x' } }, true],
    [{ lastAttemptAt: '2026-08-20T00:00:00Z', lastSuccessfulSyncAt: '2026-08-20T00:00:00Z', lastFailure: { at: '2026-08-19T00:00:00Z', reason: 'x' } }, false],
    [{ lastAttemptAt: '2026-08-21T00:00:00Z', lastSuccessfulSyncAt: null, lastFailure: { at: '2026-08-20T00:00:00Z', reason: 'x' } }, false],
    [{ lastAttemptAt: null, lastSuccessfulSyncAt: null, lastFailure: { at: '2026-08-20T00:00:00Z', reason: 'x' } }, true],
    [{ lastAttemptAt: null, lastSuccessfulSyncAt: null, lastFailure: null }, false],
  ])('failedLastSync(%j) → %s', (sync, failed) => {
    expect(failedLastSync(sync) !== null).toBe(failed);
  });
});

describe('paths', () => {
  it.each([
    ['input', ['pageSize'], 'input.pageSize'],
    ['input', [], 'input'],
    ['input', ['a', 0, 'b'], 'input.a[0].b'],
    ['input', ['odd key'], 'input["odd key"]'],
  ] as const)('pathOf(%j, %j) → %s', (prefix, path, expected) => {
    expect(pathOf(prefix, path)).toBe(expected);
  });

  it.each([
    ['records/K1234.json', 'public, no-cache'],
    ['manifest.json', 'public, no-cache'],
    ['pagefind/pagefind-entry.json', 'public, no-cache'],
    ['pagefind/fragment/en_6a3c1f2.pf_fragment', 'public, max-age=31536000, immutable'],
    ['pagefind/index/en_a1b2c3d4e5.pf_index', 'public, max-age=31536000, immutable'],
    ['search/part-0a1b2c3d4e5f.bin', 'public, max-age=31536000, immutable'],
    ['product-codes/A.json', 'public, no-cache'],
  ])('cacheControlFor(%j) → %s', (path, expected) => {
    expect(cacheControlFor(path)).toBe(expected);
  });
});
