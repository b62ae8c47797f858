// Static mode's lineage: the service's own walk (src/operations/lineage-walk.ts, bundled as lineage-engine.js) over
// the snapshot's lineage files, read from the host as a question needs them (the header, then the shards of the
// devices the walk meets), so the page answers device-510k.lineage's questions with the operation's answer.

import { readRecordNames } from './record-names.js';
import { closureEntrySpan, closureLayout } from './service-rules.js';

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
 * The bytes at the start of a closure file that hold its tables, at most: u32 count, then u16 and u32 for each of up
 * to 1,000 devices (a shard holds 1,000 numbers; src/contract/lineage-closure-layout.ts has the layout). A page reads them, then
 * only the start's entry, with two range requests rather than the whole file (about 50-110 KB).
 */
export const CLOSURE_TABLES_BYTES = 4 + 1000 * 2 + 1000 * 4;

/** The Range header of `length` bytes from `from`. */
export const byteRange = (from, length) => ({ Range: `bytes=${from}-${from + length - 1}` });

/**
 * `lineage(input)` for a snapshot at `url(path)`, answering `{ data, page }` as the service does; `record(k)` reads
 * a clearance record (null when the snapshot has none). A page opened on a lineage asks first thing for the lineage
 * header (`header`, the response to its fetch) and for the files its question reads first (`first`: a list of
 * `{ path, response }`, the start's closure file and its shard), a guess from its number that the header would
 * confirm a round trip later; either may be null.
 */
