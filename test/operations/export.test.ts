import { cp, mkdtemp, open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { csvCell } from '../../src/operations/export.ts';
import { CorruptFile, openSnapshotDirectory } from '../../src/snapshot/index.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { allRecords } from '../server/helpers.ts';

describe('CSV cells', () => {
  it.each<[string | number | boolean | null, string]>([
    ['plain', 'plain'],
    [null, ''],
    [-12, '-12'],
    [true, 'true'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['=HYPERLINK("http://x")', `"'=HYPERLINK(""http://x"")"`],
    ['+1 555', "'+1 555"],
    ['-2+3', "'-2+3"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tTAB', "'\tTAB"],
    ['\rCR', `"'\rCR"`],
    ['a=b', 'a=b'],
    ['', ''],
  ])('%j is written %j', (value, cell) => {
    expect(csvCell(value)).toBe(cell);
  });
});

describe('records read for an export', () => {
  it('are the bytes the cached path gives, in the order asked, and leave the cache empty', async () => {
    const dir = await buildFixtureSnapshot();
    const kNumbers = (await allRecords(dir)).map((r) => r.kNumber).sort();
    const exporting = await openSnapshotDirectory(dir);
    const cached = await openSnapshotDirectory(dir);
    const text = (b: Uint8Array) => Buffer.from(b).toString('utf8');
    // First every shard unchecked (read whole), then checked (read record by record), then a sparse selection.
    const uncached = async (ks: string[]) => {
      const got: string[] = [];
      await exporting.eachRecordUncached(ks, (i, bytes) => {
        expect(i).toBe(got.length);
        got.push(text(bytes)); // the bytes are valid only during the call: copied out here
      });
      return got;
    };
    for (const ks of [kNumbers, kNumbers, kNumbers.filter((_, i) => i % 7 === 3)]) {
      expect(await uncached(ks)).toEqual((await cached.recordsJson(ks)).map(text));
      expect(exporting.cachedBytes).toBe(0);
    }
    await expect(uncached([kNumbers[0]!, 'K999999'])).rejects.toThrow(/has no record K999999/);
  });

  it('refuse a shard that does not match its sha256', async () => {
    const source = await buildFixtureSnapshot();
    const dir = join(await mkdtemp(join(tmpdir(), 'device-510k-export-')), 'snapshot');
    await cp(source, dir, { recursive: true, dereference: true });
    const snapshot = await openSnapshotDirectory(dir);
    const shard = snapshot.recordIndex.shards[0]!;
    const file = await open(join(dir, shard.path), 'r+');
    try {
      const byte = Buffer.alloc(1);
      await file.read(byte, 0, 1, 40);
      byte[0] = byte[0]! ^ 1;
      await file.write(byte, 0, 1, 40);
    } finally {
      await file.close();
    }
    await expect(snapshot.eachRecordUncached([shard.first], () => {})).rejects.toBeInstanceOf(CorruptFile);
  });
});
