import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LAYOUT, ShardIndex } from '../../src/contract/index.ts';
import { CursorCodec } from '../../src/operations/index.ts';
import { wrkScript } from '../../bench/lib/load.ts';
import { lookupTargets } from '../../bench/lib/lookups.ts';
import { renderPlot } from '../../bench/lib/plot.ts';
import { makeQueries, sampleRecords } from '../../bench/lib/queries.ts';
import { requestPathVerdicts, verdicts } from '../../bench/lib/report.ts';
import type { Results, SizeResults } from '../../bench/lib/results.ts';
import { BENCH_CURSOR_SECRET } from '../../bench/lib/server.ts';
import { kb, median, middleRun, percentile, ratio, seconds } from '../../bench/lib/stats.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';

/** The benchmark's pure parts: its arithmetic, its load script, its request lists, its verdicts and its plot. */

describe('stats', () => {
  it.each([
    [[5, 1, 4, 2, 3], 50, 3],
    [[5, 1, 4, 2, 3], 99, 5],
    [[5, 1, 4, 2, 3], 1, 1],
    [[7], 99, 7],
  ])('percentile(%j, %d) is %d (nearest rank)', (xs, p, want) => {
    expect(percentile(xs, p)).toBe(want);
  });

  it('median takes the middle round, or the mean of the two middle ones, and ignores missing figures', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([Number.NaN, 5, 1])).toBe(3);
    expect(median([])).toBeNaN();
  });

  it('middleRun takes a run that was measured (the later middle one of an even count); kb and seconds write the page benches’ figures', () => {
    expect(middleRun([3, 1, 2])).toBe(2);
    expect(middleRun([4, 1, 3, 2])).toBe(3);
    expect(middleRun([2480])).toBe(2480);
    expect(kb(280_576)).toBe('274 KB');
    expect(kb(511)).toBe('0 KB');
    expect(seconds(2480)).toBe('2.48 s');
    expect(seconds(1404.9)).toBe('1.40 s');
  });

  it('ratio keeps two decimals below 10 and groups large ones', () => {
    expect(ratio(0.456)).toBe('0.46×');
    expect(ratio(13.64)).toBe('13.6×');
    expect(ratio(20867.4)).toBe('20,867×');
    expect(ratio(Number.NaN)).toBe('n/a');
  });
});

describe('wrk script', () => {
  it('quotes every body in a Lua long string that its text cannot close', () => {
    const body = '{"a":"]]","b":"]=]"}';
    const script = wrkScript([
      { method: 'POST', path: '/v1/query', body },
      { method: 'GET', path: '/meta.json' },
      { method: 'GET', path: '/v1/feed', headers: { 'Accept-Encoding': 'gzip' } },
    ]);
    expect(script).toContain(`[==[${body}]==]`);
    expect(script).toContain('{ [[GET]], [[/meta.json]], nil, {  } }');
    // A key in brackets is spaced from its long string: `[[[` would open a long string, and Lua refuses the script.
    expect(script).toContain('{ [[GET]], [[/v1/feed]], nil, { [ [[Accept-Encoding]] ] = [[gzip]] } }');
    expect(script).not.toContain('[[[');
    expect(script).toContain('math.random(#formatted)');
  });
});

