import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCsv } from '../../build/lineage/csv.ts';
import { keyFrom, keyOrigin, keyTo, mergeEdges } from '../../build/lineage/merge.ts';
import { findEdgeFolders, readEdgeFolder, type EdgeInput } from '../../build/lineage/read.ts';
import { wantsSiblings } from '../../build/write/compress.ts';
import { LINEAGE_INDEX_PATH, LineageIndex, decodeLineageShard, lineageCode, lineageNumber, lineageShardId } from '../../src/contract/index.ts';
import { CorruptFile } from '../../src/snapshot/index.ts';
import { openSnapshotDirectory } from '../../src/node/index.ts';
import { lineageWalkOf } from '../../src/operations/index.ts';
import { buildFixture } from '../helpers/fixture-snapshot.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

describe('edge inputs', () => {
  it.each([
    ['a,b\nc,d\n', [['a', 'b'], ['c', 'd']]],
    ['a,b\r\nc,d', [['a', 'b'], ['c', 'd']]],
    ['\uFEFFa,"b, c"\n\n"say ""x""",\n', [['a', 'b, c'], ['say "x"', '']]],
    ['a,"line\nbreak"\n', [['a', 'line\nbreak']]],
  ])('reads CSV %j', (text, rows) => {
    expect(parseCsv(text, 't.csv')).toEqual(rows);
  });

  it('refuses an unclosed quote, naming the file', () => {
    expect(() => parseCsv('a,"b\n', 'x.csv')).toThrow(/x\.csv: a quoted field is not closed/);
  });

  async function folder(files: Record<string, string>): Promise<string> {
    const dir = await testTempDir('device-510k-edges-');
    for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
    return dir;
  }

  it('counts rows it cannot keep by reason, and normalizes case and spaces', async () => {
    const dir = await folder({
      'source.json': '{"source":"t","kind":"named"}',
      'predicates.csv': 'device,predicate\n k123456 ,K654321\nK1,K654321\nK123456,K654321,K1\nDEN200001,K000002\n',
    });
    const input = await readEdgeFolder(dir);
    expect(input.edges).toEqual([
      { device: 'K123456', predicate: 'K654321' },
      { device: 'DEN200001', predicate: 'K000002' },
    ]);
    expect(input.skipped).toEqual({ 'not a K or DEN number': 1, 'not two columns': 1 });
    expect(input.rows).toBe(4);
  });

  it.each([
    [{ 'source.json': '{"source":"t","kind":"other"}', 'predicates.csv': 'device,predicate\n' }, /source\.json: kind must be "predicate" or "named"/],
    [{ 'source.json': '{"source":"T T","kind":"named"}', 'predicates.csv': 'device,predicate\n' }, /source\.json: source must be/],
    [{ 'source.json': '{', 'predicates.csv': 'device,predicate\n' }, /source\.json: not JSON/],
    [{ 'source.json': '{"source":"t","kind":"named"}', 'predicates.csv': 'a,b\n' }, /predicates\.csv: the first line must be "device,predicate"/],
    [{ 'source.json': '{"source":"t","kind":"named","report":"r.csv"}', 'predicates.csv': 'device,predicate\n' }, /report is for sources of kind "predicate"/],
    [
      { 'source.json': '{"source":"t","kind":"predicate","report":"r.csv"}', 'predicates.csv': 'device,predicate\n', 'r.csv': 'device,status,predicates,reason\nK123456,done,,\n' },
      /r\.csv: line 2 must be/,
    ],
  ])('refuses a malformed folder with a message naming the file (%#)', async (files, message) => {
    await expect(readEdgeFolder(await folder(files))).rejects.toThrow(message);
  });

  it('finds edge folders at any depth, and not a folder without source.json', async () => {
    const root = await testTempDir('device-510k-roots-');
    for (const name of ['a', 'b/c', 'd']) await mkdir(join(root, name), { recursive: true });
    await writeFile(join(root, 'a/predicates.csv'), 'device,predicate\n');
    await writeFile(join(root, 'a/source.json'), '{}');
    await writeFile(join(root, 'b/c/predicates.csv'), 'device,predicate\n');
    await writeFile(join(root, 'b/c/source.json'), '{}');
    await writeFile(join(root, 'd/predicates.csv'), 'device,predicate\n');
    expect(await findEdgeFolders(root)).toEqual([join(root, 'a'), join(root, 'b/c')]);
  });
});

