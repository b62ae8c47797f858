// Static mode: no server, only the snapshot's files from any static host or CDN. Search runs the API's own engine
// (src/search, bundled as search-engine.js) over the snapshot's own search index, so totals, order and facet counts
// are the API's by construction; records and classifications come from the snapshot's shards.
import { capsOf, downloadsOf, freshnessOf, searchInput } from './state.js';
import { staticLineage } from './lineage-source.js';
import { fetchJson, readSnapshotHead } from './snapshot-head.js';

/**
 * Snapshots built before the chunked index: the largest whole index the page downloads (its parts, uncompressed).
 * Above it (about 600,000 clearances) such a snapshot falls back to its Pagefind index, which those builds always wrote.
 */
export const ENGINE_MAX_BYTES = 48 * 1024 * 1024;

/** Records a static CSV export fetches at most: each needs its shard, about 12 KB compressed per 100 records. */
export const STATIC_EXPORT_LIMIT = 5_000;

/**
 * How the page searches this snapshot: its chunked index (`search/chunks.json`, read in parts, at any size), else its
 * whole index when small enough, else null (the page then uses Pagefind, if the snapshot has it: see hasPagefind).
 */
export async function engineHeader(snapshotBase, directoryRequest = null) {
  const directory = await (directoryRequest ?? fetchJson(new URL('search/chunks.json', snapshotBase).href)).catch(() => null);
  if (directory && directory.format === 'device-510k-search-chunks') return { chunks: directory };
  const header = await fetchJson(new URL('search/index.json', snapshotBase).href).catch(() => null);
  if (!header || typeof header.blobBytes !== 'number' || header.blobBytes > ENGINE_MAX_BYTES) return null;
  return header;
}

/**
 * Whether the snapshot has a Pagefind index: the list of its indexes (`pagefind/indexes.json`), or for a snapshot from
 * before that list, the one index's entry file. A build writes Pagefind only with --pagefind.
 */
export async function hasPagefind(snapshotBase) {
  for (const path of ['pagefind/indexes.json', 'pagefind/pagefind-entry.json']) {
    const res = await fetch(new URL(path, snapshotBase).href);
    if (res.ok) return true;
    // Hosts answer a missing file with 404, some (object stores) with 403.
    if (res.status !== 404 && res.status !== 403) throw new Error(`The file ${path} could not be loaded (HTTP ${res.status}).`);
  }
  return false;
}

/**
 * One file of the chunked index. Its name carries the start of the sha256 of its gzip bytes, and the directory the
 * start of the sha256 of the bytes inside (`inflated`), so whatever arrived is checked before anything reads it: gzip
 * bytes against the name, bytes a host inflated on the way (`Content-Encoding: gzip`) against the directory's hash.
 * Checked where the browser offers Web Crypto (secure contexts: https and localhost); a file that fails is refused.
 */
async function chunkFile(url, path, inflated, onBytes) {
  const res = await fetch(url(path));
  if (!res.ok) throw new Error(`The file ${path} of the search index could not be loaded (HTTP ${res.status}).`);
  return checkedChunk(path, inflated, await bodyBytes(res, onBytes));
}

/**
 * The bytes of chunk file `path` as the engine reads them (inflated), once checked: gzip bytes against the hash in
 * the name, other bytes against `inflated` (the directory's hash of the bytes inside; null for a snapshot built
 * before the directory carried it, whose inflated bytes cannot be checked and are refused).
 */
export async function checkedChunk(path, inflated, bytes) {
  const named = /-([0-9a-f]{20})\.bin\.gz$/.exec(path)?.[1] ?? null;
  const gzip = bytes[0] === 0x1f && bytes[1] === 0x8b;
  if (named !== null && globalThis.crypto?.subtle) {
    const want = gzip ? named : inflated;
    if (!want) throw new Error(`The file ${path} of the search index arrived inflated, and this snapshot's directory has no hash to check it by; serve its .gz files as they are.`);
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
    const hex = Array.from(digest.subarray(0, want.length / 2), (b) => b.toString(16).padStart(2, '0')).join('');
    if (hex !== want) throw new Error(`The file ${path} of the search index is damaged (its content does not match its name).`);
  }
  return gzipped(bytes, gzip);
}

/**
 * Every file the chunked index's directory names, each once: what the page may fetch of it, and so what it must be
 * able to check (its size for progress, the hash of its bytes inside for a host that inflates it on the way).
 */
export function chunkFilesOf(d) {
  const p = d.predicates;
  const all = [
    ...Object.values(d.files),
    ...d.termChunks.map((c) => c.file),
    ...d.codeChunks.map((c) => c.file),
    ...d.kBlocks,
    ...(d.words?.chunks.map((c) => c.file) ?? []),
    ...(p ? [...p.chunks.map((c) => c.file), p.codes, p.docPreds, p.docEdgeKinds] : []),
  ];
  return [...new Map(all.map((f) => [f.path, f])).values()];
}

