import { existsSync } from 'node:fs';
import { readFile, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { findEdgeFolders, readEdgeFolder } from '../../build/lineage/read.ts';
import { writeLineage } from '../../build/lineage/write.ts';
import { wantsHostCopy, wantsSiblings } from '../../build/write/compress.ts';
import { SnapshotWriter } from '../../build/write/writer.ts';
import { defaultSources } from '../../build/sources/default.ts';
import {
  HAS_RECORD,
  LINEAGE_CLOSURE_MAX,
  LINEAGE_INDEX_PATH,
  LineageIndex,
  decodeLineageClosure,
  lineageClosurePath,
  lineageCode,
  lineageNumber,
  lineageShardId,
  type LineageClosure,
} from '../../src/contract/index.ts';
import { buildFixture } from '../helpers/fixture-snapshot.ts';
import { modelWalk, readModel, type Model } from '../helpers/lineage-model.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

const FIXTURE_EDGES = fileURLToPath(new URL('../fixtures/fda/predicates', import.meta.url));
const SHIPPED_EDGES = fileURLToPath(new URL('../../data/fda/predicates', import.meta.url));
const DIRECTIONS = ['predicates', 'descendants'] as const;

/** A snapshot's closure entry of a number, read from its file. */
async function entryOf(dir: string, index: LineageIndex, k: string, direction: (typeof DIRECTIONS)[number]) {
  const bytes = new Uint8Array(await readFile(join(dir, lineageClosurePath(direction, lineageShardId(k)))));
  return decodeLineageClosure(bytes, lineageCode(k), index.origins.length);
}

/** The entry as the test's model words it: numbers, kinds and sources (the header's origins). */
function asModel(index: LineageIndex, entry: LineageClosure) {
  const origin = (o: number) => index.origins[o]!;
  return {
    items: entry.codes.map((c, i) => ({ kNumber: lineageNumber(c), depth: entry.depths[i]!, via: lineageNumber(entry.vias[i]!), kind: origin(entry.origins[i]!).kind, source: origin(entry.origins[i]!).source })),
    cycles: entry.cycles.map((c) => ({ kNumber: lineageNumber(c.code), via: lineageNumber(c.via), kind: origin(c.origin).kind, source: origin(c.origin).source })),
  };
}

/** The decision year and "has a record" of each number, from the snapshot's records (none without a manifest). */
async function recordYears(dir: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (!existsSync(join(dir, 'manifest.json'))) return out;
  const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as { files: { path: string }[] };
  for (const f of manifest.files) {
    if (!/^records\/K\d+\.json$/.test(f.path)) continue;
    for (const r of JSON.parse(await readFile(join(dir, f.path), 'utf8')) as { kNumber: string; decisionDate: string | null }[]) {
      out.set(r.kNumber, HAS_RECORD | (r.decisionDate ? Number(r.decisionDate.slice(0, 4)) : 0));
    }
  }
  return out;
}

/** Checks every number of `numbers` both ways: the entry is the model's walk, or 'walk' exactly when it is too long. */
async function checkEntries(dir: string, model: Model, numbers: string[], max: number) {
  const index = LineageIndex.parse(JSON.parse(await readFile(join(dir, LINEAGE_INDEX_PATH), 'utf8')));
  const years = await recordYears(dir);
  let stored = 0;
  let walked = 0;
  let cycles = 0;
  for (const k of numbers) {
    for (const direction of DIRECTIONS) {
      const want = modelWalk(model, k, direction, null, null);
      const entry = await entryOf(dir, index, k, direction);
      if (want.items.length > max) {
        expect(entry, `${k} ${direction}`).toBe('walk');
        walked++;
        continue;
      }
      if (entry === null || entry === 'walk') throw new Error(`${k} ${direction}: no entry`);
      expect(asModel(index, entry), `${k} ${direction}`).toEqual(want);
      expect(entry.infos, `${k} ${direction}`).toEqual(entry.codes.map((c) => years.get(lineageNumber(c)) ?? 0));
      stored++;
      cycles += want.cycles.length;
    }
  }
  return { stored, walked, cycles };
}

describe('the closure files of a snapshot', () => {
  let fixture: { dir: string; files: string[] };
  beforeAll(async () => {
    const built = await buildFixture();
    fixture = { dir: await realpath(built.out), files: built.manifest.files.map((f) => f.path) };
  }, 120_000);

  it('hold, for every device with an edge, both ways, the whole lineage an independent walk of the edge files gives', async () => {
    const model = readModel(FIXTURE_EDGES);
    const numbers = [...model.devices].sort();
    expect(numbers.length).toBeGreaterThan(10);
    const { stored } = await checkEntries(fixture.dir, model, numbers, LINEAGE_CLOSURE_MAX);
    expect(stored).toBe(2 * numbers.length);
    // A number with no edge has no entry (its shard's file, when there is one, does not list it).
    const index = LineageIndex.parse(JSON.parse(await readFile(join(fixture.dir, LINEAGE_INDEX_PATH), 'utf8')));
    const edgeless = `${numbers[0]!.slice(0, -3)}${numbers[0]!.slice(-3) === '999' ? '998' : '999'}`;
    if (!model.devices.has(edgeless)) expect(await entryOf(fixture.dir, index, edgeless, 'predicates')).toBeNull();
  });

  it('are one file per shard and direction, listed in the manifest, with no compressed copy', async () => {
    const index = LineageIndex.parse(JSON.parse(await readFile(join(fixture.dir, LINEAGE_INDEX_PATH), 'utf8')));
    const closures = fixture.files.filter((p) => p.startsWith('lineage/closure/'));
    const want = DIRECTIONS.flatMap((d) => index.shards.predicates.map((s) => lineageClosurePath(d, s.id)));
    expect(closures.sort()).toEqual(want.sort());
    expect(fixture.files.filter((p) => /^lineage\/closure\/.*\.(br|gz)$/.test(p))).toEqual([]);
    expect(wantsSiblings(closures[0]!)).toBe(false);
    expect(wantsHostCopy(closures[0]!)).toBe(false);
  });

  it('leave out a lineage longer than an entry may hold, and say so', async () => {
    const inputs = await Promise.all((await findEdgeFolders(FIXTURE_EDGES)).map(readEdgeFolder));
    const dir = await testTempDir('device-510k-closure-');
    const writer = new SnapshotWriter(dir);
    await writeLineage(inputs, [], writer, undefined, 2);
    await writer.flush();
    const model = readModel(FIXTURE_EDGES);
    const { stored, walked } = await checkEntries(dir, model, [...model.devices].sort(), 2);
    expect(stored).toBeGreaterThan(0);
    expect(walked).toBeGreaterThan(0);
  });

  it('a damaged entry is refused with an error, not read as another lineage', async () => {
    const index = LineageIndex.parse(JSON.parse(await readFile(join(fixture.dir, LINEAGE_INDEX_PATH), 'utf8')));
    const k = [...readModel(FIXTURE_EDGES).devices].sort().find((n) => modelWalk(readModel(FIXTURE_EDGES), n, 'predicates', null, null).items.length > 1)!;
    const bytes = new Uint8Array(await readFile(join(fixture.dir, lineageClosurePath('predicates', lineageShardId(k)))));
    expect(() => decodeLineageClosure(bytes.subarray(0, bytes.length - 1), lineageCode(k), index.origins.length)).toThrow(/lineage closure/);
    expect(() => decodeLineageClosure(bytes.subarray(0, 3), lineageCode(k), index.origins.length)).toThrow(/shorter than its header/);
  });
});

describe('the closure files over the bundled data and the shipped edges', () => {
  it('agree with an independent walk of the edge files: long chains, cycles, and lineages too long to store', async () => {
    const { sources, edges } = await defaultSources();
    const dir = await realpath((await buildFixture({ sources: [...sources, ...edges] })).out);
    const model = readModel(SHIPPED_EDGES);
    const all = [...model.devices].sort();
    // Every 97th device, and the devices of the model's cycles (a cycle's ends are where a walk is most easily wrong).
    const numbers = new Set(all.filter((_, i) => i % 97 === 0));
    for (const k of all.filter((_, i) => i % 997 === 0)) for (const c of modelWalk(model, k, 'predicates', null, null).cycles) numbers.add(c.via).add(c.kNumber);
    const { stored, walked, cycles } = await checkEntries(dir, model, [...numbers], LINEAGE_CLOSURE_MAX);
    expect(stored).toBeGreaterThan(1000);
    expect(walked).toBeGreaterThan(0);
    expect(cycles).toBeGreaterThan(0);
  }, 600_000);
});
