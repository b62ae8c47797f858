import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildSearchIndexData, documentOrder, writeSearchIndex } from '../../build/index/search.ts';
import { SnapshotWriter } from '../../build/write/writer.ts';
import { SEARCH_INDEX_PATH, SearchIndexHeader } from '../../src/contract/search-index.ts';
import { decodeSearchIndex, encodeSearchIndex, SearchIndexFormatError, type SearchIndexData } from '../../src/search/codec.ts';
import { loadSearchIndex } from '../../src/search/load.ts';
import { openSearchIndex } from '../../src/search/model.ts';
import { runSearch } from '../../src/search/engine.ts';
import { record } from './naive.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

const RECORDS = [
  record('K000123', 'Pacemaker Lead', { applicant: 'Acme', productCode: 'DTB', decisionDate: '2001-02-03' }),
  record('K100001', 'Infusion Pump', { applicant: 'ACME', productCode: 'FRN', decisionDate: '2001-02-03' }),
  record('K100002', 'Röntgen System™', { applicant: null, productCode: null, decisionDate: null }),
  record('K200000', 'Catheter', { applicant: 'Beta', productCode: 'DTB', decisionDate: '1976-07-15' }),
];
const TYPES = new Map<string, string | null>([
  ['DTB', 'Implantable Pacemaker Pulse Generator'],
  ['FRN', 'Pump, Infusion'],
]);

const bytesOf = (parts: Uint8Array[]) => Buffer.concat(parts.map((p) => Buffer.from(p))).toString('hex');

