import { describe, expect, it } from 'vitest';
import type { SearchInput } from '../../src/contract/index.ts';
import { SEARCH_INDEX_PATH } from '../../src/contract/search-index.ts';
import { prepareSearch, search, warmSearch } from '../../src/operations/search.ts';
import type { OperationContext } from '../../src/operations/index.ts';
import { ApiError } from '../../src/api/errors.ts';
import type { Snapshot } from '../../src/snapshot/index.ts';

/** Just what search uses of a Snapshot: file listing, file reads, and the memo slot. */
function stubSnapshot(files: Record<string, () => Promise<Buffer>>) {
  const memos = new Map<string, unknown>();
  const reads: string[] = [];
  const snapshot = {
    id: '0123456789abcdef',
    fileEntry: (rel: string) => (rel in files ? { path: rel, bytes: 0, sha256: '0'.repeat(64) } : undefined),
    readFile: (rel: string) => {
      reads.push(rel);
      const read = files[rel];
      return read ? read() : Promise.reject(new Error(`no ${rel}`));
    },
    memo<T>(key: string, factory: () => T): T {
      if (!memos.has(key)) {
        const value = factory();
        memos.set(key, value);
        if (value instanceof Promise) value.catch(() => memos.delete(key));
      }
      return memos.get(key) as T;
    },
    getRecords: async () => [],
  };
  return { snapshot: snapshot as unknown as Snapshot, reads };
}

const INPUT: SearchInput = { query: 'pump', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10 };
const ctx = (snapshot: Snapshot) => ({ snapshot, servedAt: new Date(), cursors: null }) as unknown as OperationContext;

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return err instanceof ApiError ? err.code : `not an ApiError: ${String(err)}`;
  }
  return 'no error';
}

describe('the search operation when the index cannot serve', () => {
  it('answers source_unavailable for a snapshot built without a search index', async () => {
    const { snapshot } = stubSnapshot({});
    expect(await codeOf(search(prepareSearch(INPUT), ctx(snapshot)))).toBe('source_unavailable');
  });

  it('answers source_unavailable for a damaged index, and does not read it again on the next request', async () => {
    const { snapshot, reads } = stubSnapshot({ [SEARCH_INDEX_PATH]: async () => Buffer.from('{"format":"something else"}') });
    expect(await codeOf(search(prepareSearch(INPUT), ctx(snapshot)))).toBe('source_unavailable');
    expect(await codeOf(search(prepareSearch(INPUT), ctx(snapshot)))).toBe('source_unavailable');
    expect(reads).toEqual([SEARCH_INDEX_PATH]);
  });

  it('says to build the snapshot again when its index is of an older version', async () => {
    const { snapshot, reads } = stubSnapshot({ [SEARCH_INDEX_PATH]: async () => Buffer.from('{"format":"device-510k-search","version":3}') });
    const err = await search(prepareSearch(INPUT), ctx(snapshot)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('source_unavailable');
    expect((err as ApiError).message).toMatch(/older format; build the snapshot again/);
    expect(reads).toEqual([SEARCH_INDEX_PATH]);
  });

  it('treats a header that is not JSON as damaged', async () => {
    const { snapshot } = stubSnapshot({ [SEARCH_INDEX_PATH]: async () => Buffer.from('{"format":') });
    expect(await codeOf(search(prepareSearch(INPUT), ctx(snapshot)))).toBe('source_unavailable');
  });

  it('lets a read failure through (a 500) and retries the load on the next request', async () => {
    let fail = true;
    const { snapshot, reads } = stubSnapshot({
      [SEARCH_INDEX_PATH]: async () => {
        if (fail) throw Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE' });
        return Buffer.from('{"format":"something else"}');
      },
    });
    expect(await codeOf(warmSearch(snapshot))).toBe('not an ApiError: Error: EMFILE: too many open files');
    fail = false;
    expect(await codeOf(search(prepareSearch(INPUT), ctx(snapshot)))).toBe('source_unavailable');
    expect(reads).toEqual([SEARCH_INDEX_PATH, SEARCH_INDEX_PATH]);
  });
});
