import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadSearchIndex } from '../../src/search/load.ts';
import { runSearch } from '../../src/search/engine.ts';
import type { SearchEngine } from './engine.ts';

/** Our engine as the server runs it: the snapshot's index loaded into memory, one synchronous call per request. */
export async function openOurs(snapshotDir: string): Promise<SearchEngine> {
  const index = await loadSearchIndex((path) => readFile(join(snapshotDir, path)));
  return {
    run: (input) => {
      const outcome = runSearch(index, input);
      return { total: outcome.total, facets: outcome.facets, kNumbers: outcome.kNumbers };
    },
    close: () => {},
  };
}
