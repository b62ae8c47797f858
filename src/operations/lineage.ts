import { z } from 'zod';
import { EDGE_KINDS, HAS_RECORD, LINEAGE_DIRECTIONS, lineageCode, lineageNumber, type LineageInput } from '../contract/index.ts';
import type { Snapshot } from '../snapshot/index.ts';
import { LruCache } from '../utils/lru.ts';
import { ApiError } from './errors.ts';
import { LineageFiles, lineageCounts, positionAfter, walkLineage, type LineageQuestion, type LineageWalk } from './lineage-walk.ts';
import { JsonBytes, type DataOf, type OperationContext, type OperationResult, type PrepareContext } from './types.ts';

/**
 * device-510k.lineage (docs/lineage.md): the walk of lineage-walk.ts over the snapshot's lineage files, a page of it
 * with each device's record, and counts over the whole of it. The cursor names the last device returned (its depth
 * and number) and the question it belongs to, signed like the catalog's; a walk goes on after that device.
 */
const CURSOR_DOMAIN = 'device-510k/lineage-cursor';

const CursorText = z.strictObject({
  i: z.string(),
  r: z.enum(LINEAGE_DIRECTIONS),
  x: z.int().nullable(),
  t: z.array(z.enum(EDGE_KINDS)).nullable(),
  d: z.int().min(1),
  a: z.string().regex(/^(K|DEN)\d{6}$/),
  s: z.string().regex(/^[0-9a-f]{16}$/),
});
type CursorText = z.infer<typeof CursorText>;

export type PreparedLineage = LineageInput & { after: CursorText | null };

const invalid = (message: string, detail: string) => new ApiError('invalid_cursor', message, { details: [{ path: 'input.cursor', message: detail }] });

export function prepareLineage(input: LineageInput, ctx: PrepareContext): PreparedLineage {
  if (input.cursor === null) return { ...input, after: null };
  const text = ctx.cursors.openAs(CURSOR_DOMAIN, input.cursor);
  let parsed: CursorText | null = null;
  if (text !== null) {
    try {
      const result = CursorText.safeParse(JSON.parse(text));
      parsed = result.success ? result.data : null;
    } catch {
      parsed = null;
    }
  }
  if (parsed === null) throw invalid('input.cursor was not issued by this service, or it was altered.', 'must be a page.nextCursor returned by this service');
  if (parsed.i !== input.id || parsed.r !== input.direction || parsed.x !== input.depth || JSON.stringify(parsed.t) !== JSON.stringify(input.kinds)) {
    throw invalid('input.cursor continues another lineage question; send the same id, direction, depth and kinds with it.', 'belongs to another id, direction, depth or kinds');
  }
  return { ...input, after: parsed };
}

/** Per snapshot: its lineage files (null when it has none), and the last few walks, which a cursor walk asks again. */
type Held = { files: Promise<LineageFiles | null>; walks: LruCache<string, Promise<LineageWalk>> };
const held = new WeakMap<Snapshot, Held>();

/** The lineage files of a snapshot, opened once, read through the snapshot's checked reads. */
export function lineageFilesOf(snapshot: Snapshot): Held {
  let h = held.get(snapshot);
  if (!h) {
    const files = LineageFiles.open(
      (path) => snapshot.readFile(path),
      (path) => snapshot.fileEntry(path) !== undefined,
    );
    h = { files, walks: new LruCache(8) };
    // A header that could not be read is read again by the next question, not remembered.
    files.catch(() => held.delete(snapshot));
    held.set(snapshot, h);
  }
  return h;
}

/** The walk for a question: remembered per snapshot, so the pages of one walk do not walk again. */
export async function lineageWalkOf(snapshot: Snapshot, question: LineageQuestion): Promise<{ files: LineageFiles | null; walk: LineageWalk | null }> {
  const h = lineageFilesOf(snapshot);
  const files = await h.files;
  if (files === null) return { files, walk: null };
  const key = JSON.stringify([question.id, question.direction, question.depth, question.kinds]);
  let walk = h.walks.get(key);
  if (!walk) {
    walk = walkLineage(files, question);
    h.walks.set(key, walk);
    walk.catch(() => h.walks.delete(key));
  }
  return { files, walk: await walk };
}

const encoder = new TextEncoder();

export async function lineage(input: PreparedLineage, ctx: OperationContext): Promise<OperationResult<DataOf<'device-510k.lineage'>>> {
  const { snapshot } = ctx;
  const { files, walk } = await lineageWalkOf(snapshot, input);
  if (!walk?.known) {
    const record = input.id.startsWith('K') ? await snapshot.recordJson(input.id) : null;
    if (record === null) throw new ApiError('record_not_found', `No 510(k) clearance ${input.id} in this snapshot, and no device names it or is named by it.`);
  }
  const empty: LineageWalk = { known: false, codes: [], depths: [], vias: [], origins: [], infos: [], cycles: [] };
  const w = walk ?? empty;
  const origins = files?.index.origins ?? [];
  const from = input.after === null ? 0 : positionAfter(w, input.after.d, lineageCode(input.after.a));
  const to = Math.min(w.codes.length, from + input.limit);
  const codes = w.codes.slice(from, to);
  const records = await Promise.all(
    codes.map((code, i) => ((w.infos[from + i] as number) & HAS_RECORD ? snapshot.recordJson(lineageNumber(code)) : Promise.resolve(null))),
  );
  const parts = codes.map((code, i) => {
    const at = from + i;
    const origin = origins[w.origins[at] as number];
    const head = `{"kNumber":"${lineageNumber(code)}","depth":${w.depths[at]},"via":"${lineageNumber(w.vias[at] as number)}","kind":${JSON.stringify(origin?.kind)},"source":${JSON.stringify(origin?.source)},"record":`;
    const record = records[i] ?? null;
    return record === null ? encoder.encode(`${head}null}`) : JsonBytes.join(head, [record], '}').bytes;
  });
  const { byDepth, byYear } = lineageCounts(w);
  const cycles = w.cycles.map((c) => ({ kNumber: lineageNumber(c.code), via: lineageNumber(c.via), kind: origins[c.origin]?.kind, source: origins[c.origin]?.source }));
  const data = JsonBytes.join<DataOf<'device-510k.lineage'>>(
    '{"items":[',
    parts,
    `],"byDepth":${JSON.stringify(byDepth)},"byYear":${JSON.stringify(byYear)},"cycles":${JSON.stringify(cycles)}}`,
  );
  const hasNext = to < w.codes.length;
  const last = to - 1;
  const nextCursor = hasNext
    ? ctx.cursors.signAs(
        CURSOR_DOMAIN,
        JSON.stringify({ i: input.id, r: input.direction, x: input.depth, t: input.kinds, d: w.depths[last], a: lineageNumber(w.codes[last] as number), s: snapshot.id }),
      )
    : null;
  const warnings: string[] = [];
  if (input.after && input.after.s !== snapshot.id) {
    warnings.push(
      `The snapshot changed since this cursor was issued (it was ${input.after.s}, it is now ${snapshot.id}); the walk goes on after ${input.after.a} at depth ${input.after.d} in the current snapshot's answer.`,
    );
  }
  return {
    data,
    page: {
      itemsReturned: codes.length,
      total: w.codes.length,
      totalRelation: 'exact',
      hasNextPage: hasNext,
      nextCursor,
      snapshotToken: snapshot.id,
      consistency: 'keyset',
    },
    warnings,
  };
}