describe('lookup targets over the fixture snapshot', async () => {
  const dir = await buildFixtureSnapshot();
  const targets = await lookupTargets(dir, 20_000);
  const records = ShardIndex.parse(JSON.parse(await readFile(join(dir, LAYOUT.recordIndex), 'utf8')));
  const byName = new Map(targets.map((t) => [t.name, t]));

  it('has the five lookups, with as many nginx requests as ours', () => {
    expect(targets.map((t) => t.name)).toEqual(['detail', 'detail, hot', 'classification', 'meta', 'catalog']);
    for (const t of targets) expect(t.nginx.length).toBe(t.ours.length);
  });

  it('asks detail for the first and last K number of every shard, and nginx for that shard', () => {
    const detail = byName.get('detail')!;
    const asked = detail.ours.map((r) => (JSON.parse(r.body!) as { input: { id: string } }).input.id);
    const expected = records.shards.flatMap((s) => [...new Set([s.first, s.last])]);
    expect(asked).toEqual(expected);
    const paths = records.shards.flatMap((s) => (s.first === s.last ? [s.path] : [s.path, s.path])).map((p) => `/${p}`);
    expect(detail.nginx.map((r) => r.path)).toEqual(paths);
  });

  it('makes catalog pages that are exactly one shard each, with cursors the server will accept', () => {
    const catalog = byName.get('catalog')!;
    const codec = new CursorCodec(BENCH_CURSOR_SECRET);
    catalog.ours.forEach((r, i) => {
      const input = (JSON.parse(r.body!) as { input: { kind: string; limit: number; cursor: string | null } }).input;
      const shard = records.shards[i]!;
      expect(input.kind).toBe('clearance');
      expect(input.limit).toBe(shard.count);
      if (i === 0) expect(input.cursor).toBeNull();
      else expect(codec.decode(input.cursor!)?.a).toBe(records.shards[i - 1]!.last);
      expect(catalog.nginx[i]!.path).toBe(`/${shard.path}`);
    });
  });

  it('sends nginx only to files the snapshot has', async () => {
    const paths = new Set(targets.flatMap((t) => t.nginx.map((r) => r.path)));
    for (const p of paths) await expect(access(join(dir, p))).resolves.toBeUndefined();
  });

  it('draws the same queries from the same snapshot and seed, and other ones from another seed', async () => {
    const sample = await sampleRecords(dir, 200);
    const a = makeQueries(sample, 200, 510);
    expect(makeQueries(sample, 200, 510)).toEqual(a);
    expect(makeQueries(sample, 200, 511)).not.toEqual(a);
    expect(new Set(a.map((q) => q.kind)).size).toBeGreaterThan(8);
  });
});

function size(label: string, records: number, ratios: number[], underLoadBytes: number, speedup: number): SizeResults {
  const side = { rps: 1, p50Ms: 1, p99Ms: 1, bytesPerResponse: 1, failures: 0, rounds: [] };
  const engine = { loadMs: 1, rssBytes: 1, p50Ms: 1, p99Ms: 1, rounds: [], byKind: {} };
  return {
    label,
    records,
    snapshotId: '0000000000000000',
    build: { seconds: 10, peakRssBytes: 100 * 2 ** 20, records, files: 1, bytes: 1, snapshotId: '0000000000000000', dir: '/x', stages: [], measuredAt: '2026-01-01T00:00:00Z', cached: false, generateSeconds: null },
    lookups: ratios.map((r, i) => ({ name: `op${i}`, operation: 'meta' as const, nginxFile: 'meta.json', distinctRequests: 1, ours: side, nginx: side, floor: null, ratio: r })),
    searchHttp: null,
    search: {
      queries: 1,
      ours: engine,
      sqlite: { ...engine, p50Ms: speedup, p99Ms: speedup, buildSeconds: 1, databaseBytes: 1 },
      speedupP50: speedup,
      speedupP99: speedup,
      compared: 1,
      mismatches: 0,
      mismatchExamples: [],
      skipped: null,
    },
    memory: { afterStartBytes: 100 * 2 ** 20, afterFirstSearchBytes: 100 * 2 ** 20, underLoadBytes },
  };
}

function results(sizes: SizeResults[]): Results {
  return {
    schemaVersion: 1,
    mode: 'full',
    startedAt: '2026-01-01T00:00:00Z',
    seconds: 1,
    machine: { cpus: 2, cpuModel: 'x', memoryBytes: 1, node: 'v20', platform: 'linux x64', loadAverageAtStart: [0, 0, 0], loadAverageAtEnd: [0, 0, 0] },
    settings: { connections: 50, roundSeconds: 5, warmupSeconds: 2, rounds: 3, queries: 1, seed: 's', generator: 'wrk', nginx: 'nginx', sqlite: 'sqlite' },
    notes: [],
    sizes,
  };
}