export function staticLineage({ url, record, header: headerRequest = null, first = null }) {
  let opened = null;
  const walks = new Map();
  const early = new Map((first ?? []).map((f) => [f.path, f.response]));

  /** A file's bytes; with `missing`, null for a file the host does not have (404, or 403 for some object stores). */
  const read = async (path, { missing = false } = {}) => {
    let res = null;
    if (early.has(path)) {
      const asked = early.get(path);
      early.delete(path);
      res = await asked.catch(() => null);
    }
    if (!res?.ok && !(missing && (res?.status === 404 || res?.status === 403))) res = await fetch(url(path));
    if (missing && (res.status === 404 || res.status === 403)) return null;
    if (!res.ok) throw new Error(`The file ${path} of the lineage could not be loaded (HTTP ${res.status}).`);
    return new Uint8Array(await res.arrayBuffer());
  };

  /**
   * `length` bytes of a file from `from`, as `{ bytes, whole }`: `whole` when the host sent the whole file (one that
   * does not serve ranges); null for a file the host does not have (404, or 403 for some object stores).
   */
  const readRange = async (path, from, length) => {
    let res = null;
    if (from === 0 && early.has(path)) {
      const asked = early.get(path);
      early.delete(path);
      res = await asked.catch(() => null);
    }
    if (!res || (!res.ok && res.status !== 404 && res.status !== 403)) res = await fetch(url(path), { headers: byteRange(from, length) });
    if (res.status === 404 || res.status === 403) return null;
    if (res.status === 200) return { bytes: new Uint8Array(await res.arrayBuffer()), whole: true };
    const range = /^bytes (\d+)-\d+\/\d+$/.exec(res.headers.get('content-range') ?? '');
    if (res.status !== 206 || !range || Number(range[1]) !== from) {
      // Anything else than the range asked for (a failure, or a range the page did not ask for): the whole file.
      const bytes = await read(path, { missing: true });
      return bytes && { bytes, whole: true };
    }
    return { bytes: new Uint8Array(await res.arrayBuffer()), whole: false };
  };

  /** Closure reads by file and device: a view's first one starts before the engine and the header are in. */
  const closureReads = new Map();
  const closureBytes = (path, low) => {
    const key = `${path} ${low}`;
    if (!closureReads.has(key)) closureReads.set(key, readClosure(path, low).catch((err) => (closureReads.delete(key), Promise.reject(err))));
    return closureReads.get(key);
  };

  /**
   * The bytes of a closure file that the decoder reads for the entry of the device whose number ends in `low` (the
   * tables and that entry, in their places; zeros elsewhere), or the whole file from a host without ranges; null for
   * a snapshot without the file.
   */
  async function readClosure(path, low) {
    const head = await readRange(path, 0, CLOSURE_TABLES_BYTES);
    if (!head || head.whole) return head?.bytes ?? null;
    const tables = head.bytes;
    // Too short for its tables, or not holding the start: the decoder says which.
    if (tables.length < 4) return tables;
    const { count, base } = closureLayout(tables);
    if (tables.length < base) return tables;
    const span = closureEntrySpan(tables, count, low);
    if (span === null) return tables.subarray(0, base);
    const { from, to } = span;
    // A file shorter than the tables' range came whole.
    if (from >= to || tables.length >= base + to) return tables;
    const entry = await readRange(path, base + from, to - from);
    if (!entry || entry.whole) return entry?.bytes ?? null;
    if (entry.bytes.length !== to - from) throw new Error(`The file ${path} of the lineage ends within an entry.`);
    const out = new Uint8Array(base + to);
    out.set(tables.subarray(0, base));
    out.set(entry.bytes, base + from);
    return out;
  }

  /**
   * The names of a view's devices (their numbers, each with a record), read from the record names files before their
   * records: two requests of byte ranges, where the records are one shard each. `{ names, asked }`: the names (never
   * fails: a number it cannot name is left out, for its record to name), and when its last request is on its way, so
   * that the records asked for after it queue behind it.
   */
  const nameReads = new Map();
  const namesOf = (numbers) => {
    const key = numbers.join(' ');
    if (!nameReads.has(key)) {
      let asked;
      const sent = new Promise((resolve) => (asked = resolve));
      nameReads.set(key, { names: readRecordNames(url, numbers, asked).catch(() => new Map()), asked: sent });
      if (nameReads.size > WALKS_KEPT) nameReads.delete(nameReads.keys().next().value);
    }
    return nameReads.get(key);
  };

  /** The engine and the snapshot's lineage files (files null for a snapshot built before lineage was part of it). */
  const open = () =>
    (opened ??= (async () => {
      const asked = headerRequest ?? fetch(url('lineage/index.json'));
      headerRequest = null;
      const [mod, index] = await Promise.all([import('./lineage-engine.js'), asked]);
      // A host answers a missing file with 404, some (object stores) with 403: a snapshot without lineage files.
      if (index.status === 404 || index.status === 403) return { mod, files: null };
      if (!index.ok) throw new Error(`The file lineage/index.json could not be loaded (HTTP ${index.status}).`);
      const header = new Uint8Array(await index.arrayBuffer());
      const files = await mod.LineageFiles.open((path) => (path === mod.LINEAGE_INDEX_PATH ? Promise.resolve(header) : read(path)), () => true);
      return { mod, files };
    })().catch((err) => ((opened = null), Promise.reject(err))));

  /**
   * A walk of a question, shared by every ask of it: its answer (`done`), and while it runs the devices known final so
   * far (`walk`, `known`: the first `known` of the answer) with whoever listens for more (`listeners`).
   */
  const walkOf = (mod, files, question) => {
    const key = JSON.stringify([question.id, question.direction, question.depth, question.kinds]);
    let entry = walks.get(key);
    if (!entry) {
      const made = { walk: null, known: 0, listeners: new Set() };
      const tell = (walk, known, complete = false) => {
        made.walk = walk;
        made.known = known;
        made.complete = complete;
        // A listener's failure is its own: the walk goes on.
        for (const listener of made.listeners) {
          try {
            listener(walk, known, complete);
          } catch {}
        }
      };
      made.done = closureOf(mod, files, question).then((closure) => {
        if (!closure) return mod.walkLineage(files, question, tell);
        tell(closure, closure.codes.length, true);
        return closure;
      });
      made.done.catch(() => walks.delete(key)).finally(() => made.listeners.clear());
      walks.set(key, made);
      if (walks.size > WALKS_KEPT) walks.delete(walks.keys().next().value);
      entry = made;
    }
    return entry;
  };

  /**
   * A whole lineage of every kind (the lineage view's question) from the start's closure file: one read instead of a
   * round trip per step. Null when the question is another, the snapshot has no closure files (one built before them:
   * the host answers 404, or 403 for some object stores), or the entry says the lineage is too long to be stored
   * there: then the shards are walked. The entry is the walk's answer (the build walked it with the same code), so the
   * answer is the same either way.
   */
  async function closureOf(mod, files, question) {
    if (question.depth !== null || question.kinds !== null) return null;
    const start = mod.lineageCode(question.id);
    const shardId = mod.lineageShardId(mod.lineageNumber(start));
    if (!files.index.shards[question.direction].some((s) => s.id === shardId)) return null;
    const bytes = await closureBytes(mod.lineageClosurePath(question.direction, shardId), start % 1000);
    if (bytes === null) return null;
    const entry = mod.decodeLineageClosure(bytes, start, files.index.origins.length);
    if (entry === null || entry === 'walk') return null;
    return { known: true, ...entry };
  }

  async function lineage(input) {
    const id = String(input.id).trim().toUpperCase();
    const question = { id, direction: input.direction, depth: input.depth, kinds: input.kinds };
    const { mod, files } = await open();
    const walk = files ? await walkOf(mod, files, question).done : null;
    if (!walk?.known && !(id.startsWith('K') && (await record(id)))) throw new LineageNotFound(id);
    const w = walk ?? { codes: [], depths: [], vias: [], origins: [], infos: [], cycles: [] };
    const origins = files?.index.origins ?? [];
    const whole = shapeOf(mod, origins, w, input);
    const items = await itemsOf(mod, origins, w, whole.from, whole.to);
    return { data: { items, ...whole.data }, page: { itemsReturned: items.length, ...whole.page } };
  }

  /**
   * An answer's page of a walk, but for its items: where the page starts and ends in the walk, the counts and cycles
   * of the whole walk, the total, and the cursor of the next page.
   */
  function shapeOf(mod, origins, w, input) {
    // The page's own cursor: the last device returned, as the service's cursor names it (unsigned: it never leaves the page).
    const after = input.cursor ? JSON.parse(input.cursor) : null;
    const from = after ? mod.positionAfter(w, after.d, mod.lineageCode(after.a)) : 0;
    const to = Math.min(w.codes.length, from + input.limit);
    const { byDepth, byYear } = mod.lineageCounts(w);
    const cycles = w.cycles.map((c) => ({ kNumber: mod.lineageNumber(c.code), via: mod.lineageNumber(c.via), kind: origins[c.origin]?.kind, source: origins[c.origin]?.source }));
    const hasNextPage = to < w.codes.length;
    const nextCursor = hasNextPage ? JSON.stringify({ d: w.depths[to - 1], a: mod.lineageNumber(w.codes[to - 1]) }) : null;
    return { from, to, data: { byDepth, byYear, cycles }, page: { total: w.codes.length, hasNextPage, nextCursor } };
  }

  /** The answer's devices from `from` to `to` of a walk (read at once: a running walk goes on), with their records. */
  async function itemsOf(mod, origins, w, from, to) {
    const numbers = [];
    const entries = [];
    for (let at = from; at < to; at++) {
      const origin = origins[w.origins[at]];
      numbers.push(mod.lineageNumber(w.codes[at]));
      entries.push({ depth: w.depths[at], via: mod.lineageNumber(w.vias[at]), kind: origin?.kind, source: origin?.source, hasRecord: (w.infos[at] & mod.HAS_RECORD) !== 0 });
    }
    // A view reading these devices' names asks for them first: their records would hold the link up ahead of them.
    await nameReads.get(numbers.filter((k, i) => entries[i].hasRecord).join(' '))?.asked;
    return Promise.all(numbers.map((k, i) => (entries[i].hasRecord ? record(k) : null))).then((records) =>
      numbers.map((kNumber, i) => ({ kNumber, depth: entries[i].depth, via: entries[i].via, kind: entries[i].kind, source: entries[i].source, record: records[i] ?? null })),
    );
  }

  /**
   * The first page of a whole lineage (`input.cursor` null) as `lineage(input)` answers it, telling `onPart` meanwhile,
   * as the walk's levels are done, what is known final of it: `{ items, known, depth, complete }`, the page's first
   * devices, how many devices are known (all those up to `depth` steps), the deepest step known, and whether that is
   * the whole lineage (read whole from a closure file: then `whole` is the answer but for its records, which follow
   * with the answer itself). Then, when the page's devices are named before their records are read, `{ names }`: a
   * Map from number to device name. Each device told is the answer's,
   * but for its record, not read yet (`record: undefined`): the lineage files give its decision year and whether the
   * snapshot has its record (`year`, `hasRecord`), so that the records are read after the walk, not in its way.
   */
  lineage.progressive = async (input, onPart) => {
    const id = String(input.id).trim().toUpperCase();
    const question = { id, direction: input.direction, depth: input.depth, kinds: input.kinds };
    const answer = lineage(input);
    if (input.cursor !== null) return answer;
    const { mod, files } = await open();
    if (!files) return answer;
    const entry = walkOf(mod, files, question);
    const origins = files.index.origins;
    const listener = (w, known, complete) => {
      const items = [];
      for (let at = 0; at < Math.min(known, input.limit); at++) {
        const origin = origins[w.origins[at]];
        const info = w.infos[at];
        items.push({ kNumber: mod.lineageNumber(w.codes[at]), depth: w.depths[at], via: mod.lineageNumber(w.vias[at]), kind: origin?.kind, source: origin?.source, record: undefined, year: info & ~mod.HAS_RECORD || null, hasRecord: (info & mod.HAS_RECORD) !== 0 });
      }
      // The whole lineage is known (from a closure file): the answer but for its records. The page's records are
      // asked for before it is drawn, so that drawing it (slow on a phone) does not hold them back.
      // Their names are asked for first (two small requests), then their records, which the link takes far longer to
      // bring: asked for once the names' last request is on its way, so that they queue behind it.
      let whole = null;
      let names = null;
      if (complete) {
        const read = namesOf(items.filter((item) => item.hasRecord).map((item) => item.kNumber));
        names = read.names;
        read.asked.then(() => {
          for (const item of items) if (item.hasRecord) record(item.kNumber).catch(() => {});
        });
        const shape = shapeOf(mod, origins, w, input);
        whole = { data: { items, ...shape.data }, page: { itemsReturned: items.length, ...shape.page } };
      }
      onPart({ items, known, depth: w.depths[known - 1] ?? 0, complete, whole });
      names?.then((named) => named.size && onPart({ names: named }));
    };
    if (entry.walk && entry.known > 0) listener(entry.walk, entry.known, entry.complete);
    entry.listeners.add(listener);
    try {
      return await answer;
    } finally {
      entry.listeners.delete(listener);
    }
  };

  /**
   * Starts the whole walk of a lineage view's question (every kind, the whole chain) before the view asks for it, so
   * that a first view of a lineage reads its shards while the rest of the page loads; a failure is the view's to say.
   */
  lineage.prepare = (id, direction) => {
    const question = { id: String(id).trim().toUpperCase(), direction, depth: null, kinds: null };
    // The start's closure entry is read as soon as the file's tables are in, not once the engine and header are: the
    // file and the place in it follow from the number (its shard, and its last three digits).
    if (/^(K|DEN)\d{6}$/.test(question.id)) closureBytes(`lineage/closure/${direction}/${question.id.slice(0, -3)}.bin`, Number(question.id.slice(-3))).catch(() => {});
    open().then(({ mod, files }) => files && walkOf(mod, files, question).done).catch(() => {});
  };
  return lineage;
}
