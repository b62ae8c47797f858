import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { SEARCH_CHUNKS_PATH, SearchChunks } from '../../src/contract/search-chunks.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';

/**
 * Static mode's check of a chunk file (public/js/static-source.js), on bytes alone: whatever arrives is hashed before
 * the engine reads it, gzip or not. A host that inflates a file on the way (Content-Encoding: gzip) hands the page
 * the bytes inside, which the directory's `inflated` hash checks.
 */
type Module = {
  checkedChunk: (path: string, inflated: string | null, bytes: Uint8Array) => Promise<Uint8Array>;
  chunkFilesOf: (directory: SearchChunks) => { path: string; bytes: number; inflated?: string }[];
};
const { checkedChunk, chunkFilesOf } = (await import('../../public/js/static-source.js' as string)) as Module;

let snapshot: string;
let directory: SearchChunks;
beforeAll(async () => {
  snapshot = await buildFixtureSnapshot();
  directory = SearchChunks.parse(JSON.parse(await readFile(join(snapshot, SEARCH_CHUNKS_PATH), 'utf8')));
});

/** A K number block: gzip as stored, and the bytes inside. */
async function kBlock() {
  const ref = directory.kBlocks[0]!;
  const gz = new Uint8Array(await readFile(join(snapshot, ref.path)));
  return { ref, gz, raw: new Uint8Array(gunzipSync(gz)) };
}

describe('a chunk file is checked whatever its bytes', () => {
  it('the directory gives the hash of the bytes inside each file', async () => {
    const { ref, raw } = await kBlock();
    expect(ref.inflated).toBe(createHash('sha256').update(raw).digest('hex').slice(0, 20));
  });

  it('gzip bytes as stored are inflated; bytes a host inflated pass as they are', async () => {
    const { ref, gz, raw } = await kBlock();
    expect(await checkedChunk(ref.path, ref.inflated!, gz)).toEqual(raw);
    expect(await checkedChunk(ref.path, ref.inflated!, raw)).toEqual(raw);
  });

  it('an inflated block with its content altered (its last numbers reversed) is refused', async () => {
    const { ref, raw } = await kBlock();
    const altered = raw.slice();
    altered.subarray(altered.length - 64).reverse();
    expect(altered).not.toEqual(raw);
    // Not gzip's first byte: before, such bytes went to the engine unchecked.
    expect(altered[0]).not.toBe(0x1f);
    await expect(checkedChunk(ref.path, ref.inflated!, altered)).rejects.toThrow(/is damaged/);
  });

  it('altered gzip bytes are refused, and so are inflated bytes no hash can check', async () => {
    const { ref, raw } = await kBlock();
    const altered = raw.slice();
    altered.subarray(altered.length - 64).reverse();
    await expect(checkedChunk(ref.path, ref.inflated!, new Uint8Array(gzipSync(altered)))).rejects.toThrow(/is damaged/);
    await expect(checkedChunk(ref.path, null, raw)).rejects.toThrow(/arrived inflated.*no hash to check it by/);
  });
});

/** Every file reference anywhere in the directory's JSON, found by its shape alone (a path beside its size). */
function fileRefsIn(value: unknown, into = new Map<string, { bytes: number; inflated?: string }>()) {
  if (Array.isArray(value)) for (const v of value) fileRefsIn(v, into);
  else if (typeof value === 'object' && value !== null) {
    const o = value as Record<string, unknown>;
    if (typeof o.path === 'string' && typeof o.bytes === 'number') into.set(o.path, { bytes: o.bytes, ...(typeof o.inflated === 'string' && { inflated: o.inflated }) });
    else for (const v of Object.values(o)) fileRefsIn(v, into);
  }
  return into;
}

describe('the page knows every file of the directory', () => {
  it('each file the directory names is listed once with its size and inner hash: words, predicates and all', async () => {
    const raw: unknown = JSON.parse(await readFile(join(snapshot, SEARCH_CHUNKS_PATH), 'utf8'));
    const refs = fileRefsIn(raw);
    // The fixture's directory has every optional part, so none of them can be left out unnoticed.
    expect(Object.keys(raw as object)).toEqual(expect.arrayContaining(['words', 'predicates']));
    const listed = chunkFilesOf(directory);
    expect(listed.map((f) => f.path).sort()).toEqual([...refs.keys()].sort());
    for (const f of listed) {
      expect(f.bytes, f.path).toBe(refs.get(f.path)!.bytes);
      expect(f.inflated, f.path).toBe(refs.get(f.path)!.inflated);
      expect(f.inflated, f.path).toMatch(/^[0-9a-f]{20}$/);
    }
  });
});
