import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { lineageNumber } from '../../src/contract/index.ts';
import { openSnapshotDirectory } from '../../src/node/index.ts';
import { lineageFilesOf, walkLineage, type LineageFiles } from '../../src/operations/index.ts';
import { FIXTURE_SOURCES, buildFixture } from '../helpers/fixture-snapshot.ts';
import { modelWalk, readModel, type Model } from '../helpers/lineage-model.ts';
import { mulberry32 as random } from '../helpers/random.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/**
 * Cycles of every shape the walk's cycle search must find, and back edges that close none, against the independent
 * model's plain reachability: edges mostly from a device to older ones, with edges the other way of short and long
 * span, overlapping and apart, some closing a cycle only through two of them, some closing none, and devices naming
 * themselves; every device walked both ways, over shards of several numbers.
 */

/** Devices by age: number i is older than number i + 1 (the codes of K numbers and DEN numbers both rise with age). */
const DEVICES = [...Array.from({ length: 40 }, (_, i) => `DEN${String(100_500 + 37 * i).padStart(6, '0')}`), ...Array.from({ length: 360 }, (_, i) => `K${String(101_000 + 23 * i).padStart(6, '0')}`)];

function edges(seed: number): { named: [string, string][]; predicate: [string, string][] } {
  const next = random(seed);
  const pick = (n: number) => Math.floor(next() * n);
  const named: [string, string][] = [];
  const predicate: [string, string][] = [];
  // Mostly a device names one to three older ones.
  for (let i = 1; i < DEVICES.length; i++) {
    for (let j = 0, n = 1 + pick(3); j < n; j++) (next() < 0.5 ? named : predicate).push([DEVICES[i]!, DEVICES[Math.max(0, i - 1 - pick(Math.min(i, 30)))]!]);
  }
  // Edges the other way: a device naming a newer one, a few numbers away or far away.
  for (let k = 0; k < 12; k++) {
    const i = pick(DEVICES.length - 1);
    const span = k % 3 === 0 ? 1 + pick(DEVICES.length - 1 - i) : 1 + pick(Math.min(5, DEVICES.length - 1 - i));
    (k % 2 ? named : predicate).push([DEVICES[i]!, DEVICES[i + span]!]);
  }
  // Devices naming themselves.
  for (let k = 0; k < 3; k++) {
    const d = DEVICES[pick(DEVICES.length)]!;
    named.push([d, d]);
  }
  return { named, predicate };
}

async function edgeRoot(seed: number): Promise<string> {
  const root = await testTempDir('device-510k-cycles-');
  const { named, predicate } = edges(seed);
  for (const [name, kind, rows] of [['named', 'named', named], ['read', 'predicate', predicate]] as const) {
    await mkdir(join(root, name));
    await writeFile(join(root, name, 'source.json'), JSON.stringify({ source: `cycles-${name}`, kind }));
    await writeFile(join(root, name, 'predicates.csv'), `device,predicate\n${rows.map((r) => r.join(',')).join('\n')}\n`);
  }
  return root;
}

const SEEDS = [1, 2, 3];
const built: { seed: number; model: Model; files: LineageFiles }[] = [];

beforeAll(async () => {
  for (const seed of SEEDS) {
    const root = await edgeRoot(seed);
    const sources = [...FIXTURE_SOURCES.filter((s) => !s.endsWith('predicates')), root];
    const snapshot = await openSnapshotDirectory((await buildFixture({ sources })).out);
    built.push({ seed, model: readModel(root), files: (await lineageFilesOf(snapshot).files)! });
  }
}, 180_000);

describe('the walk against an independent walk, over graphs with cycles of every span', () => {
  it('every device, both directions, the whole chain and two steps: items and cycles', async () => {
    let withCycles = 0;
    let backWithoutCycle = 0;
    for (const { seed, model, files } of built) {
      for (const id of [...model.devices].sort()) {
        for (const direction of ['predicates', 'descendants'] as const) {
          for (const depth of [null, 2]) {
            const want = modelWalk(model, id, direction, depth, null);
            const walk = await walkLineage(files, { id, direction, depth, kinds: null });
            const items = walk.codes.map((code, i) => {
              const origin = files.index.origins[walk.origins[i]!]!;
              return { kNumber: lineageNumber(code), depth: walk.depths[i], via: lineageNumber(walk.vias[i]!), kind: origin.kind, source: origin.source };
            });
            const cycles = walk.cycles.map((c) => {
              const origin = files.index.origins[c.origin]!;
              return { kNumber: lineageNumber(c.code), via: lineageNumber(c.via), kind: origin.kind, source: origin.source };
            });
            expect(items, `${seed} ${id} ${direction} ${depth}`).toEqual(want.items);
            expect(cycles, `${seed} ${id} ${direction} ${depth}`).toEqual(want.cycles);
            if (want.cycles.length > 0) withCycles++;
            // Edges back into the walk that close no cycle (a second path to a device): the search must not report them.
            const reached = new Set([id, ...want.items.map((i) => i.kNumber)]);
            const adjacency = direction === 'predicates' ? model.forward : model.reverse;
            const back = [...reached].reduce((n, k) => n + (adjacency.get(k) ?? []).filter((e) => reached.has(e.to)).length, 0) - want.items.length;
            if (back > want.cycles.length) backWithoutCycle++;
          }
        }
      }
    }
    // The graphs have what the test is for.
    expect(withCycles).toBeGreaterThan(100);
    expect(backWithoutCycle).toBeGreaterThan(100);
  }, 300_000);
});
