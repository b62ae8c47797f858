/**
 * Adds the chunked search index (src/contract/search-chunks.ts) to a copy of a snapshot built before the build wrote
 * it, without building the snapshot again: the copy links every file of the snapshot and holds the new files.
 *
 *   npx tsx build/search-chunks.ts --snapshot DIR --out DIR
 *
 * For measuring a page over large generated snapshots; a snapshot built now carries the chunks already. The copy has
 * no manifest entry for the new files, so it is for a static host (or the page's benchmark), not for the server.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, realpath, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { parseCommandLine, runCommand } from '../src/cli/args.ts';
import { SEARCH_CHUNKS_DIR, SEARCH_CHUNKS_PATH } from '../src/contract/search-chunks.ts';
import { SEARCH_INDEX_PATH } from '../src/contract/search-index.ts';
import type { SearchIndexData } from '../src/search/codec.ts';
import { loadSearchIndex } from '../src/search/load.ts';
import { writeSearchChunks } from './index/chunks.ts';
import { SnapshotWriter } from './write/writer.ts';

const USAGE = `Usage: npx tsx build/search-chunks.ts --snapshot DIR --out DIR

Writes a copy of a snapshot (links to its files) with the chunked search index that static mode reads in parts.

  --snapshot DIR   the snapshot to read (its search/ index)
  --out DIR        the copy to make (replaced if it exists)`;

async function main(): Promise<void> {
  const values = parseCommandLine('search-chunks', USAGE, { snapshot: { type: 'string' }, out: { type: 'string' } });
  if (!values.snapshot || !values.out) throw new Error('--snapshot and --out are both required');
  const from = await realpath(values.snapshot);
  const out = values.out;
  await rm(out, { recursive: true, force: true });
  await mkdir(join(out, 'search'), { recursive: true });
  for (const name of await readdir(from)) if (name !== 'search') await symlink(join(from, name), join(out, name));
  for (const name of await readdir(join(from, 'search'))) {
    if (name === 'chunks' || name.startsWith('chunks.json')) continue;
    await symlink(join(from, 'search', name), join(out, 'search', name));
  }
  const started = Date.now();
  const index = await loadSearchIndex((p) => readFile(join(from, p)));
  const header = await readFile(join(from, SEARCH_INDEX_PATH));
  const writer = new SnapshotWriter(out);
  const dir = await writeSearchChunks(index as unknown as SearchIndexData, createHash('sha256').update(header).digest('hex'), writer);
  await writer.flush();
  const files = (await readdir(join(out, SEARCH_CHUNKS_DIR))).length;
  console.log(`${out}: ${SEARCH_CHUNKS_PATH} and ${files} files (${dir.termChunks.length} word chunks) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

runCommand('search-chunks', main);