describe('merging sources', () => {
  const input = (source: string, kind: 'predicate' | 'named', edges: [string, string][], read: string[] | null = null): EdgeInput => ({
    folder: source,
    source,
    kind,
    sha256: '0'.repeat(64),
    rows: edges.length,
    edges: edges.map(([device, predicate]) => ({ device, predicate })),
    skipped: {},
    read: read === null ? null : new Set(read),
  });

  it('drops the named edges of a device whose text a predicate source read, keeps the rest, orders origins', () => {
    const merged = mergeEdges([
      input('fyi', 'named', [
        ['K000001', 'K000002'],
        ['K000001', 'K000003'],
        ['K000004', 'K000002'],
        ['K000004', 'K000002'],
      ]),
      input('text', 'predicate', [['K000001', 'K000002']], ['K000001']),
    ]);
    expect(merged.origins).toEqual([
      { source: 'text', kind: 'predicate' },
      { source: 'fyi', kind: 'named' },
    ]);
    expect(merged.perInput).toEqual([
      { edges: 1, superseded: 2, repeated: 1 },
      { edges: 1, superseded: 0, repeated: 0 },
    ]);
    const triples = [...merged.forward].map((k) => [lineageNumber(keyFrom(k)), lineageNumber(keyTo(k)), keyOrigin(k)]);
    expect(triples).toEqual([
      ['K000001', 'K000002', 0],
      ['K000004', 'K000002', 1],
    ]);
    expect([...merged.devices].map(lineageNumber)).toEqual(['K000001', 'K000002', 'K000004']);
  });

  it('refuses two folders with the same source id', () => {
    expect(() => mergeEdges([input('a', 'named', []), input('a', 'predicate', [])])).toThrow(/source "a" is given by two edge folders/);
  });

  it('codes sort as the numbers do, DEN before K', () => {
    const numbers = ['DEN000001', 'DEN999999', 'K000000', 'K000001', 'K999999'];
    const codes = numbers.map(lineageCode);
    expect([...codes].sort((a, b) => a - b)).toEqual(codes);
    expect(codes.map(lineageNumber)).toEqual(numbers);
    expect(numbers.map(lineageShardId)).toEqual(['DEN000', 'DEN999', 'K000', 'K000', 'K999']);
  });
});

describe('the lineage files of a snapshot', () => {
  it('are listed in the manifest, without compressed siblings, and agree with the header', async () => {
    const built = await buildFixture();
    const paths = built.manifest.files.map((f) => f.path).filter((p) => p.startsWith('lineage/'));
    const index = LineageIndex.parse(JSON.parse(await readFile(join(built.dir, LINEAGE_INDEX_PATH), 'utf8')));
    expect(index.origins.map((o) => o.source)).toEqual(['summary-test', '510k.fyi']);
    const shards = [...index.shards.predicates.map((s) => `lineage/predicates/${s.id}.bin`), ...index.shards.descendants.map((s) => `lineage/descendants/${s.id}.bin`)];
    // The shards, and beside them the closure files (test/build/lineage-closure.test.ts checks those).
    expect(paths.filter((p) => p.endsWith('.bin') && !p.startsWith('lineage/closure/')).sort()).toEqual(shards.sort());
    expect(paths.filter((p) => /\.bin\.(br|gz)$/.test(p))).toEqual([]);
    expect(wantsSiblings('lineage/predicates/K123.bin')).toBe(false);
    let edges = 0;
    for (const s of index.shards.predicates) {
      const shard = decodeLineageShard(new Uint8Array(await readFile(join(built.dir, `lineage/predicates/${s.id}.bin`))));
      expect(shard.nodes.length).toBe(s.nodes);
      edges += shard.edges.length;
    }
    expect(edges).toBe(index.sources.reduce((n, s) => n + s.edges, 0));
    expect(index.sources.find((s) => s.source === '510k.fyi')?.superseded).toBe(3);
  });

  it('a damaged shard is refused, not answered from', async () => {
    const built = await buildFixture();
    const entry = built.manifest.files.find((f) => f.path.startsWith('lineage/predicates/K875'))!;
    const bytes = await readFile(join(built.dir, entry.path));
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) ^ 0xff;
    await writeFile(join(built.dir, entry.path), bytes);
    const snapshot = await openSnapshotDirectory(built.out);
    await expect(lineageWalkOf(snapshot, { id: 'K875083', direction: 'predicates', depth: null, kinds: null })).rejects.toBeInstanceOf(CorruptFile);
  });
});