describe('the search index on disk', () => {
  it('decodes to the arrays it was encoded from', () => {
    const data = buildSearchIndexData(RECORDS, TYPES);
    const { header, parts } = encodeSearchIndex(data, 1 << 20);
    const back = decodeSearchIndex(JSON.parse(JSON.stringify(header)), parts);
    for (const key of Object.keys(data) as (keyof SearchIndexData)[]) {
      expect([key, Array.from(back[key] as ArrayLike<unknown>)]).toEqual([key, Array.from(data[key] as ArrayLike<unknown>)]);
    }
  });

  it('is deterministic: the same records give the same bytes, whatever order the device types come in', () => {
    const a = encodeSearchIndex(buildSearchIndexData(RECORDS, TYPES), 1 << 20);
    const b = encodeSearchIndex(buildSearchIndexData([...RECORDS], new Map([...TYPES].reverse())), 1 << 20);
    expect(b.header).toEqual(a.header);
    expect(bytesOf(b.parts)).toBe(bytesOf(a.parts));
  });

  it('cuts the blob into parts no larger than asked, and aligns every section to 8 bytes', () => {
    const { header, parts } = encodeSearchIndex(buildSearchIndexData(RECORDS, TYPES), 64);
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.every((p) => p.byteLength <= 64)).toBe(true);
    expect(parts.reduce((s, p) => s + p.byteLength, 0)).toBe(header.blobBytes);
    expect(header.parts.map((p) => p.path)).toEqual(parts.map((_, i) => `search/part-${String(i).padStart(3, '0')}.bin`));
    expect(header.sections.every((s) => s.offset % 8 === 0)).toBe(true);
    expect(SearchIndexHeader.parse(header)).toEqual(header);
  });

  it('orders documents by decision date descending, null last, then K number descending', () => {
    expect(documentOrder(RECORDS).map((r) => r.kNumber)).toEqual(['K100001', 'K000123', 'K200000', 'K100002']);
    const data = buildSearchIndexData(RECORDS, TYPES);
    expect(Array.from(data.docKNumber)).toEqual([100001, 123, 200000, 100002]);
    expect(Array.from(data.docYear)).toEqual([2001, 2001, 1976, 0]);
    expect(data.codes).toEqual(['DTB', 'FRN']);
    // "Acme" and "ACME" are one group; the tie between the spellings goes to the smaller in code units.
    expect(data.applicants).toEqual(['ACME', 'Beta']);
    expect(data.terms).toContain('rontgen');
    expect(data.terms).toContain('system');
    expect(data.terms).not.toContain('systemtm');
  });

  describe('refuses a damaged index', () => {
    const good = () => {
      const { header, parts } = encodeSearchIndex(buildSearchIndexData(RECORDS, TYPES), 1 << 20);
      return { header: JSON.parse(JSON.stringify(header)) as SearchIndexHeader, parts: parts.map((p) => p.slice()) };
    };
    const sectionOf = (h: SearchIndexHeader, name: string) => h.sections.find((s) => s.name === name)!;

    it.each<[string, (x: ReturnType<typeof good>) => void]>([
      ['a header of another format', (x) => void ((x.header as { format: string }).format = 'other')],
      ['a part of the wrong size', (x) => void (x.parts[0] = x.parts[0]!.subarray(1))],
      ['a missing part', (x) => void x.parts.pop()],
      ['a missing section', (x) => void (x.header.sections = x.header.sections.filter((s) => s.name !== 'termDocs'))],
      ['a section past the end', (x) => void (sectionOf(x.header, 'codes').offset = x.header.blobBytes + 8)],
      ['counts that differ from the data', (x) => void (x.header.counts.docs += 1)],
      [
        'a posting naming a document that does not exist',
        (x) => {
          const s = sectionOf(x.header, 'termDocs');
          new DataView(x.parts[0]!.buffer, x.parts[0]!.byteOffset).setUint32(s.offset, 999, true);
        },
      ],
      [
        "a document's terms out of order",
        (x) => {
          const s = sectionOf(x.header, 'docTermIds');
          const view = new DataView(x.parts[0]!.buffer, x.parts[0]!.byteOffset);
          view.setUint32(s.offset + 4, view.getUint32(s.offset, true), true); // the first document has two terms
        },
      ],
      [
        'years out of document order',
        (x) => {
          const s = sectionOf(x.header, 'docYear');
          new DataView(x.parts[0]!.buffer, x.parts[0]!.byteOffset).setUint16(s.offset, 1900, true);
        },
      ],
    ])('%s', (_what, damage) => {
      const x = good();
      damage(x);
      expect(() => decodeSearchIndex(x.header, x.parts)).toThrow(SearchIndexFormatError);
    });
  });

  it('is written through the snapshot writer, listed for the manifest, and loads back from the files', async () => {
    const dir = await testTempDir('search-index-');
    const writer = new SnapshotWriter(dir);
    await writeSearchIndex(RECORDS, TYPES, writer);
    await writer.flush();
    const all = writer.files().map((f) => f.path);
    // The chunked copy for browsers: content-named gzip files with no sibling (test/search/chunks.test.ts).
    const chunks = all.filter((p) => p.startsWith('search/chunks/'));
    expect(chunks.length).toBeGreaterThan(0);
    expect(chunks.every((p) => /^search\/chunks\/[a-zA-Z]+-[0-9a-f]{20}\.bin\.gz$/.test(p))).toBe(true);
    const listed = all.filter((p) => !p.startsWith('search/chunks/'));
    // Beside the build's compressed copies of the header (listed too; see build/write/compress.ts).
    expect(listed.filter((p) => !/\.(br|gz)$/.test(p)).sort()).toEqual(['search/blocks.bin', 'search/chunks.json', SEARCH_INDEX_PATH, 'search/part-000.bin']);
    expect(listed.filter((p) => /\.(br|gz)$/.test(p)).every((p) => listed.includes(p.slice(0, -3)))).toBe(true);
    const loaded = await loadSearchIndex((p) => readFile(join(dir, p)));
    const inMemory = openSearchIndex(buildSearchIndexData(RECORDS, TYPES));
    const req = { query: 'pump', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10 };
    expect(runSearch(loaded, req)).toEqual(runSearch(inMemory, req));
    expect(runSearch(loaded, { ...req, query: 'pacemaker' }).kNumbers).toEqual(['K000123', 'K200000']);
  });
});