/** Bytes inflated when they are gzip. */
async function gzipped(bytes, gzip) {
  if (!gzip) return bytes;
  return new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))).arrayBuffer());
}

/** A response's body, telling `onBytes` of each piece as it arrives (for the page's progress). */
async function bodyBytes(res, onBytes) {
  if (!res.body) return new Uint8Array(await res.arrayBuffer());
  const pieces = [];
  let length = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    pieces.push(value);
    length += value.byteLength;
    onBytes(value.byteLength);
  }
  if (pieces.length === 1) return pieces[0];
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
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

/**
 * The answer with no query and no filter, from the chunked index's directory, when it holds this page and these
 * facet requests (the engine's ChunkedIndex answers the same from the same directory; this copy spares the first
 * visit the engine's download).
 */
function landingAnswer(directory, input) {
  const l = directory.landing;
  if (input.query.trim() !== '' || input.applicant !== null || input.productCode !== null || input.yearFrom !== null || input.yearTo !== null) return null;
  if (input.sort !== undefined && input.sort !== 'relevance' && input.sort !== 'decisionDate:desc') return null;
  if (JSON.stringify(input.facets ?? null) !== JSON.stringify(l.facets)) return null;
  const offset = (input.page - 1) * input.pageSize;
  const end = Math.min(offset + input.pageSize, directory.counts.docs);
  if (end > l.kNumbers.length) return null;
  return { total: directory.counts.docs, kNumbers: l.kNumbers.slice(offset, end), facets: structuredClone(l.facetCounts) };
}

/** A whole index loaded at once (a snapshot without chunks) behind the chunked index's interface. */
function wholeIndex(mod, index) {
  return {
    async firstPage(input) {
      const { facets: _f, ...rest } = input;
      const o = mod.runSearch(index, rest);
      return { total: o.total, kNumbers: o.kNumbers };
    },
    missing: () => [],
    async answer(input) {
      return mod.runSearch(index, input);
    },
    async spelling(input, total) {
      return mod.spellingOverIndex(index, input, total);
    },
    yearCounts: () => mod.yearCounts(index),
  };
}

/**
 * The snapshot's record shards and its lineage, which need nothing of the search index: a page opened on a lineage
 * starts its walk with them while the index's directory still loads (`staticSource`'s `started`), with the
 * responses of the lineage files it asked for already (staticLineage's `header` and `first`).
 */
export function recordsAndLineage(snapshotBase, { header = null, first = null } = {}) {
  const url = (path) => new URL(path, snapshotBase).href;
  const shards = new Map();
  const shard = (path) => {
    if (!shards.has(path)) shards.set(path, fetchJson(url(path)).catch((err) => (shards.delete(path), Promise.reject(err))));
    return shards.get(path);
  };
  const record = async (kNumber) => (await shard(`records/${kNumber.slice(0, 5)}.json`))?.find((r) => r.kNumber === kNumber) ?? null;
  return { shard, record, lineage: staticLineage({ url, record, header, first }) };
}

/**
 * Static mode's source over the snapshot's own index: `header` is the index's directory (engineHeader's answer), or
 * null with `later`, which reads it when a search first needs it. A view that reads no index (a lineage's) is then
 * drawn before the directory takes a phone's link.
 */
