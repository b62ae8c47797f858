import { execFileSync } from 'node:child_process';
import { constants } from 'node:fs';
import { open, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeStorage } from '../../src/node/files.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/**
 * NodeStorage's prefetch (src/node/files.ts) reads files whole on a thread of its own. Named pipes show what it
 * does: a pipe holds 64 KiB, so a larger write into one ends only once the other side has read all of it, and a pipe
 * nobody opened for reading cannot be opened for writing without blocking.
 */
let dir: string;

beforeAll(async () => {
  dir = await testTempDir('prefetch-');
  execFileSync('mkfifo', [join(dir, 'pipe'), join(dir, 'elsewhere')]);
  await symlink(join(dir, 'elsewhere'), join(dir, 'link'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('prefetch on the local disk', () => {
  it('reads each file whole, in the background, past files it cannot read and never through a link', async () => {
    // Two storages (two snapshots) share the process's one prefetching thread, in the order of their hints.
    new NodeStorage(join(dir, 'none')).prefetch(['missing.json']);
    new NodeStorage(dir).prefetch(['link', 'pipe']);
    const writer = await open(join(dir, 'pipe'), 'w');
    // A reader that stopped early would cut the write short.
    const { bytesWritten } = await writer.write(Buffer.alloc(1024 * 1024, 0x61));
    await writer.close();
    expect(bytesWritten).toBe(1024 * 1024);
    // The link came before the pipe, and was not followed: nobody reads the pipe it points to.
    await expect(open(join(dir, 'elsewhere'), constants.O_WRONLY | constants.O_NONBLOCK)).rejects.toMatchObject({ code: 'ENXIO' });
  }, 20_000);
});
