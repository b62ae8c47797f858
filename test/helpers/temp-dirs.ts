import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

/**
 * A new folder under the system's temporary folder, removed once the test file that made it is done (by
 * test/helpers/setup.ts): the fixture snapshots and generated data are megabytes each, and a machine that runs the
 * suite nightly would otherwise fill its disk with them.
 */
export async function testTempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Removes every folder testTempDir made in this test file. */
export async function removeTestTempDirs(): Promise<void> {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}
