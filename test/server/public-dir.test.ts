import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { precompressedCopy } from '../../src/server/public-dir.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

const made: string[] = [];
afterEach(async () => {
  for (const d of made.splice(0)) await rm(d, { recursive: true, force: true });
});

describe("the server's copy of the page folder", () => {
  it('compresses a text file from its own bytes, not from a stale .gz or .br left beside it', async () => {
    const dir = await testTempDir('public-dir-');
    made.push(dir);
    const fresh = `export const edited = ${JSON.stringify('x'.repeat(3000))};\n`;
    await writeFile(join(dir, 'app.js'), fresh);
    // What an earlier build left: copies of the file as it was before the edit.
    await writeFile(join(dir, 'app.js.gz'), gzipSync('export const old = 1;\n'));
    await writeFile(join(dir, 'app.js.br'), 'not even brotli');
    // A compressed file with no text file beside it is the folder's own content, copied as it is.
    const own = gzipSync('a download');
    await writeFile(join(dir, 'data.csv.gz'), own);
    const copy = await precompressedCopy(dir);
    expect(copy).not.toBeNull();
    made.push(copy!);
    expect(gunzipSync(await readFile(join(copy!, 'app.js.gz'))).toString()).toBe(fresh);
    expect(brotliDecompressSync(await readFile(join(copy!, 'app.js.br'))).toString()).toBe(fresh);
    expect(await readFile(join(copy!, 'data.csv.gz'))).toEqual(own);
  });
});
