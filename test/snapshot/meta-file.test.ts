import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { LAYOUT, MetaData, MetaFile } from '../../src/contract/index.ts';
import { buildFixture } from '../helpers/fixture-snapshot.ts';

let dir: string;
beforeAll(async () => {
  ({ dir } = await buildFixture());
});

it('a meta.json written before the bulk downloads is still a valid snapshot file, while a new build lists them', async () => {
  const meta = JSON.parse(await readFile(join(dir, LAYOUT.meta), 'utf8')) as Record<string, unknown>;
  expect(MetaData.safeParse(meta).success).toBe(true);
  const { downloads, ...older } = meta;
  expect(Array.isArray(downloads)).toBe(true);
  expect(MetaData.safeParse(older).success).toBe(false);
  expect(MetaFile.parse(older)).toEqual(older);
});
