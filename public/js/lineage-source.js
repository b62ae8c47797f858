// Static mode's lineage: the service's own walk (src/operations/lineage-walk.ts, bundled as lineage-engine.js) over
// the snapshot's lineage files, read from the host as a question needs them (the header, then the shards of the
// devices the walk meets), so the page answers device-510k.lineage's questions with the operation's answer.

/** The error a lineage question gets for a number with neither a record nor an edge, as the service names it. */
export class LineageNotFound extends Error {
  constructor(id) {
    super(`No 510(k) clearance ${id} in this snapshot, and no device names it or is named by it.`);
    this.code = 'record_not_found';
  }
}

/** Walks remembered: a cursor walk asks the same question again for each page. */
const WALKS_KEPT = 8;

/**
 * `lineage(input)` for a snapshot at `url(path)`, answering `{ data, page }` as the service does; `record(k)` reads
 * a clearance record (null when the snapshot has none).
 */
export function staticLineage({ url, record }) {
  let opened = null;
  const walks = new Map();

  const read = async (path) => {
    const res = await fetch(url(path));
    if (!res.ok) throw new Error(`The file ${path} of the lineage could not be loaded (HTTP ${res.status}).`);
    return new Uint8Array(await res.arrayBuffer());
  };

  /** The engine and the snapshot's lineage files (files null for a snapshot built before lineage was part of it). */
  const open = () =>
    (opened ??= (async () => {
      const [mod, index] = await Promise.all([import('./lineage-engine.js'), fetch(url('lineage/index.json'))]);
      // A host answers a missing file with 404, some (object stores) with 403: a snapshot without lineage files.
      if (index.status === 404 || index.status === 403) return { mod, files: null };
      if (!index.ok) throw new Error(`The file lineage/index.json could not be loaded (HTTP ${index.status}).`);
      const header = new Uint8Array(await index.arrayBuffer());
      const files = await mod.LineageFiles.open((path) => (path === mod.LINEAGE_INDEX_PATH ? Promise.resolve(header) : read(path)), () => true);
      return { mod, files };
    })().catch((err) => ((opened = null), Promise.reject(err))));

  const walkOf = (mod, files, question) => {
    const key = JSON.stringify([question.id, question.direction, question.depth, question.kinds]);
    let walk = walks.get(key);
    if (!walk) {
      walk = mod.walkLineage(files, question);
      walk.catch(() => walks.delete(key));
      walks.set(key, walk);
      if (walks.size > WALKS_KEPT) walks.delete(walks.keys().next().value);
    }
    return walk;
  };

  async function lineage(input) {
    const id = String(input.id).trim().toUpperCase();
    const question = { id, direction: input.direction, depth: input.depth, kinds: input.kinds };
    const { mod, files } = await open();
    const walk = files ? await walkOf(mod, files, question) : null;
    if (!walk?.known && !(id.startsWith('K') && (await record(id)))) throw new LineageNotFound(id);
    const w = walk ?? { codes: [], depths: [], vias: [], origins: [], infos: [], cycles: [] };
    const origins = files?.index.origins ?? [];
    // The page's own cursor: the last device returned, as the service's cursor names it (unsigned: it never leaves the page).
    const after = input.cursor ? JSON.parse(input.cursor) : null;
    const from = after ? mod.positionAfter(w, after.d, mod.lineageCode(after.a)) : 0;
    const to = Math.min(w.codes.length, from + input.limit);
    const numbers = w.codes.slice(from, to).map((code) => mod.lineageNumber(code));
    const records = await Promise.all(numbers.map((k, i) => (w.infos[from + i] & mod.HAS_RECORD ? record(k) : null)));
    const items = numbers.map((kNumber, i) => {
      const at = from + i;
      const origin = origins[w.origins[at]];
      return { kNumber, depth: w.depths[at], via: mod.lineageNumber(w.vias[at]), kind: origin?.kind, source: origin?.source, record: records[i] ?? null };
    });
    const { byDepth, byYear } = mod.lineageCounts(w);
    const cycles = w.cycles.map((c) => ({ kNumber: mod.lineageNumber(c.code), via: mod.lineageNumber(c.via), kind: origins[c.origin]?.kind, source: origins[c.origin]?.source }));
    const hasNextPage = to < w.codes.length;
    const nextCursor = hasNextPage ? JSON.stringify({ d: w.depths[to - 1], a: numbers.at(-1) }) : null;
    return { data: { items, byDepth, byYear, cycles }, page: { itemsReturned: items.length, total: w.codes.length, hasNextPage, nextCursor } };
  }

  /**
   * Starts the whole walk of a lineage view's question (every kind, the whole chain) before the view asks for it, so
   * that a first view of a lineage reads its shards while the rest of the page loads; a failure is the view's to say.
   */
  lineage.prepare = (id, direction) => {
    const question = { id: String(id).trim().toUpperCase(), direction, depth: null, kinds: null };
    open().then(({ mod, files }) => files && walkOf(mod, files, question)).catch(() => {});
  };
  return lineage;
}
