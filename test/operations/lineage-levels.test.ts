import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { lineageNumber } from '../../src/contract/index.ts';
import { openSnapshotDirectory } from '../../src/node/index.ts';
import { lineageFilesOf, walkLineage, type LineageFiles, type LineageWalk } from '../../src/operations/index.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { modelWalk, readModel, type Model } from '../helpers/lineage-model.ts';

/**
 * A walk tells each level as it is done (what the static page draws before the answer): every time, the devices it
 * says are known are the answer's first ones, exactly as the independent walk of the edge files has them, and all of
 * those within their steps; the answer is the same with a listener as without.
 */
let model: Model;
let files: LineageFiles;

beforeAll(async () => {
  model = readModel(fileURLToPath(new URL('../fixtures/fda/predicates', import.meta.url)));
  files = (await lineageFilesOf(await openSnapshotDirectory(await buildFixtureSnapshot())).files)!;
}, 120_000);

type Told = { known: number; codes: number[]; depths: number[]; vias: number[]; origins: number[]; infos: number[] };

describe('a walk told level by level', () => {
  it('every device, both ways: each level told is a prefix of the answer, whole levels, in order; the answer unchanged', async () => {
    let told = 0;
    let deep = 0;
    for (const id of [...model.devices].sort()) {
      for (const direction of ['predicates', 'descendants'] as const) {
        for (const depth of [null, 2]) {
          const question = { id, direction, depth, kinds: null };
          const parts: Told[] = [];
          const listen = (w: Readonly<LineageWalk>, known: number) =>
            parts.push({ known, codes: w.codes.slice(0, known), depths: w.depths.slice(0, known), vias: w.vias.slice(0, known), origins: w.origins.slice(0, known), infos: w.infos.slice(0, known) });
          const walk = await walkLineage(files, question, listen);
          expect(walk, `${id} ${direction} ${depth}`).toEqual(await walkLineage(files, question));
          const want = modelWalk(model, id, direction, depth, null).items;
          let before = 0;
          for (const p of parts) {
            const at = `${id} ${direction} ${depth} known ${p.known}`;
            expect(p.known, at).toBeGreaterThan(before);
            before = p.known;
            // Whole levels: every device within the deepest step told, and none deeper.
            const deepest = want[p.known - 1]!.depth;
            expect(p.known, at).toBe(want.filter((i) => i.depth <= deepest).length);
            const items = p.codes.map((code, i) => {
              const origin = files.index.origins[p.origins[i]!]!;
              return { kNumber: lineageNumber(code), depth: p.depths[i], via: lineageNumber(p.vias[i]!), kind: origin.kind, source: origin.source };
            });
            expect(items, at).toEqual(want.slice(0, p.known));
            // Each device's record and year as the answer has them.
            expect(p.infos, at).toEqual(walk.infos.slice(0, p.known));
            told++;
            if (deepest >= 2) deep++;
          }
          // The whole chain: its last level is told too, so the last told is the whole answer.
          if (depth === null) expect(parts.at(-1)?.known ?? 0, `${id} ${direction}`).toBe(want.length);
        }
      }
    }
    expect(told).toBeGreaterThan(20);
    expect(deep).toBeGreaterThan(3);
  }, 120_000);
});
