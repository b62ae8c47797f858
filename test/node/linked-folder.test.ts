import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { NodeStorage } from '../../src/node/files.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/**
 * A snapshot's files are read without following a symbolic link anywhere on the way: the file itself, and every folder
 * between the snapshot's root and it. The build reads the previous snapshot's history through the same storage.
 */
it('a file behind a linked folder is refused (ELOOP), with or without kept descriptors; the same file in a real folder is read', async () => {
  const work = await testTempDir('device-510k-linked-');
  const root = join(work, 'snapshot');
  const outside = join(work, 'outside');
  await mkdir(join(root, 'history'), { recursive: true });
  await mkdir(join(outside, 'changes'), { recursive: true });
  await writeFile(join(outside, 'changes', '2026-01.ndjson'), 'outside\n');
  await symlink(join(outside, 'changes'), join(root, 'history', 'changes'));
  await mkdir(join(root, 'history', 'real'), { recursive: true });
  await writeFile(join(root, 'history', 'real', '2026-01.ndjson'), 'inside\n');
  for (const storage of [new NodeStorage(root), new NodeStorage(root, { openFiles: 16 })]) {
    await expect(storage.read('history/changes/2026-01.ndjson')).rejects.toMatchObject({ code: 'ELOOP' });
    await expect(storage.readRange('history/changes/2026-01.ndjson', 0, 4)).rejects.toMatchObject({ code: 'ELOOP' });
    expect(new TextDecoder().decode(await storage.read('history/real/2026-01.ndjson'))).toBe('inside\n');
  }
});
