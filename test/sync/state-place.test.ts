import { readFile, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSync } from '../../build/sync/run.ts';
import { SyncState } from '../../src/contract/sync.ts';
import { defaultSyncStatePath } from '../../src/server/config.ts';
import { SyncStateReader } from '../../src/node/index.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/** A sync's state lives beside the snapshot link it publishes, and a server reads only the state of its own link. */

let work: string;
beforeAll(async () => {
  work = await testTempDir('sync-place-');
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

/** A sync that fails at once (nothing listens on port 9), publishing to `out` with no --dir. */
const failedSync = (out: string) =>
  runSync({ baseUrl: 'http://127.0.0.1:9/files/', files: ['pmn7680.zip'], out, retries: 0, timeoutMs: 2_000, baseDelayMs: 1, maxDelayMs: 2 });

describe('where the sync keeps its state', () => {
  it.each([
    ['a link named snapshot: .sync beside it', 'a/snapshot', 'a/.sync'],
    ['a link of another name: .sync-NAME beside it', 'a/mirror-b', 'a/.sync-mirror-b'],
  ])('%s', async (_, link, stateDir) => {
    const out = join(work, link);
    const result = await failedSync(out);
    expect(result.outcome).toBe('failed');
    const state = SyncState.parse(JSON.parse(await readFile(join(work, stateDir, 'state.json'), 'utf8')));
    expect(state.snapshot).toBe(resolve(out));
    expect(state.lastFailure?.reason).toMatch(/^pmn7680\.zip: could not be downloaded from http:\/\/127\.0\.0\.1:9\/files\/pmn7680\.zip: /);
    // The server of that link looks exactly there.
    expect(defaultSyncStatePath(out)).toBe(join(work, stateDir, 'state.json'));
  });

  it('a server ignores a state that names another link, and reads its own', async () => {
    const served = join(work, 'srv', 'snapshot');
    // The state of a sync for another link, written where the served link's state would be (an explicit --dir).
    const result = await runSync({ baseUrl: 'http://127.0.0.1:9/files/', files: ['pmn7680.zip'], out: join(work, 'elsewhere', 'snapshot'), dir: join(work, 'srv', '.sync'), retries: 0 });
    expect(result.outcome).toBe('failed');
    const path = defaultSyncStatePath(served);
    const errors: string[] = [];
    const mine = new SyncStateReader(path, { pollMs: 0, snapshot: resolve(served), onError: (m) => errors.push(m) });
    await mine.start();
    expect(mine.current).toBeNull();
    expect(errors).toEqual([`ignoring ${path}: it is the sync state of ${resolve(join(work, 'elsewhere', 'snapshot'))}, not of ${resolve(served)}`]);
    const theirs = new SyncStateReader(path, { pollMs: 0, snapshot: resolve(join(work, 'elsewhere', 'snapshot')) });
    await theirs.start();
    expect(theirs.current?.lastFailure?.reason).toMatch(/could not be downloaded from http:\/\/127\.0\.0\.1:9\/files\/pmn7680\.zip/);
  });
});
