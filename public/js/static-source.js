// Static mode: no server, only the snapshot's files from any static host or CDN. Search runs the API's own engine
// (src/search, bundled as search-engine.js) over the snapshot's own search index, so totals, order and facet counts
// are the API's by construction; records and classifications come from the snapshot's shards.
import { capsOf, freshnessOf, searchInput } from './state.js';
import { fetchJson, readSnapshotHead } from './snapshot-head.js';

/**
 * The largest search index the page downloads (its parts, uncompressed). Above it (about 600,000 clearances) the
 * page falls back to the snapshot's Pagefind index, which splits by receipt year and covers the newest clearances.
 */
export const ENGINE_MAX_BYTES = 48 * 1024 * 1024;

/** Records a static CSV export fetches at most: each needs its shard, about 12 KB compressed per 100 records. */
export const STATIC_EXPORT_LIMIT = 5_000;

/** The search index's header, or null when the snapshot has none (or one too large for a browser). */
export async function engineHeader(snapshotBase) {
  const header = await fetchJson(new URL('search/index.json', snapshotBase).href).catch(() => null);
  if (!header || typeof header.blobBytes !== 'number' || header.blobBytes > ENGINE_MAX_BYTES) return null;
  return header;
}

/**
 * One part of the search index. The build writes a gzip copy beside each part (`part-000.bin.gz`, 45% of the
 * bytes); a host that serves files as they are sends binary files uncompressed, so the page asks for the copy and
 * inflates it itself, and falls back to the part for a snapshot without copies. A host that sends the copy with
 * `Content-Encoding: gzip` has the browser inflate it already, hence the check of gzip's magic bytes.
 */
async function indexPart(url, path) {
  const failed = (res) => new Error(`The file ${path} of the search index could not be loaded (HTTP ${res.status}).`);
  if (typeof DecompressionStream === 'function') {
    const res = await fetch(url(`${path}.gz`));
    if (res.ok) {
      const bytes = new Uint8Array(await res.arrayBuffer());
      if (bytes[0] !== 0x1f || bytes[1] !== 0x8b) return bytes;
      return new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))).arrayBuffer());
    }
    if (res.status !== 404) throw failed(res);
  }
  const res = await fetch(url(path));
  if (!res.ok) throw failed(res);
  return new Uint8Array(await res.arrayBuffer());
}

export function staticSource({ snapshotBase, header }) {
  const url = (path) => new URL(path, snapshotBase).href;
  const shards = new Map();
  const shard = (path) => {
    if (!shards.has(path)) shards.set(path, fetchJson(url(path)).catch((err) => (shards.delete(path), Promise.reject(err))));
    return shards.get(path);
  };
  const record = async (kNumber) => (await shard(`records/${kNumber.slice(0, 5)}.json`))?.find((r) => r.kNumber === kNumber) ?? null;

  let engine = null;
  const loadEngine = () => {
    engine ??= (async () => {
      const [mod, parts] = await Promise.all([
        import('./search-engine.js'),
        Promise.all(header.parts.map((p) => indexPart(url, p.path))),
      ]);
      const files = new Map([['search/index.json', new TextEncoder().encode(JSON.stringify(header))], ...header.parts.map((p, i) => [p.path, parts[i]])]);
      const index = await mod.loadSearchIndex(async (path) => {
        const bytes = files.get(path);
        if (!bytes) throw new Error(`${path} is not part of the search index`);
        return bytes;
      });
      return { mod, index };
    })().catch((err) => ((engine = null), Promise.reject(err)));
    return engine;
  };

  let metaCache = null;
  const meta = () => (metaCache ??= fetchJson(url('meta.json')).catch((err) => ((metaCache = null), Promise.reject(err))));

  /** What the engine answers beyond the contract's fields; the same as the API's meta, since it is the same code. */
  let caps = { sorts: [], decided: false, qualifiers: [], facetFields: [], exportUrl: null };

  const itemsOf = async (kNumbers, signal) => {
    const records = await Promise.all(kNumbers.map(record));
    signal?.throwIfAborted();
    return records.filter(Boolean);
  };

  return {
    mode: 'static',
    engine: 'index',
    get caps() {
      return caps;
    },

    /** Reads meta.json once for what the engine supports (the snapshot's build wrote it from the same code). */
    async init() {
      const m = await meta().catch(() => null);
      // The same engine as the service's, so the same extensions; a static host has no export URL (exportRecords below).
      caps = { ...capsOf(m), exportUrl: null };
    },

    async about() {
      const [m, head] = await Promise.all([meta(), readSnapshotHead(snapshotBase).catch(() => null)]);
      return {
        title: m?.title ?? 'FDA 510(k) Premarket Notifications',
        totalRecords: m?.totalRecords ?? null,
        indexedRecords: m?.totalRecords ?? null,
        generatedAt: head?.generatedAt ?? null,
        lastSuccessfulSyncAt: head?.lastSuccessfulSyncAt ?? null,
        decisionDateMax: head?.decisionDateMax ?? null,
        decisionDateMin: head?.decisionDateMin ?? null,
        freshness: freshnessOf(head?.lastSuccessfulSyncAt ?? null, Date.now()),
        freshnessEvidence: head?.lastSuccessfulSyncAt ? null : 'no sync recorded; built from files',
        availability: 'available',
        warnings: [],
        sources: head?.sources ?? [],
      };
    },

    async search(state, signal) {
      const { mod, index } = await loadEngine();
      signal?.throwIfAborted();
      const outcome = mod.runSearch(index, searchInput(state, caps));
      return { items: await itemsOf(outcome.kNumbers, signal), total: outcome.total, facets: outcome.facets, stats: outcome.stats ?? null, warnings: [] };
    },

    /** Decision years over the whole snapshot, ascending, straight from the index's year column (no search needed). */
    async yearCounts() {
      const { mod, index } = await loadEngine();
      return mod.yearCounts(index);
    },

    /**
     * Every match in the page's order, as records, up to STATIC_EXPORT_LIMIT: each record is read from its shard,
     * so a static host cannot hand over a large result set in one file as the API does.
     */
    async exportRecords(state, onProgress) {
      const { mod, index } = await loadEngine();
      const { facets: _counted, stats: _figures, ...input } = searchInput(state, caps);
      const first = mod.runSearch(index, { ...input, page: 1, pageSize: 1 });
      const wanted = Math.min(first.total, STATIC_EXPORT_LIMIT);
      const all = wanted === 0 ? [] : mod.runSearch(index, { ...input, page: 1, pageSize: wanted }).kNumbers;
      const out = [];
      for (let i = 0; i < all.length; i += 200) {
        out.push(...(await itemsOf(all.slice(i, i + 200))));
        onProgress?.(out.length, wanted);
      }
      // The snapshot's id names the file, as the server's export names it.
      const head = await readSnapshotHead(snapshotBase).catch(() => null);
      return { records: out, total: first.total, snapshotId: head?.snapshotId ?? null };
    },

    record,

    async classification(productCode) {
      const entries = await shard(`product-codes/${productCode.slice(0, 1)}.json`);
      return entries?.find((e) => e.productCode === productCode) ?? null;
    },

  };
}
