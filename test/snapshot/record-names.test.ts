import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { wantsHostCopy, wantsSiblings } from '../../build/write/compress.ts';
import { RecordNamesBuilder } from '../../build/write/record-names.ts';
import { RECORD_NAMES, recordNameEntry, recordNameSpan } from '../../src/contract/record-names.ts';
import { buildFixture } from '../helpers/fixture-snapshot.ts';

/** A number's name as the files give it: the name, '' (no record, or no name), or null (not in these files). */
function nameOf(index: Uint8Array, names: Uint8Array, n: number): string | null {
  const { from, length } = recordNameEntry(n);
  if (from + length > index.length) return '';
  const span = recordNameSpan(index.subarray(from, from + length));
  return span === null ? null : new TextDecoder().decode(names.subarray(span.from, span.from + span.length));
}

describe('record names files', () => {
  it('give every number its record’s name, shared names once, and leave long names to the record', () => {
    const long = 'X'.repeat(RECORD_NAMES.notHere);
    const records: [string, string][] = [
      ['K000000', 'CATHETER'],
      ['K000005', 'STENT, CORONARY'],
      ['K000031', 'CATHETER'],
      ['K000032', ''],
      ['K000100', long],
      ['K000101', 'Lentille réglable ü'],
      ['K000102', 'X'.repeat(RECORD_NAMES.notHere - 1)],
    ];
    const builder = new RecordNamesBuilder();
    for (const [k, name] of records) builder.add(k, name);
    const files = new Map(builder.files().map((f) => [f.path, new Uint8Array(f.bytes)]));
    expect([...files.keys()]).toEqual([RECORD_NAMES.index, RECORD_NAMES.names]);
    const index = files.get(RECORD_NAMES.index)!;
    const names = files.get(RECORD_NAMES.names)!;
    expect(index.length).toBe(103 * RECORD_NAMES.entryBytes);
    // CATHETER once, the long name not at all.
    expect(new TextDecoder().decode(names).split('CATHETER')).toHaveLength(2);
    expect(names.length).toBe(Buffer.byteLength('CATHETERSTENT, CORONARYLentille réglable ü') + RECORD_NAMES.notHere - 1);
    const given = new Map(records);
    for (let n = 0; n <= 102; n++) {
      const k = `K${String(n).padStart(6, '0')}`;
      const want = given.get(k);
      expect(nameOf(index, names, n), k).toBe(want === long ? null : (want ?? ''));
    }
  });

  it('refuse a number that is not a K number', () => {
    expect(() => new RecordNamesBuilder().add('DEN123456', 'X')).toThrow(/K numbers/);
  });

  describe('in a built snapshot', () => {
    let dir: string;
    beforeAll(async () => {
      dir = (await buildFixture()).out;
    }, 120_000);

    it('name each record of its shards, and are listed, served as they are (no compressed copies)', { timeout: 60_000 }, async () => {
      const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as { files: { path: string; bytes: number }[] };
      const listed = manifest.files.map((f) => f.path);
      expect(listed).toEqual(expect.arrayContaining([RECORD_NAMES.index, RECORD_NAMES.names]));
      expect(listed.filter((p) => p.startsWith('records/names/'))).toHaveLength(2);
      for (const p of [RECORD_NAMES.index, RECORD_NAMES.names]) expect([wantsSiblings(p), wantsHostCopy(p)]).toEqual([false, false]);
      const index = new Uint8Array(await readFile(join(dir, RECORD_NAMES.index)));
      const names = new Uint8Array(await readFile(join(dir, RECORD_NAMES.names)));
      // The records, read from the shards as text, one per line.
      const shards = JSON.parse(await readFile(join(dir, 'records/index.json'), 'utf8')) as { shards: { path: string }[] };
      const want = new Map<number, string>();
      for (const s of shards.shards) {
        for (const line of (await readFile(join(dir, s.path), 'utf8')).split('\n')) {
          const text = line.replace(/^\[|,$|^\]$/g, '').trim();
          if (!text) continue;
          const r = JSON.parse(text) as { kNumber: string; deviceName: string };
          want.set(Number(r.kNumber.slice(1)), r.deviceName);
        }
      }
      expect(want.size).toBeGreaterThan(0);
      const last = Math.max(...want.keys());
      expect(index.length).toBe((last + 1) * RECORD_NAMES.entryBytes);
      const wrong: string[] = [];
      for (let n = 0; n <= last; n++) {
        const name = want.get(n);
        const expected = name === undefined ? '' : Buffer.byteLength(name) >= RECORD_NAMES.notHere ? null : name;
        const got = nameOf(index, names, n);
        if (got !== expected) wrong.push(`K${String(n).padStart(6, '0')}: ${JSON.stringify(got)}, not ${JSON.stringify(expected)}`);
      }
      expect(wrong.slice(0, 5)).toEqual([]);
    });
  });
});