describe('verdicts', () => {
  it('says which target is met and by how much one is missed', () => {
    const lines = verdicts(results([size('small', 1000, [0.6, 0.4], 300 * 2 ** 20, 3), size('1M', 1_000_000, [0.55], 600 * 2 ** 20, 0.8)]));
    expect(lines[0]).toBe("Lookups at least half of nginx's throughput: missed in 1 of 3 cases: op1 at small 0.40× (20% short).");
    expect(lines[1]).toMatch(/^Search faster than SQLite FTS5 at every size: missed at 1M /);
  });

  it('says met when every figure is on the right side', () => {
    const lines = verdicts(results([size('1M', 1_000_000, [0.5, 0.9], 400 * 2 ** 20, 2)]));
    expect(lines[0]).toMatch(/^Lookups at least half of nginx's throughput: met \(lowest ratio 0\.50×, op0 at 1M\)\.$/);
    expect(lines[1]).toMatch(/^Search faster than SQLite FTS5 at every size: met /);
  });
});

describe('request path verdicts', () => {
  const withFigures = (names: string[], ratios: number[], peak: number, http: { rps: number; p99Ms: number }): SizeResults => {
    const s = size('1M', 1_000_000, ratios, peak, 2);
    s.lookups.forEach((l, i) => (l.name = names[i]!));
    s.searchHttp = { rps: http.rps, p50Ms: 1, p99Ms: http.p99Ms, bytesPerResponse: 1, failures: 0, rounds: [] };
    s.pipelining = { connections: 30, bytesSent: 1_700_000, requestsSent: 7000, seconds: 8, peakRssBytes: 120 * 2 ** 20, metaAnswers: 70, metaMaxMs: 40, metaFailures: 0 };
    return s;
  };

  it('holds each operation to its own floor and names every miss', () => {
    const [line] = requestPathVerdicts(results([withFigures(['detail', 'catalog', 'meta'], [0.31, 0.2, 0.4], 300 * 2 ** 20, { rps: 2500, p99Ms: 30 })]));
    expect(line).toContain('missed catalog 0.20× (target 0.25×); server RSS 300 MiB');
    expect(line).toContain('met detail 0.31× (target 0.30×); meta 0.40× (target 0.35×); search over HTTP 2,500 req/s');
  });

  it('says all met when every figure is on the right side', () => {
    const [line] = requestPathVerdicts(results([withFigures(['detail, hot'], [0.36], 200 * 2 ** 20, { rps: 2001, p99Ms: 49 })]));
    expect(line).toMatch(/^Request path at 1M: all met; met /);
  });

  it('misses search over HTTP on either figure', () => {
    const [line] = requestPathVerdicts(results([withFigures(['meta'], [0.5], 100 * 2 ** 20, { rps: 5000, p99Ms: 60 })]));
    expect(line).toContain('missed search over HTTP 5,000 req/s, p99 60.0 ms');
  });
});

describe('plot', () => {
  it('draws one line per series with figures, and skips figures that are missing', () => {
    const svg = renderPlot(results([size('small', 50_000, [0.3], 300 * 2 ** 20, 3), size('1M', 1_000_000, [Number.NaN], 500 * 2 ** 20, 5)]));
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    expect(svg).not.toContain('NaN');
    // op0 has one figure (a point, no segment); the other charts have two points per series.
    expect(svg).toContain('target 256 MiB');
    expect(svg.match(/<path /g)?.length).toBe(1 + 4 + 1 + 2);
  });
});

describe('the server the bench starts', () => {
  it('runs with the Node options of npm start, read from the checkout\'s own package.json', async () => {
    const { serverNodeArgs } = await import('../../bench/lib/server.ts');
    const start = (JSON.parse(await readFile('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start;
    const args = serverNodeArgs('.');
    expect(args.length).toBeGreaterThan(0);
    expect(start).toContain(`exec node ${args.join(' ')} dist/server/main.mjs`);
  });
});