export function staticSource({ snapshotBase, header: given = null, later = null, meta: metaRequest = null, started = null }) {
  const url = (path) => new URL(path, snapshotBase).href;
  const { shard, record, lineage } = started ?? recordsAndLineage(snapshotBase);

  // Bytes received of each file of the chunked index, for progress; the directory says how many each has.
  const received = new Map();
  const sizes = new Map();
  // Each file's hash of the bytes inside, for one a host inflates on the way (checkedChunk).
  const inflatedOf = new Map();
  let header = null;
  const take = (h) => {
    header = h;
    for (const f of h.chunks ? chunkFilesOf(h.chunks) : []) {
      sizes.set(f.path, f.bytes);
      inflatedOf.set(f.path, typeof f.inflated === 'string' ? f.inflated : null);
    }
    return h;
  };
  if (given) take(given);
  else if (!later) throw new Error('staticSource needs the index header or a way to read it (`later`)');
  let reading = null;
  /** The index's header, read once when first needed (and again after a failure). */
  const headerReady = () =>
    header
      ? Promise.resolve(header)
      : (reading ??= later()
          .then((h) => {
            if (!h) throw new Error('This snapshot has no search index the page can read (search/chunks.json).');
            return take(h);
          })
          .catch((err) => ((reading = null), Promise.reject(err))));
  const watchers = new Set();
  const fetchChunk = (path) =>
    chunkFile(url, path, inflatedOf.get(path) ?? null, (n) => {
      received.set(path, (received.get(path) ?? 0) + n);
      for (const w of watchers) w();
    });
  /**
   * Runs `work` (which loads `paths`), telling `onProgress(loaded, expected)` the bytes of those files received so
   * far and their sum in the directory, as pieces arrive.
   */
  const withProgress = (paths, work, onProgress) => {
    if (!onProgress || paths.length === 0) return work();
    const expected = paths.reduce((n, p) => n + (sizes.get(p) ?? 0), 0);
    // A host that inflates a file on the way delivers more than its size: a file counts at most its size.
    const tick = () => onProgress(paths.reduce((n, p) => n + Math.min(received.get(p) ?? 0, sizes.get(p) ?? 0), 0), expected);
    watchers.add(tick);
    tick();
    return work().finally(() => watchers.delete(tick));
  };

  // Files asked for before the engine runs (prefetch below), each handed to the engine once.
  const early = new Map();
  const readChunk = (path) => {
    const got = early.get(path);
    if (!got) return fetchChunk(path);
    early.delete(path);
    return got.catch(() => fetchChunk(path));
  };

  /**
   * The facet counts of `req`, each facet counted as soon as the files it reads are in: the files are asked for at
   * once, smallest first (a phone's link delivers them in that order), and `onSome` is told the facets counted so far,
   * in the order asked for, after each group that shares its files.
   */
  const countInTurn = async (sparse, req, onSome) => {
    const asked = req.facets ?? [];
    if (!onSome || asked.length < 2) return sparse.answer(req);
    const bytesOf = (paths) => paths.reduce((n, p) => n + (sizes.get(p) ?? 0), 0);
    const groups = new Map();
    for (const f of asked) {
      const paths = sparse.missing({ ...req, facets: [f] }, true).sort();
      const key = paths.join(' ');
      if (!groups.has(key)) groups.set(key, { paths, facets: [] });
      groups.get(key).facets.push(f);
    }
    const files = [...new Set([...groups.values()].flatMap((g) => g.paths))].sort((a, b) => (sizes.get(a) ?? 0) - (sizes.get(b) ?? 0));
    for (const path of files) sparse.load([path]).catch(() => {});
    const counted = new Map();
    const ordered = [...groups.values()].sort((a, b) => bytesOf(a.paths) - bytesOf(b.paths));
    // One group at a time, smallest first, as its files arrive: each group runs the engine once more.
    let outcome = null;
    for (const g of ordered) {
      outcome = await sparse.answer({ ...req, facets: g.facets });
      g.facets.forEach((f, i) => counted.set(f, outcome.facets[i]));
      if (counted.size < asked.length) onSome(asked.filter((f) => counted.has(f)).map((f) => counted.get(f)));
    }
    return { ...outcome, facets: asked.map((f) => counted.get(f)) };
  };

  let engine = null;
  const loadEngine = () => {
    engine ??= (async () => {
      const [mod] = await Promise.all([import('./search-engine.js'), headerReady()]);
      if (header.chunks) return { mod, sparse: new mod.ChunkedIndex(mod.parseChunkDirectory(header.chunks), readChunk) };
      const parts = await Promise.all(header.parts.map((p) => indexPart(url, p.path)));
      const files = new Map([['search/index.json', new TextEncoder().encode(JSON.stringify(header))], ...header.parts.map((p, i) => [p.path, parts[i]])]);
      const index = await mod.loadSearchIndex(async (path) => {
        const bytes = files.get(path);
        if (!bytes) throw new Error(`${path} is not part of the search index`);
        return bytes;
      });
      return { mod, sparse: wholeIndex(mod, index) };
    })().catch((err) => ((engine = null), Promise.reject(err)));
    return engine;
  };

  // meta.json, asked for already by the caller when it passes the request.
  let metaCache = metaRequest?.catch((err) => ((metaCache = null), Promise.reject(err))) ?? null;
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

    /**
     * Asks for the files a first search plainly needs while the engine itself downloads and starts: the dictionaries,
     * the chunks of its words and the newest K number block. Only for plain words (letters, digits, spaces): what the
     * engine's parser would read otherwise is left to it. A guess that misses costs bytes, never a wrong answer.
     */
    prefetch(state) {
      const dir = header?.chunks;
      const q = state.q.trim();
      if (!dir || q === '' || !/^[A-Za-z0-9 ]+$/.test(q) || /\b(OR|AND|NOT)\b/.test(q) || state.record) return;
      const words = [...new Set(q.toLowerCase().split(/ +/))];
      const paths = new Set([dir.files.dicts.path]);
      if (state.page === 1 && (!state.sort || state.sort === 'relevance' || state.sort === 'decisionDate:desc')) paths.add(dir.kBlocks[0].path);
      for (const w of words) {
        for (const c of dir.termChunks) {
          if (c.last < w) continue;
          if (c.first > w && !c.first.startsWith(w)) break;
          paths.add(c.file.path);
        }
      }
      for (const path of paths) {
        const got = fetchChunk(path);
        got.catch(() => {});
        early.set(path, got);
      }
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
        downloads: downloadsOf(m, snapshotBase),
      };
    },

    /**
     * The first page and the exact total as soon as the words' chunks and the page's K numbers are in; the facet
     * counts follow (`loadFacets`) once the columns they count are, unless those are loaded already. `onProgress`
     * (and the argument of `loadFacets` and `loadStats`) is told the bytes received of the files each step reads.
     */
    async search(state, signal, onProgress = null) {
      await headerReady();
      signal?.throwIfAborted();
      const input = searchInput(state, caps);
      const landing = header.chunks ? landingAnswer(header.chunks, input) : null;
      if (landing) {
        // The first visit: the directory holds its answer; the engine loads after the page's records (not ahead of
        // them on a phone's link), for the next search.
        const items = await itemsOf(landing.kNumbers, signal).finally(() => void loadEngine().catch(() => {}));
        return { items, total: landing.total, facets: landing.facets, loadFacets: null, warnings: [] };
      }
      const { sparse } = await loadEngine();
      signal?.throwIfAborted();
      // Large files the first page reads (a phrase's whole forward word lists, a column a qualifier or sort reads)
      // show their progress; the few files a plain word reaches are small.
      const first = await withProgress(sparse.missing(input, false), () => sparse.firstPage(input), onProgress);
      signal?.throwIfAborted();
      const items = await itemsOf(first.kNumbers, signal);
      const ready = sparse.missing(input, true).length === 0;
      if (ready) {
        const outcome = await sparse.answer(input);
        return { items, total: first.total, facets: outcome.facets, stats: outcome.stats ?? null, warnings: [] };
      }
      // The counts and the review figures need columns not loaded yet: they follow the first page, each reading only
      // its own columns (the review figures no receipt dates for the counts, nor the counts' columns), the counts first
      // once they are asked for, so that the two do not share a phone's link.
      const facetsReq = { ...input, stats: false };
      const statsReq = { ...input, facets: [], stats: true };
      let counted = null;
      let figured = null;
      const loadFacets = (onProgress, onSome = null) =>
        (counted ??= withProgress(sparse.missing(facetsReq, true), () => countInTurn(sparse, facetsReq, onSome), onProgress).catch((err) => ((counted = null), Promise.reject(err)))).then(
          (o) => o.facets,
        );
      const loadStats = (onProgress) =>
        (figured ??= (counted ?? Promise.resolve())
          .catch(() => {})
          .then(() => withProgress(sparse.missing(statsReq, true), () => sparse.answer(statsReq), onProgress))
          .catch((err) => ((figured = null), Promise.reject(err)))).then((o) => o.stats ?? null);
      return { items, total: first.total, facets: null, stats: null, loadFacets, loadStats: input.stats ? loadStats : null, warnings: [] };
    },

    /**
     * "Did you mean", by the same engine as the API's `spelling` input: the word lists of the first letters of the
     * words to correct (a few small files), then each corrected query counted as a search. `total` is the search's own.
     */
    async spelling(state, total) {
      const { sparse } = await loadEngine();
      const { facets: _f, stats: _s, sort: _o, ...input } = searchInput(state, caps);
      return sparse.spelling({ ...input, page: 1, pageSize: 1 }, total);
    },

    /** Decision years over the whole snapshot, ascending (the chunked index's directory lists them). */
    async yearCounts() {
      await headerReady();
      if (header.chunks) return header.chunks.years.map((y) => ({ ...y }));
      const { sparse } = await loadEngine();
      return sparse.yearCounts();
    },

    /**
     * Every match in the page's order, as records, up to STATIC_EXPORT_LIMIT: each record is read from its shard,
     * so a static host cannot hand over a large result set in one file as the API does.
     */
    async exportRecords(state, onProgress) {
      const { sparse } = await loadEngine();
      const { facets: _counted, stats: _figures, ...input } = searchInput(state, caps);
      const first = await sparse.firstPage({ ...input, page: 1, pageSize: 1 });
      const wanted = Math.min(first.total, STATIC_EXPORT_LIMIT);
      const all = wanted === 0 ? [] : (await sparse.firstPage({ ...input, page: 1, pageSize: wanted })).kNumbers;
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

    /** A page of a lineage, answered in the page from the snapshot's lineage files (lineage-source.js). */
    lineage,

    async classification(productCode) {
      const entries = await shard(`product-codes/${productCode.slice(0, 1)}.json`);
      return entries?.find((e) => e.productCode === productCode) ?? null;
    },

  };
}
