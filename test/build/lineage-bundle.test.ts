import { readFile, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
import { bundleLineage, LINEAGE_BUNDLE } from '../../build/page/bundle.ts';
import { LineageFiles, lineageCounts, walkLineage } from '../../src/operations/lineage-walk.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { readModel } from '../helpers/lineage-model.ts';

type Bundle = { LineageFiles: typeof LineageFiles; walkLineage: typeof walkLineage; lineageCounts: typeof lineageCounts; LINEAGE_INDEX_PATH: string };

/** The static page's lineage walk (public/js/lineage-engine.js): the service's walk, with the subset of zod it carries. */
describe('the browser bundle of the lineage walk', () => {
  let dir: string;
  let bundle: Bundle;
  const read = (path: string) => readFile(join(dir, path)).then((b) => new Uint8Array(b));
  const has = () => true;

  beforeAll(async () => {
    dir = await realpath(await buildFixtureSnapshot());
    bundle = (await import(LINEAGE_BUNDLE)) as Bundle;
  }, 120_000);

  test('is what the sources give today (run npm run build:page after changing the walk)', async () => {
    expect(await readFile(LINEAGE_BUNDLE, 'utf8')).toBe(await bundleLineage());
  });

  test('walks exactly as the service does, every device that has an edge, both ways', async () => {
    const [node, page] = [await LineageFiles.open(read, has), await bundle.LineageFiles.open(read, has)];
    // Every device of the fixture's edge files (read as text by the test's model), and a number with no edge.
    const numbers = [...readModel(fileURLToPath(new URL('../fixtures/fda/predicates', import.meta.url))).devices, 'K000000'];
    expect(numbers.length).toBeGreaterThan(10);
    let walked = 0;
    for (const id of numbers) {
      for (const direction of ['predicates', 'descendants'] as const) {
        for (const depth of [1, null]) {
          const question = { id, direction, depth, kinds: null };
          const want = await walkLineage(node!, question);
          expect(await bundle.walkLineage(page!, question), `${id} ${direction} ${depth}`).toEqual(want);
          expect(bundle.lineageCounts(want)).toEqual(lineageCounts(want));
          if (want.codes.length > 0) walked++;
        }
      }
    }
    expect(walked).toBeGreaterThan(5);
  });

  test("checks the lineage header with the subset of zod it carries: a damaged header is refused", async () => {
    const header = JSON.parse(new TextDecoder().decode(await read('lineage/index.json')));
    const withHeader = (h: unknown) => (path: string) => (path === bundle.LINEAGE_INDEX_PATH ? Promise.resolve(new TextEncoder().encode(JSON.stringify(h))) : read(path));
    await expect(bundle.LineageFiles.open(withHeader({ ...header, extra: 1 }), has)).rejects.toThrow(/header\.extra is not expected/);
    await expect(bundle.LineageFiles.open(withHeader({ ...header, version: 99 }), has)).rejects.toThrow(/header\.version must be/);
    await expect(bundle.LineageFiles.open(withHeader({ ...header, origins: [{ source: 'Not An Id', kind: 'named' }] }), has)).rejects.toThrow(/origins\[0\]\.source must match/);
    await expect(bundle.LineageFiles.open(withHeader({ ...header, edges: -1 }), has)).rejects.toThrow(/header\.edges must be at least 0/);
    await expect(bundle.LineageFiles.open(withHeader({ ...header, sources: [{ ...header.sources[0], devicesRead: 'x' }] }), has)).rejects.toThrow(/devicesRead must be an integer/);
    await expect(bundle.LineageFiles.open(withHeader(header), has)).resolves.toBeTruthy();
  });
});
