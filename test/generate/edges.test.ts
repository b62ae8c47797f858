import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateEdges } from '../../build/generate/edges.ts';
import { buildPool, parsePmnText } from '../../build/generate/pool.ts';
import { generatePmnFiles } from '../../build/generate/rows.ts';

/**
 * The generated predicate edges have the shape the bench needs at scale, checked on the CSV's text with walks of its
 * own: most devices name one to three predicates, a few are named by hundreds, a breadth-first walk of predicates
 * runs 20 and more levels deep, and some edges close cycles.
 */
const REAL = [
  'data/fda/510k/d8557379_FDA_510K_streamlit_app/pmn7680.txt',
  'data/fda/510k/d8557379_FDA_510K_streamlit_app/pmnlstmn.txt',
];
const RECORDS = 200_000;

let forward: Map<string, string[]>;
let cited: Map<string, number>;
let devices: string[];

beforeAll(async () => {
  const pool = buildPool(await Promise.all(REAL.map(async (p) => parsePmnText(p, (await readFile(p)).toString('latin1')))));
  const files = generatePmnFiles(pool, { records: RECORDS, seed: 'edges-test', rowsPerFile: 100_000 });
  devices = files.flatMap((f) => f.text.split('\r\n').slice(1, -1).map((line) => line.slice(0, line.indexOf('|'))));
  const { csv, edges } = generateEdges(files, pool.header, 'edges-test');
  const rows = csv.split('\n').slice(1, -1).map((line) => line.split(',') as [string, string]);
  expect(rows).toHaveLength(edges);
  forward = new Map();
  cited = new Map();
  for (const [device, predicate] of rows) {
    forward.set(device, [...(forward.get(device) ?? []), predicate]);
    cited.set(predicate, (cited.get(predicate) ?? 0) + 1);
  }
}, 120_000);

/** Levels of the breadth-first walk of predicates from a device (each device at its nearest distance). */
function levels(start: string): number {
  const seen = new Set([start]);
  let level = [start];
  let depth = 0;
  for (;;) {
    const next = [];
    for (const d of level) for (const p of forward.get(d) ?? []) if (!seen.has(p)) (seen.add(p), next.push(p));
    if (next.length === 0) return depth;
    depth++;
    level = next;
  }
}

describe('generated predicate edges', () => {
  it('most devices name one to three predicates, none more, and a pair is named once', () => {
    const counts = [...forward.values()].map((ps) => ps.length);
    expect(counts.reduce((a, b) => Math.max(a, b), 0)).toBe(3);
    expect(forward.size / devices.length).toBeGreaterThan(0.8);
    expect(counts.filter((c) => c === 1).length / counts.length).toBeGreaterThan(0.5);
    for (const ps of forward.values()) expect(new Set(ps).size).toBe(ps.length);
  });

  it('a few devices are named hundreds of times, most few times', () => {
    const named = [...cited.values()].sort((a, b) => b - a);
    expect(named[0]).toBeGreaterThan(500);
    expect(named.filter((n) => n >= 100).length / devices.length).toBeLessThan(0.005);
    expect(named.filter((n) => n <= 3).length / named.length).toBeGreaterThan(0.8);
  });

  it('chains of predicates run 20 and more levels deep in a breadth-first walk', () => {
    // Candidates: the ends of the longest runs of devices that each name one device, found by following the edges;
    // each one's depth is then the walk's own.
    const run = new Map<string, number>();
    const runOf = (d: string): number => {
      const known = run.get(d);
      if (known !== undefined) return known;
      run.set(d, 0);
      const ps = forward.get(d) ?? [];
      const length = ps.length === 1 ? 1 + runOf(ps[0] as string) : 0;
      run.set(d, length);
      return length;
    };
    const longest = devices.filter((d) => forward.has(d)).sort((a, b) => runOf(b) - runOf(a) || (a < b ? -1 : 1)).slice(0, 50);
    const depths = longest.map(levels);
    expect(Math.max(...depths)).toBeGreaterThanOrEqual(20);
    expect(depths.filter((d) => d >= 20).length).toBeGreaterThan(5);
  });

  it('some edges name a later device and close a cycle', () => {
    let cycles = 0;
    for (const [device, ps] of forward) {
      for (const p of ps) {
        if (p <= device) continue;
        // A cycle: the later device's predicates lead back to the device that named it.
        const seen = new Set([p]);
        const queue = [p];
        while (queue.length > 0 && !seen.has(device)) {
          for (const q of forward.get(queue.shift() as string) ?? []) if (!seen.has(q)) (seen.add(q), queue.push(q));
        }
        if (seen.has(device)) cycles++;
      }
    }
    expect(cycles).toBeGreaterThan(0);
  });
});
