import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LAYOUT, Manifest, snapshotIdOf } from '../../src/contract/index.ts';
import { openSnapshotDirectory } from '../../src/node/index.ts';
import { InvalidSnapshot } from '../../src/snapshot/index.ts';
import { sha256Hex } from '../../src/utils/sha256-hex.ts';
import { buildFixture } from '../helpers/fixture-snapshot.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/** A copy of a fresh fixture snapshot whose manifest `edit` may change. */
async function copyWithManifest(edit: (m: Manifest) => Manifest): Promise<string> {
  const { dir } = await buildFixture();
  const copy = join(await testTempDir('device-510k-manifest-'), 'snap');
  await cp(dir, copy, { recursive: true });
  const manifest = Manifest.parse(JSON.parse(await readFile(join(copy, LAYOUT.manifest), 'utf8')));
  await writeFile(join(copy, LAYOUT.manifest), `${JSON.stringify(edit(manifest))}\n`);
  return copy;
}

describe('opening a snapshot checks its manifest against its own id', () => {
  it('opens an intact snapshot, whose id is the digest of its file list', async () => {
    const copy = await copyWithManifest((m) => m);
    const snapshot = await openSnapshotDirectory(copy);
    expect(snapshot.manifest.snapshotId).toBe(snapshotIdOf(snapshot.manifest.files, sha256Hex));
  });

  it('refuses a manifest whose file list was edited without its id', async () => {
    const copy = await copyWithManifest((m) => ({ ...m, files: m.files.filter((f) => f.path !== LAYOUT.report) }));
    await expect(openSnapshotDirectory(copy)).rejects.toThrow(InvalidSnapshot);
    await expect(openSnapshotDirectory(copy)).rejects.toThrow(/snapshotId does not match its file list/);
  });
});
