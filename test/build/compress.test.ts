import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { compressTo, siblingsOf, wantsSiblings } from '../../build/write/compress.ts';
import { buildFixture } from '../helpers/fixture-snapshot.ts';

describe('precompressed siblings', () => {
  it('are written for text and index files where they save bytes, listed with their own sha256, and undo to the file', async () => {
    const { dir, manifest } = await buildFixture({ pagefind: true });
    const listed = new Map(manifest.files.map((f) => [f.path, f]));
    // The chunked search index's files are gzip themselves (search/chunks/*.bin.gz), not siblings of another file.
    const siblings = manifest.files.filter((f) => /\.(br|gz)$/.test(f.path) && !f.path.startsWith('search/chunks/'));
    expect(siblings.length).toBeGreaterThan(4);
    for (const kind of ['.json.br', '.json.gz', '.js.br', '.css.gz']) expect(siblings.some((f) => f.path.endsWith(kind))).toBe(true);
    for (const s of siblings) {
      const original = listed.get(s.path.slice(0, -3));
      expect(original, `${s.path} has no file it compresses`).toBeDefined();
      const packed = await readFile(join(dir, s.path));
      const plain = s.path.endsWith('.br') ? brotliDecompressSync(packed) : gunzipSync(packed);
      expect(plain.equals(await readFile(join(dir, original!.path)))).toBe(true);
      expect(s.bytes).toBeLessThanOrEqual(original!.bytes * 0.9);
      expect(wantsSiblings(original!.path)).toBe(true);
    }
    // Record shards are compressed on the fly instead (the file budget), and Pagefind's binary files are gzip already.
    expect(manifest.files.some((f) => /^records\/K.*\.json\.(br|gz)$/.test(f.path))).toBe(false);
    expect(manifest.files.some((f) => f.path.startsWith('pagefind/'))).toBe(true);
    expect(manifest.files.some((f) => /\.pf_\w+\.(br|gz)$|\.pagefind\.(br|gz)$/.test(f.path))).toBe(false);
    expect(listed.has('manifest.json.br')).toBe(false);
    expect(manifest.files.some((f) => /^search\/chunks\/.*\.bin\.gz\.(br|gz)$/.test(f.path))).toBe(false);
  });

  it('are deterministic: no time or platform in the gzip header, the same bytes every time', async () => {
    const text = new TextEncoder().encode(JSON.stringify({ a: 'x'.repeat(5000), b: [1, 2, 3] }));
    const [a, b] = await Promise.all([compressTo('gzip', text), compressTo('gzip', text)]);
    expect(a.equals(b)).toBe(true);
    expect([...a.subarray(4, 8)]).toEqual([0, 0, 0, 0]);
    expect(a[9]).toBe(3);
    expect((await compressTo('br', text)).equals(await compressTo('br', text))).toBe(true);
  });

  it('are skipped for small files and for files that do not compress', async () => {
    expect(await siblingsOf('meta.json', new TextEncoder().encode('{"a":1}'))).toEqual([]);
    const noise = randomBytes(4096);
    expect(await siblingsOf('search/part-000.bin', noise)).toEqual([]);
    expect((await siblingsOf('search/index.json', new TextEncoder().encode('"word",'.repeat(400)))).map((s) => s.path)).toEqual([
      'search/index.json.br',
      'search/index.json.gz',
    ]);
  });
});
